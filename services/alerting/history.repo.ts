/** An alert's history (table `alert_history`): what happened to it, by whom, oldest first. */
import type { HistoryEntry } from "./lifecycle";
import { rows, type Queryable } from "./sql";

/** Appends an entry to an alert's history (also for what others record: `notified`, `escalated`). */
export async function addHistory(q: Queryable, alert_id: string, entry: HistoryEntry): Promise<void> {
  await q.query(`INSERT INTO alert_history (alert_id, at, "by", action, detail) VALUES ($1, $2, $3, $4, $5)`, [
    alert_id,
    entry.at,
    entry.by,
    entry.action,
    entry.detail,
  ]);
}

/** An alert's history, oldest first. */
export async function alertHistory(q: Queryable, alert_id: string): Promise<HistoryEntry[]> {
  const found = await rows<HistoryEntry & { at: string }>(
    q,
    `SELECT at, "by", action, detail FROM alert_history WHERE alert_id = $1 ORDER BY at, seq`,
    [alert_id],
  );
  return found.map((r) => ({ ...r, at: Number(r.at) }));
}
