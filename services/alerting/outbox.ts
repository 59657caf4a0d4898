/**
 * The alert outbox: an opened alert's notification request is written in the transaction that
 * opens the alert and stays until the notifier has recorded it. Replicas drain it together
 * (FOR UPDATE SKIP LOCKED); a failed hand-over is retried with exponential back-off. The notifier
 * keys each message by alert, user and medium, so a hand-over repeated after a crash sends nothing twice.
 */
import { deleteNotice, dueNotices, postponeNotice, type OutboxRow, type Transactional } from "./repo";

export type { OutboxRow } from "./repo";

/** 1 s, 2 s, 4 s … capped at 5 minutes. */
export function backoffMs(attempts: number): number {
  return Math.min(300_000, 1000 * 2 ** Math.max(0, attempts - 1));
}

/** Hands due rows to `deliver`; returns how many were handed over. */
export async function drainOutbox(db: Transactional, deliver: (row: OutboxRow) => Promise<void>, batch = 50): Promise<number> {
  return db.transaction(async (tx) => {
    const due = await dueNotices(tx, Date.now(), batch);
    let done = 0;
    for (const row of due) {
      try {
        await deliver(row);
        await deleteNotice(tx, row.alert_id);
        done += 1;
      } catch (err) {
        const attempts = row.attempts + 1;
        await postponeNotice(tx, row.alert_id, attempts, Date.now() + backoffMs(attempts), String((err as Error)?.message ?? err).slice(0, 500));
      }
    }
    return done;
  });
}
