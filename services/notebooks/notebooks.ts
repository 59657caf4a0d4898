/**
 * The notebooks themselves: create, delete, rename, fetch, list and count, each in the caller's
 * sight (notebooks.repo.ts, visibleWhere) and with its audit entry in the owner's place.
 */
import { diff, type AuditChange } from "../../lib/audit";
import { DomainError, isDatabaseUnavailable, isUniqueViolation } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import type { Page } from "../../lib/paging";
import { fsDetail } from "./files";
import { DETAIL, MSG } from "./messages";
import { nameProblem, relativePath, untitledName, withExtension } from "./names";
import * as notebooks from "./notebooks.repo";
import type { NotebookRow } from "./notebooks.repo";
import { ownerSince } from "./owners";
import type { NotebooksPort } from "./port";
import { notebookView } from "./views";

export const unique = (ids: string[]): string[] => [...new Set(ids)];

/** A notebook's audit entry, in its owner's place. */
export const notebookChange = (
  action: AuditChange["action"],
  nb: Pick<NotebookRow, "notebook_id" | "site_id" | "plant_id">,
  changes: AuditChange["changes"],
): AuditChange => ({
  action,
  entity_type: "notebook",
  entity_id: nb.notebook_id,
  site_id: nb.site_id,
  // A site admin's notebooks are of its whole site (its plant is `*`).
  plant_id: nb.plant_id === "*" ? null : nb.plant_id,
  changes,
});

/** The notebooks of the ids, all of them visible to the caller; the first that is not answers with `fail`. */
export async function visibleOrFail(port: NotebooksPort, ids: string[], fail: (id: string) => DomainError): Promise<NotebookRow[]> {
  const valid = ids.filter(isId);
  const rows = await notebooks.findVisible(port.db, port.user, valid);
  const found = new Set(rows.map((r) => r.notebook_id));
  const missing = ids.find((id) => !found.has(id));
  if (missing !== undefined) throw fail(missing);
  return rows;
}

/** The notebook of the id when the caller sees it (a malformed id is nobody's). */
export async function visibleNotebook(port: NotebooksPort, id: string): Promise<notebooks.NotebookWithRuns | undefined> {
  return isId(id) ? notebooks.getVisible(port.db, port.user, id) : undefined;
}

/** Op 58: a new empty notebook, named like Jupyter names them. */
export async function createNotebook(port: NotebooksPort) {
  const user = port.user;
  const owner_since = await ownerSince(port, user.username);
  // Names taken on disk or in the table are skipped; the unique index and the exclusive
  // create decide between two creates racing for the same name.
  for (let attempt = 0; attempt < 20; attempt++) {
    let name: string;
    try {
      const taken = new Set([...(await port.files.namesOnDisk(user.username)), ...(await notebooks.namesOf(port.db, user.username))]);
      name = untitledName(taken);
      await port.files.createEmpty(user.username, name);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw new DomainError(400, MSG.createFileError(fsDetail(err)));
    }
    const notebook_id = newId();
    const row = { notebook_id, owner: user.username, owner_since, site_id: user.site_id, plant_id: user.plant_id, notebook_name: name, now: Date.now() };
    try {
      await port.audited(notebookChange("create", row, diff(null, { owner: row.owner, notebook_name: name })), (q) => notebooks.insertNotebook(q, row));
    } catch (err) {
      await port.files.remove(user.username, name).catch(() => undefined);
      if (isUniqueViolation(err)) continue;
      throw err;
    }
    return { notebook_id, username: user.username, notebook_name: name, path: relativePath(user.username, name) };
  }
  throw new DomainError(400, MSG.createFileError("No free Untitled name"));
}

/** Op 59: deletes the caller's notebooks among the ids; none deleted is the spec's envelope 200. */
export async function removeNotebooks(port: NotebooksPort, nbk_ids: string[]) {
  const ids = unique(nbk_ids).filter(isId);
  if (nbk_ids.length === 0) throw new DomainError(400, MSG.idsRequired, "nbk_ids");
  let deleted = 0;
  for (const row of await notebooks.findVisible(port.db, port.user, ids)) {
    try {
      await port.files.remove(row.owner, row.notebook_name);
    } catch (err) {
      throw new DomainError(400, MSG.deleteFileError(fsDetail(err)));
    }
    try {
      deleted += await port.audited(
        (n: number) => (n > 0 ? notebookChange("delete", row, diff({ owner: row.owner, notebook_name: row.notebook_name }, null)) : null),
        (q) => notebooks.deleteNotebook(q, row.notebook_id),
      );
    } catch (err) {
      // The database away: 503 (lib/errors.ts), which the caller may retry.
      if (isDatabaseUnavailable(err)) throw err;
      port.logger.error("notebook deletion:", err);
      throw new DomainError(400, MSG.deleteError("The notebook record could not be deleted"));
    }
  }
  if (deleted === 0) throw new DomainError(200, MSG.noneDeleted);
  return MSG.success;
}

/** Op 60: the notebook's file and row renamed together; `.ipynb` added when missing. */
export async function renameNotebook(port: NotebooksPort, params: { notebook_id?: string; notebook_name?: string | null }) {
  const { notebook_id, notebook_name } = params;
  if (!notebook_id) throw new DomainError(400, MSG.idMissing, "notebook_id");
  const row = await visibleNotebook(port, notebook_id);
  if (!row) throw new DomainError(400, MSG.notFound);
  // null reads as left out (docs/architecture.md, Decisions): the validator lets it through an optional field.
  if (notebook_name === undefined || notebook_name === null || notebook_name.trim() === "") {
    throw new DomainError(400, MSG.missingNewName, "notebook_name");
  }
  const name = withExtension(notebook_name);
  if (nameProblem(name)) throw new DomainError(400, MSG.invalidInput("notebook_name"), "notebook_name");
  // Read without the row's lock, two renames undid each other's (notebooks.renameLocked).
  const renameFailed = (detail: string) => new DomainError(404, MSG.renameFileError(detail));
  let outcome;
  try {
    outcome = await notebooks.renameLocked(port.db, { id: row.notebook_id, name, by: port.user.username, now: Date.now() }, async (current, tx) => {
      await port.stageAudit(tx, notebookChange("rename", row, { notebook_name: [current.notebook_name, name] }));
      try {
        await port.files.rename(current.owner, current.notebook_name, name);
      } catch (err) {
        throw renameFailed((err as NodeJS.ErrnoException).code === "EEXIST" ? DETAIL.nameExists(name) : fsDetail(err));
      }
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw renameFailed(DETAIL.nameExists(name));
    throw err;
  }
  if (outcome === "missing") throw new DomainError(400, MSG.notFound);
  return MSG.renamed;
}

/** Op 61. */
export async function getNotebook(port: NotebooksPort, notebook_id: string) {
  const row = await visibleNotebook(port, notebook_id);
  if (!row) throw new DomainError(400, MSG.invalidId);
  return notebookView(row);
}

/** Op 62: every notebook the caller sees, oldest first. */
export async function listNotebooks(port: NotebooksPort, page: Page) {
  const { rows, total } = await notebooks.listVisible(port.db, port.user, page);
  port.setTotal(total);
  const now = Date.now();
  return rows.map((row) => notebookView(row, now));
}

/** Op 63: the notebooks the caller sees, in all and by status. */
export async function countNotebooks(port: NotebooksPort) {
  const { total, scheduled } = await notebooks.countVisible(port.db, port.user);
  return { "Total Notebooks": total, "Not Scheduled": total - scheduled, Scheduled: scheduled };
}
