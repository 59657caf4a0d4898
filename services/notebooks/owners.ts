/**
 * A notebook belongs to its owner's user record, not to the name (docs/security.md, Notebooks):
 * when the user is removed, its notebooks, their files, runs and schedules go; a later user of
 * the same name sees nothing of them. auth's `auth.user.removed` event does it at once; a sweep
 * at start and every hour catches an event this service missed while it was down (a user that
 * was removed, or removed and made again: the record's creation time tells them apart).
 */
import * as notebooks from "./notebooks.repo";
import type { NotebooksPort } from "./port";

/** The creation time of the user's record (auth), which its notebooks keep; null when auth cannot tell now. */
export async function ownerSince(port: NotebooksPort, username: string): Promise<number | null> {
  try {
    return (await port.userRecord(username))?.created_at ?? null;
  } catch (err) {
    port.logger.warn(`the record of ${username} could not be read from auth; its notebook keeps its name only:`, err);
    return null;
  }
}

/**
 * Removes what belonged to the record of `owner` made at `since` and every earlier one (null:
 * every record of the name). The whole folder goes, with what the runs wrote in it, unless a
 * later record of the name already has notebooks there: then only the removed notebooks' files.
 */
export async function removeOwner(port: NotebooksPort, owner: string, since: number | null): Promise<number> {
  const { deleted, othersRemain } = await notebooks.deleteOwnerNotebooks(port.db, owner, since, true);
  if (!othersRemain) await port.files.removeFolder(owner);
  else for (const nb of deleted) await port.files.remove(nb.owner, nb.notebook_name);
  return deleted.length;
}

/** The user's record is gone (`auth.user.removed`): so are its notebooks, their files, runs and schedules. */
export async function userRemoved(port: NotebooksPort, event: { username: string; created_at?: number | null }): Promise<void> {
  const removed = await removeOwner(port, event.username, event.created_at ?? null);
  if (removed > 0) port.logger.info(`${removed} notebook(s) of the removed user ${event.username} deleted`);
}

/** Removes the notebooks whose owner is gone, or is now another record of the name; answers how many. */
export async function sweepOwners(port: NotebooksPort): Promise<number> {
  let removed = 0;
  const byOwner = new Map<string, (number | null)[]>();
  for (const row of await notebooks.owners(port.db)) {
    byOwner.set(row.owner, [...(byOwner.get(row.owner) ?? []), row.owner_since === null ? null : Number(row.owner_since)]);
  }
  for (const [owner, records] of byOwner) {
    const now = await port.userRecord(owner);
    if (!now) removed += await removeOwner(port, owner, null);
    else if (records.some((since) => since !== null && since < now.created_at)) {
      // Notebooks of an earlier record of the name; those of unknown record are left to their present owner.
      const { deleted } = await notebooks.deleteOwnerNotebooks(port.db, owner, now.created_at - 1, false);
      for (const nb of deleted) await port.files.remove(nb.owner, nb.notebook_name);
      removed += deleted.length;
    }
  }
  if (removed > 0) port.logger.info(`${removed} notebook(s) of removed users deleted`);
  return removed;
}
