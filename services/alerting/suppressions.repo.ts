/** Maintenance windows of a watcher (table `suppressions`). */
import { rows, type Queryable } from "./sql";

/** A maintenance window of a watcher as stored (table `suppressions`), times in epoch ms. */
export interface SuppressionRow {
  id: string;
  watcher_id: string;
  from_ts: string | number;
  to_ts: string | number;
  reason: string;
  created_by: string | null;
  created_at: string | number;
}

export async function insertSuppression(q: Queryable, s: SuppressionRow): Promise<void> {
  await q.query(
    `INSERT INTO suppressions (id, watcher_id, from_ts, to_ts, reason, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [s.id, s.watcher_id, s.from_ts, s.to_ts, s.reason, s.created_by, s.created_at],
  );
}

/** Removes a watcher's window; false when the watcher has none of that id. */
export async function deleteSuppression(q: Queryable, watcher_id: string, id: string): Promise<boolean> {
  // Through a CTE: TypeORM answers a bare DELETE … RETURNING with [rows, affected].
  const found = await rows<{ id: string }>(q, `WITH d AS (DELETE FROM suppressions WHERE watcher_id = $1 AND id = $2 RETURNING id) SELECT id FROM d`, [
    watcher_id,
    id,
  ]);
  return found.length > 0;
}

/** A watcher's windows, earliest first. */
export async function listSuppressions(q: Queryable, watcher_id: string): Promise<SuppressionRow[]> {
  return rows<SuppressionRow>(q, `SELECT * FROM suppressions WHERE watcher_id = $1 ORDER BY from_ts, created_at, id`, [watcher_id]);
}

/** The windows of these watchers that end at or after `since` (the earliest start about to open). */
export async function suppressionWindows(q: Queryable, watcher_ids: string[], since: number): Promise<{ watcher_id: string; from: number; to: number }[]> {
  const found = await rows<{ watcher_id: string; from_ts: string; to_ts: string }>(
    q,
    `SELECT watcher_id, from_ts, to_ts FROM suppressions WHERE watcher_id = ANY($1::uuid[]) AND to_ts >= $2`,
    [watcher_ids, since],
  );
  return found.map((r) => ({ watcher_id: r.watcher_id, from: Number(r.from_ts), to: Number(r.to_ts) }));
}
