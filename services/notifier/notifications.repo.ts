/**
 * Queries of notifier.notifications and its attempts. A notification is claimed for a lease
 * before it is sent (FOR UPDATE SKIP LOCKED), so replicas sweeping for due retries never send
 * one message twice; a lease left by a crashed process runs out and the message is picked up.
 */
import type { DataSource } from "typeorm";
import { newId } from "../../lib/ids";
import { REDACTED, type AfterAttempt, type Medium, type NotificationRow } from "./delivery";

export const CLAIM_LEASE_MS = 120_000;

export interface NewNotification {
  medium: Medium;
  recipient: string;
  subject: string | null;
  body: string;
  idempotency_key: string | null;
  sensitive: boolean;
}

/** Records a notification, due now. With an idempotency key already used, the earlier notification is returned instead. */
export async function recordNotification(db: DataSource, n: NewNotification, now: number): Promise<{ row: NotificationRow; created: boolean }> {
  const inserted: NotificationRow[] = await db.query(
    `INSERT INTO notifications (notification_id, medium, recipient, subject, body, idempotency_key, sensitive, status, created_at, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $8, $8)
     ON CONFLICT (idempotency_key) DO NOTHING
     RETURNING *`,
    [newId(), n.medium, n.recipient, n.subject, n.body, n.idempotency_key, n.sensitive, now],
  );
  if (inserted[0]) return { row: inserted[0], created: true };
  const existing: NotificationRow[] = await db.query(`SELECT * FROM notifications WHERE idempotency_key = $1`, [n.idempotency_key]);
  if (!existing[0]) throw new Error("notification vanished after an idempotency conflict");
  return { row: existing[0], created: false };
}

/** Claims due notifications (one by id, or the oldest due ones) for a lease. */
export async function claimDue(db: DataSource, now: number, opts: { id?: string; limit: number }): Promise<NotificationRow[]> {
  const args: unknown[] = [now, now + CLAIM_LEASE_MS, opts.limit];
  const byId = opts.id ? `AND notification_id = $4` : "";
  if (opts.id) args.push(opts.id);
  const rows: [NotificationRow[], number] | NotificationRow[] = await db.query(
    `UPDATE notifications SET claimed_until = $2
      WHERE notification_id IN (
        SELECT notification_id FROM notifications
         WHERE status = 'queued' AND next_attempt_at <= $1 AND (claimed_until IS NULL OR claimed_until < $1) ${byId}
         ORDER BY next_attempt_at
         LIMIT $3
         FOR UPDATE SKIP LOCKED)
      RETURNING *`,
    args,
  );
  // TypeORM's postgres driver answers an UPDATE ... RETURNING with [rows, affected].
  return Array.isArray(rows[0]) ? (rows[0] as NotificationRow[]) : (rows as NotificationRow[]);
}

/** Writes the outcome of one attempt: the attempt's own row and the notification's new state, together. */
export async function recordAttempt(db: DataSource, row: NotificationRow, attempt: number, at: number, result: AfterAttempt): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO notification_attempts (notification_id, attempt, at, outcome, error) VALUES ($1, $2, $3, $4, $5)`,
      [row.notification_id, attempt, at, result.outcome, result.error],
    );
    await tx.query(
      `UPDATE notifications
          SET status = $2, attempts = $3, last_error = $4, next_attempt_at = $5, claimed_until = NULL,
              sent_at = CASE WHEN $2 = 'sent' THEN $6::bigint ELSE sent_at END,
              body = CASE WHEN $7 THEN $8 ELSE body END
        WHERE notification_id = $1`,
      [row.notification_id, result.status, attempt, result.error, result.nextAttemptAt, at, result.redact, REDACTED],
    );
  });
}
