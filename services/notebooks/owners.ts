/**
 * A notebook belongs to its owner's user record, not to the name (docs/security.md, Notebooks):
 * when the user is removed, its notebooks, their files, runs and schedules go; a later user of
 * the same name sees nothing of them. auth's `auth.user.removed` event does it at once; a sweep
 * at start and every hour catches an event this service missed while it was down (a user that
 * was removed, or removed and made again: the record's creation time tells them apart).
 */
import type { NotebookFiles } from "./files";
import * as repo from "./repo";
import type { Db } from "./repo";

export interface OwnerDeps {
  db: Db;
  files: NotebookFiles;
}

/** What auth knows of a user now: its record's creation time, or null when there is no such user. */
export type ResolveOwner = (owner: string) => Promise<{ created_at: number } | null>;

/**
 * Removes what belonged to the record of `owner` made at `since` and every earlier one (null:
 * every record of the name). The whole folder goes, with what the runs wrote in it, unless a
 * later record of the name already has notebooks there: then only the removed notebooks' files.
 */
export async function removeOwner(d: OwnerDeps, owner: string, since: number | null): Promise<number> {
  const { deleted, othersRemain } = await repo.deleteOwnerNotebooks(d.db, owner, since, true);
  if (!othersRemain) await d.files.removeFolder(owner);
  else for (const nb of deleted) await d.files.remove(nb.owner, nb.notebook_name);
  return deleted.length;
}

/** Removes the notebooks whose owner is gone, or is now another record of the name; answers how many. */
export async function sweepOwners(d: OwnerDeps, resolve: ResolveOwner): Promise<number> {
  let removed = 0;
  const byOwner = new Map<string, (number | null)[]>();
  for (const row of await repo.owners(d.db)) {
    byOwner.set(row.owner, [...(byOwner.get(row.owner) ?? []), row.owner_since === null ? null : Number(row.owner_since)]);
  }
  for (const [owner, records] of byOwner) {
    const now = await resolve(owner);
    if (!now) removed += await removeOwner(d, owner, null);
    else if (records.some((since) => since !== null && since < now.created_at)) {
      // Notebooks of an earlier record of the name; those of unknown record are left to their present owner.
      const { deleted } = await repo.deleteOwnerNotebooks(d.db, owner, now.created_at - 1, false);
      for (const nb of deleted) await d.files.remove(nb.owner, nb.notebook_name);
      removed += deleted.length;
    }
  }
  return removed;
}
