/**
 * Notifications: an email recorded and delivered behind, the operators' list and retry, and the
 * delivery itself. A send records the notification and returns; delivery starts at once, and a
 * transient failure is retried with exponential back-off by whichever replica claims it next
 * (a claim is a lease: notifications.repo.ts). The retry rules are pure, in delivery.ts.
 */
import { conflict, notFound } from "../../lib/errors";
import { settledWithin } from "../../lib/wait";
import type { EmailSendParams, NotificationsListParams, NotificationsRetryParams, RetryResult } from "./contract";
import { afterAttempt, retryRefusal, skipped, type NotificationRow, type RetryState, type SendResult } from "./delivery";
import { MSG } from "./messages";
import { claimDue, listNotifications as listRows, recordAttempt, recordNotification, requeue, retryStates, type NotificationView } from "./notifications.repo";
import type { NotifierPort } from "./port";

/** The most notifications one retry queues again; an operator asks again for more. */
export const RETRY_BATCH = 100;
/** How long a retry waits for its deliveries before it answers (under the broker's request timeout); the rest go on behind. */
const RETRY_WAIT_MS = 5000;

/** How often a replica looks for due retries that no timer of its own is waiting for (another replica's, a crashed one's). */
const SWEEP_INTERVAL_MS = 5000;
const SWEEP_BATCH = 20;

/** Records an email and starts its delivery. Answers `{notification_id, status}`. */
export async function sendEmail(port: NotifierPort, p: EmailSendParams): Promise<SendResult> {
  const { row, created } = await recordNotification(
    port.db,
    {
      medium: "email",
      recipient: p.to,
      subject: p.subject,
      body: p.text,
      idempotency_key: p.idempotency_key ?? null,
      sensitive: p.sensitive ?? false,
    },
    Date.now(),
  );
  if (created) startDelivery(port, row.notification_id);
  return { notification_id: row.notification_id, status: row.status };
}

/** The newest notifications first; a secret's body is shown redacted. The params' default fills `limit`. */
export function listNotifications(port: NotifierPort, p: NotificationsListParams & { limit: number }): Promise<NotificationView[]> {
  return listRows(port.db, Date.now(), { ...p, alert_id: p.alert_id?.toLowerCase() });
}

/** Refuses a retry that names an unknown, a sent or a redacted notification, before anything is queued. */
function checkRetry(ids: string[], states: Map<string, RetryState>): void {
  for (const id of ids) {
    const refusal = retryRefusal(states.get(id));
    if (refusal === "unknown") throw notFound(MSG.notificationNotFound(id));
    if (refusal === "sent") throw conflict(MSG.alreadySent(id));
    if (refusal === "redacted") throw conflict(MSG.redacted(id));
  }
}

/**
 * Queues notifications again with their attempts counted afresh and delivers them now through the
 * same path as every delivery. A sent or a redacted one is refused. Answers what became of them
 * within RETRY_WAIT_MS.
 */
export async function retryNotifications(port: NotifierPort, p: NotificationsRetryParams): Promise<RetryResult> {
  const ids = p.notification_ids?.map((id) => id.toLowerCase());
  if (ids) checkRetry(ids, await retryStates(port.db, ids));
  const requeued = await requeue(port.db, Date.now(), { notification_ids: ids, limit: RETRY_BATCH });
  await deliverNow(port, requeued, RETRY_WAIT_MS);
  const shown = ids ?? requeued;
  const notifications = shown.length ? await listRows(port.db, Date.now(), { notification_ids: shown, limit: RETRY_BATCH }) : [];
  return { retried: requeued.length, notifications };
}

/** Starts delivering a notification just recorded, in the background. */
export function startDelivery(port: NotifierPort, notification_id: string): void {
  port.track(deliverDue(port, notification_id));
}

/** Claims and attempts one due notification, or a batch of the oldest due ones. */
async function deliverDue(port: NotifierPort, id?: string): Promise<void> {
  if (port.stopping()) return;
  const rows = await claimDue(port.db, Date.now(), { id, limit: id ? 1 : SWEEP_BATCH });
  for (const row of rows) await attempt(port, row);
}

/** Delivers these due notifications one after another, as the sweep does; waits for them at most `waitMs`. */
async function deliverNow(port: NotifierPort, ids: string[], waitMs: number): Promise<void> {
  if (ids.length === 0) return;
  const run = (async () => {
    for (const id of ids) await deliverDue(port, id);
  })();
  port.track(run);
  await settledWithin(run, waitMs);
}

async function attempt(port: NotifierPort, row: NotificationRow): Promise<void> {
  const channel = port.channels[row.medium];
  const made = row.attempts + 1;
  let failure: unknown;
  if (channel?.configured) {
    try {
      await channel.send(row);
    } catch (err) {
      failure = err ?? new Error("delivery failed");
    }
  }
  const now = Date.now();
  const result = channel?.configured ? afterAttempt(row, made, now, failure) : skipped(row);
  await recordAttempt(port.db, row, made, now, result);
  if (result.status !== "queued") port.countFinal(result.status, row.medium);
  if (result.status === "queued" && result.nextAttemptAt !== null) {
    port.logger.warn(`notification ${row.notification_id}: attempt ${made} failed (${result.error}); retrying`);
    port.later(result.nextAttemptAt - now, () => deliverDue(port, row.notification_id));
  } else if (result.status === "failed") {
    port.logger.error(`notification ${row.notification_id}: given up after attempt ${made}: ${result.error}`);
  }
}

/** From start to stop: every SWEEP_INTERVAL_MS, the oldest due notifications whatever replica queued them. */
export function startSweeping(port: NotifierPort): void {
  const sweep = () => {
    port.track(deliverDue(port));
    port.later(SWEEP_INTERVAL_MS, async () => sweep());
  };
  port.later(0, async () => sweep());
}
