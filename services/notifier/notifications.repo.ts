/**
 * Queries of notifier.notifications and its attempts. A notification is claimed for a lease
 * before it is sent (FOR UPDATE SKIP LOCKED), so replicas sweeping for due retries never send
 * one message twice; a lease left by a crashed process runs out and the message is picked up.
 */
import type { DataSource } from "typeorm";
import { newId } from "../../lib/ids";
import type { NotificationView } from "./contract";
import { REDACTED, type AfterAttempt, type ListedStatus, type Medium, type NotificationRow, type RetryState } from "./delivery";

export const CLAIM_LEASE_MS = 120_000;

// TypeORM's postgres driver answers an UPDATE ... RETURNING with [rows, affected].
const returned = <T>(rows: [T[], number] | T[]): T[] => (Array.isArray(rows[0]) ? (rows[0] as T[]) : (rows as T[]));

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
  return returned(rows);
}

/** Writes the outcome of one attempt: the attempt's own row and the notification's new state, together. */
export async function recordAttempt(db: DataSource, row: NotificationRow, attempt: number, at: number, result: AfterAttempt): Promise<void> {
  await db.transaction(async (tx) => {
    // The history numbers every attempt ever made; `attempt` counts those since the notification was
    // last queued, and an operator's retry starts that count again. The claim keeps this race-free.
    await tx.query(
      `INSERT INTO notification_attempts (notification_id, attempt, at, outcome, error)
       SELECT $1::uuid, COALESCE(max(attempt), 0) + 1, $2::bigint, $3::text, $4::text FROM notification_attempts WHERE notification_id = $1::uuid`,
      [row.notification_id, at, result.outcome, result.error],
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

export type { NotificationView };

export interface NotificationFilter {
  status?: ListedStatus;
  medium?: Medium;
  alert_id?: string;
  notification_ids?: string[];
  limit: number;
}

/** The newest notifications first. An alert's notifications are found by their idempotency key, `alert:<alert_id>:<user>:<medium>`. */
export async function listNotifications(db: DataSource, now: number, f: NotificationFilter): Promise<NotificationView[]> {
  const args: unknown[] = [now, REDACTED, f.limit];
  const arg = (v: unknown): string => `$${args.push(v)}`;
  const where: string[] = [];
  if (f.status === "sending") where.push(`status = 'queued' AND claimed_until >= $1`);
  else if (f.status === "queued") where.push(`status = 'queued' AND (claimed_until IS NULL OR claimed_until < $1)`);
  else if (f.status) where.push(`status = ${arg(f.status)}`);
  if (f.medium) where.push(`medium = ${arg(f.medium)}`);
  if (f.alert_id) where.push(`starts_with(idempotency_key, ${arg(`alert:${f.alert_id}:`)})`);
  if (f.notification_ids) where.push(`notification_id = ANY(${arg(f.notification_ids)}::uuid[])`);
  return db.query(
    `SELECT notification_id, medium, recipient, subject,
            CASE WHEN sensitive THEN $2 ELSE body END AS body, sensitive,
            CASE WHEN status = 'queued' AND claimed_until >= $1 THEN 'sending' ELSE status END AS status,
            attempts, last_error,
            CASE WHEN idempotency_key LIKE 'alert:%' THEN split_part(idempotency_key, ':', 2) END AS alert_id,
            created_at::float8 AS created_at, sent_at::float8 AS sent_at, next_attempt_at::float8 AS next_attempt_at
       FROM notifications
      ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created_at DESC, notification_id DESC
      LIMIT $3`,
    args,
  );
}

/** What a retry must know of the given notifications, by id (the body itself is not read). */
export async function retryStates(db: DataSource, ids: string[]): Promise<Map<string, RetryState>> {
  const rows: (RetryState & { notification_id: string })[] = await db.query(
    `SELECT notification_id, status, sensitive AND body = $2 AS redacted FROM notifications WHERE notification_id = ANY($1::uuid[])`,
    [ids, REDACTED],
  );
  return new Map(rows.map((r) => [r.notification_id, { status: r.status, redacted: r.redacted }]));
}

/**
 * Queues notifications again, due now with their attempts counted afresh: the given ones, or
 * else the oldest failed ones. Never a sent one, a redacted one, or one a replica is sending
 * right now (the row locks and these conditions are checked together, so a delivery finishing
 * meanwhile is not undone). Answers the ids queued again.
 */
export async function requeue(db: DataSource, now: number, opts: { notification_ids?: string[]; limit: number }): Promise<string[]> {
  const args: unknown[] = [now, REDACTED, opts.limit];
  const which = opts.notification_ids ? `notification_id = ANY($4::uuid[]) AND status <> 'sent'` : `status = 'failed'`;
  if (opts.notification_ids) args.push(opts.notification_ids);
  const rows: [{ notification_id: string }[], number] | { notification_id: string }[] = await db.query(
    `UPDATE notifications
        SET status = 'queued', attempts = 0, last_error = NULL, next_attempt_at = $1, claimed_until = NULL
      WHERE notification_id IN (
        SELECT notification_id FROM notifications
         WHERE ${which} AND NOT (sensitive AND body = $2) AND (status <> 'queued' OR claimed_until IS NULL OR claimed_until < $1)
         ORDER BY created_at, notification_id
         LIMIT $3
         FOR UPDATE)
      RETURNING notification_id`,
    args,
  );
  return returned(rows).map((r) => r.notification_id);
}
