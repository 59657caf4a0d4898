/** The notebooks themselves: create, delete, rename, fetch, list and count. */
import type { Context } from "moleculer";
import { auditedWrite, diff, stageAudit } from "../../lib/audit";
import type { RequestMeta } from "../../lib/contract";
import { DomainError, isDatabaseUnavailable, isUniqueViolation } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { PAGE_FIELDS, PAGE_PARAMS, setTotal } from "../../lib/paging";
import { MAX_TEXT } from "../../lib/validation";
import { idList, notebookChange, text, unique, type NotebooksActions } from "./context";
import { fsDetail } from "./files";
import { DETAIL, MSG } from "./messages";
import { nameProblem, relativePath, untitledName, withExtension } from "./names";
import { CREATED_EXAMPLE, NBK_IDS_FIELD, NOTEBOOK_EXAMPLE, NOTEBOOK_ID_FIELD } from "./openapi";
import * as repo from "./repo";

/** Unknown query keys on list and count operations (contract: HTTP). */
const listMessages = { unknown: MSG.excessInputs };

export const notebookActions: NotebooksActions = {
  /** A new empty notebook, named like Jupyter names them. */
  create: {
    http: {
      op: 58,
      routes: ["POST /_notebooks/notebooks"],
      group: "notebooks",
      summary: "Create a notebook",
      description: "An empty notebook in the caller's folder, named as Jupyter names new ones: Untitled.ipynb, then Untitled1.ipynb, … No body.",
      answer: { schema: "$NotebookCreated", example: CREATED_EXAMPLE },
      errors: [[400, MSG.createFileError("<detail>")], [400, MSG.ownershipError("<detail>")]],
    },
    params: {},
    async handler(ctx: Context<unknown, RequestMeta>) {
      const user = ctx.meta.user;
      const owner_since = await this.ownerSince(user.username);
      // Names taken on disk or in the table are skipped; the unique index and the exclusive
      // create decide between two creates racing for the same name.
      for (let attempt = 0; attempt < 20; attempt++) {
        let name: string;
        try {
          const taken = new Set([...(await this.files.namesOnDisk(user.username)), ...(await repo.namesOf(this.db, user.username))]);
          name = untitledName(taken);
          await this.files.createEmpty(user.username, name);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
          throw new DomainError(400, MSG.createFileError(fsDetail(err)));
        }
        const notebook_id = newId();
        const row = { notebook_id, owner: user.username, owner_since, site_id: user.site_id, plant_id: user.plant_id, notebook_name: name, now: Date.now() };
        try {
          await auditedWrite(this.db, this.streams, ctx, notebookChange("create", row, diff(null, { owner: row.owner, notebook_name: name })), (q) =>
            repo.insertNotebook(q, row),
          );
        } catch (err) {
          await this.files.remove(user.username, name).catch(() => undefined);
          if (isUniqueViolation(err)) continue;
          throw err;
        }
        return { notebook_id, username: user.username, notebook_name: name, path: relativePath(user.username, name) };
      }
      throw new DomainError(400, MSG.createFileError("No free Untitled name"));
    },
  },

  /** Deletes the caller's notebooks among the ids; none deleted is the spec's envelope 200. */
  remove: {
    http: {
      op: 59,
      routes: ["DELETE /_notebooks/notebooks"],
      group: "notebooks",
      summary: "Delete notebooks",
      description: "Deletes each listed notebook the caller may change, its file and executed copy included; ids of others are passed over.",
      fields: { nbk_ids: NBK_IDS_FIELD },
      answer: { text: MSG.success },
      errors: [
        [400, MSG.idsRequired],
        [400, MSG.deleteFileError("<detail>")],
        [400, MSG.deleteError("<detail>")],
        [200, MSG.noneDeleted],
      ],
    },
    params: {
      nbk_ids: idList,
      $$messages: { insufficient: MSG.idsRequired, invalid: MSG.idsRequired, unknown: MSG.invalidInput },
    },
    async handler(ctx: Context<{ nbk_ids: string[] }, RequestMeta>) {
      const ids = unique(ctx.params.nbk_ids).filter(isId);
      if (ctx.params.nbk_ids.length === 0) throw new DomainError(400, MSG.idsRequired, "nbk_ids");
      let deleted = 0;
      for (const row of await repo.findVisible(this.db, ctx.meta.user, ids)) {
        try {
          await this.files.remove(row.owner, row.notebook_name);
        } catch (err) {
          throw new DomainError(400, MSG.deleteFileError(fsDetail(err)));
        }
        try {
          deleted += await auditedWrite(
            this.db,
            this.streams,
            ctx,
            (n: number) => (n > 0 ? notebookChange("delete", row, diff({ owner: row.owner, notebook_name: row.notebook_name }, null)) : null),
            (q) => repo.deleteNotebook(q, row.notebook_id),
          );
        } catch (err) {
          // The database away: 503 (lib/errors.ts), which the caller may retry.
          if (isDatabaseUnavailable(err)) throw err;
          this.logger.error("notebook deletion:", err);
          throw new DomainError(400, MSG.deleteError("The notebook record could not be deleted"));
        }
      }
      if (deleted === 0) throw new DomainError(200, MSG.noneDeleted);
      return MSG.success;
    },
  },

  /** Body `{"notebook_name": "<new name>"}` (contract); `.ipynb` added when missing. */
  rename: {
    http: {
      op: 60,
      // Without the id, so that the spec's `Notebook ID is missing` is what it answers (not 405).
      routes: ["PUT /_notebooks/notebooks/:notebook_id", "PUT /_notebooks/notebooks"],
      group: "notebooks",
      summary: "Rename a notebook",
      description: "Renames the notebook's file; `.ipynb` is added when the new name lacks it.",
      fields: {
        notebook_id: NOTEBOOK_ID_FIELD,
        notebook_name: { required: true, description: "the new name, a plain file name; .ipynb is added when missing", example: "Bearing vibration" },
      },
      answer: { text: MSG.renamed },
      errors: [
        [400, MSG.idMissing],
        [400, MSG.notFound],
        [400, MSG.missingNewName],
        [400, MSG.invalidInput("notebook_name")],
        [404, MSG.renameFileError("<detail>")],
      ],
    },
    params: {
      notebook_id: { ...text, optional: true },
      notebook_name: { type: "string", max: MAX_TEXT, optional: true },
      $$messages: { invalid: MSG.invalidInput },
    },
    async handler(ctx: Context<{ notebook_id?: string; notebook_name?: string | null }, RequestMeta>) {
      const { notebook_id, notebook_name } = ctx.params;
      if (!notebook_id) throw new DomainError(400, MSG.idMissing, "notebook_id");
      const row = isId(notebook_id) ? await repo.getVisible(this.db, ctx.meta.user, notebook_id) : undefined;
      if (!row) throw new DomainError(400, MSG.notFound);
      // null reads as left out (docs/architecture.md, Decisions): the validator lets it through an optional field.
      if (notebook_name === undefined || notebook_name === null || notebook_name.trim() === "") {
        throw new DomainError(400, MSG.missingNewName, "notebook_name");
      }
      const name = withExtension(notebook_name);
      if (nameProblem(name)) throw new DomainError(400, MSG.invalidInput("notebook_name"), "notebook_name");
      // Read without the row's lock, two renames undid each other's (repo.renameLocked).
      const renameFailed = (detail: string) => new DomainError(404, MSG.renameFileError(detail));
      let outcome;
      try {
        outcome = await repo.renameLocked(this.db, { id: row.notebook_id, name, by: ctx.meta.user.username, now: Date.now() }, async (current, tx) => {
          await stageAudit(this.streams, tx, ctx, notebookChange("rename", row, { notebook_name: [current.notebook_name, name] }));
          try {
            await this.files.rename(current.owner, current.notebook_name, name);
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
    },
  },

  get: {
    http: {
      op: 61,
      routes: ["GET /_notebooks/notebooks/:notebook_id"],
      group: "notebooks",
      summary: "Fetch a notebook",
      fields: { notebook_id: NOTEBOOK_ID_FIELD },
      answer: { schema: "$Notebook", example: NOTEBOOK_EXAMPLE },
      errors: [[400, MSG.invalidId], [400, MSG.retrievalError("<detail>")]],
    },
    params: {
      notebook_id: text,
      $$messages: { insufficient: MSG.invalidId, invalid: MSG.invalidId },
    },
    async handler(ctx: Context<{ notebook_id: string }, RequestMeta>) {
      const row = isId(ctx.params.notebook_id) ? await repo.getVisible(this.db, ctx.meta.user, ctx.params.notebook_id) : undefined;
      if (!row) throw new DomainError(400, MSG.invalidId);
      return repo.notebookView(row);
    },
  },

  /** Every notebook the caller sees, oldest first. */
  all: {
    http: {
      op: 62,
      routes: ["GET /_notebooks/notebooks/_all"],
      group: "notebooks",
      summary: "List notebooks",
      description: "Every notebook the caller sees (its own; an admin's also those of its site's or plant's users), oldest first.",
      fields: PAGE_FIELDS,
      answer: { schema: "$Notebook[]", example: [NOTEBOOK_EXAMPLE] },
      errors: [[400, MSG.listError("<detail>")], [400, MSG.excessInputs]],
    },
    params: {
      ...PAGE_PARAMS,
      $$messages: listMessages,
    },
    async handler(ctx: Context<{ limit?: number; offset?: number }, RequestMeta>) {
      const { rows, total } = await repo.listVisible(this.db, ctx.meta.user, ctx.params);
      setTotal(ctx, total);
      const now = Date.now();
      return rows.map((row) => repo.notebookView(row, now));
    },
  },

  count: {
    http: {
      op: 63,
      routes: ["GET /_notebooks/notebooks/_count"],
      group: "notebooks",
      summary: "Count notebooks",
      description: "The notebooks the caller sees, in all and by status.",
      answer: { schema: "$NotebookCount", example: { "Total Notebooks": 12, "Not Scheduled": 9, Scheduled: 3 } },
      errors: [[400, MSG.countError("<detail>")], [400, MSG.excessInputs]],
    },
    params: { $$messages: listMessages },
    async handler(ctx: Context<unknown, RequestMeta>) {
      const { total, scheduled } = await repo.countVisible(this.db, ctx.meta.user);
      return { "Total Notebooks": total, "Not Scheduled": total - scheduled, Scheduled: scheduled };
    },
  },
};
