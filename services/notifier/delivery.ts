/**
 * What happens to a notification after a delivery attempt: pure rules of retry and back-off.
 * A channel (email now; SMS and WhatsApp later) sends one message and throws a DeliveryError
 * that says whether trying again could help.
 */
import { LISTED_STATUSES, MEDIA, type ListedStatus, type Medium, type NotificationStatus, type SendResult } from "./contract";

export { LISTED_STATUSES, MEDIA, type ListedStatus, type Medium, type NotificationStatus, type SendResult };

/** A row of notifier.notifications. bigint columns arrive from pg as text. */
export interface NotificationRow {
  notification_id: string;
  medium: Medium;
  recipient: string;
  subject: string | null;
  body: string;
  idempotency_key: string | null;
  sensitive: boolean;
  status: NotificationStatus;
  attempts: number;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
  next_attempt_at: string | null;
  claimed_until: string | null;
}

export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
    this.name = "DeliveryError";
  }
}

/** One way of carrying a notification. `configured: false` records the notification as skipped. */
export interface Channel {
  readonly configured: boolean;
  send(notification: NotificationRow): Promise<void>;
  close?(): void;
}

export const MAX_ATTEMPTS = 5;
const BASE_DELAY_MS = 1000;

/** 1 s, 2 s, 4 s, 8 s between the five attempts. */
export const backoffMs = (attemptsMade: number): number => BASE_DELAY_MS * 2 ** Math.max(0, attemptsMade - 1);

/** A body that carries a secret (an OTP, a generated password) is not kept once nobody will send it again. */
export const REDACTED = "[redacted]";

export type AttemptOutcome = "sent" | "transient" | "permanent" | "skipped";

export interface AfterAttempt {
  outcome: AttemptOutcome;
  status: NotificationStatus;
  /** When to try again; null when the notification is final. */
  nextAttemptAt: number | null;
  error: string | null;
  redact: boolean;
}

export function afterAttempt(row: Pick<NotificationRow, "sensitive">, attemptsMade: number, now: number, err: unknown): AfterAttempt {
  if (err === undefined) return { outcome: "sent", status: "sent", nextAttemptAt: null, error: null, redact: row.sensitive };
  const error = err instanceof Error ? err.message : String(err);
  const transient = err instanceof DeliveryError ? err.transient : true;
  if (transient && attemptsMade < MAX_ATTEMPTS) {
    return { outcome: "transient", status: "queued", nextAttemptAt: now + backoffMs(attemptsMade), error, redact: false };
  }
  return { outcome: transient ? "transient" : "permanent", status: "failed", nextAttemptAt: null, error, redact: row.sensitive };
}

export function skipped(row: Pick<NotificationRow, "sensitive" | "medium">): AfterAttempt {
  return {
    outcome: "skipped",
    status: "skipped",
    nextAttemptAt: null,
    error: "not configured",
    redact: row.sensitive,
  };
}

/** What an operator's retry must know of a notification: a redacted body can never be sent again. */
export interface RetryState {
  status: NotificationStatus;
  redacted: boolean;
}

export type RetryRefusal = "unknown" | "sent" | "redacted";

/**
 * Why an operator may not queue this notification again, or null when it may. A sent one is not
 * sent twice; a secret's redacted body would reach the recipient as `[redacted]`.
 */
export function retryRefusal(state: RetryState | undefined): RetryRefusal | null {
  if (!state) return "unknown";
  if (state.status === "sent") return "sent";
  if (state.redacted) return "redacted";
  return null;
}
