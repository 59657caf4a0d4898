/**
 * The notifier's contract: an email to send (auth's OTPs and generated passwords) and the
 * operators' list and retry. (Opened alerts come on alerting's `alerts` stream, whose message
 * alerting's contract declares; `notifier.alerts.notify` takes the same message, for tools and tests.) Each answers as soon as the notification is recorded; delivery goes on behind.
 */
import { serviceClient } from "../../lib/contract";

export const MEDIA = ["email", "sms", "whatsapp"] as const;
export type Medium = (typeof MEDIA)[number];
export type NotificationStatus = "queued" | "sent" | "failed" | "skipped";

/** The statuses an operator's list shows: a queued notification that a replica has claimed is `sending`. */
export const LISTED_STATUSES = ["queued", "sending", "sent", "failed", "skipped"] as const;
export type ListedStatus = (typeof LISTED_STATUSES)[number];

/** What `notifier.*.send` answers. */
export interface SendResult {
  notification_id: string;
  status: NotificationStatus;
}

/** A notification as an operator sees it: a sensitive body never leaves the database. Times in ms. */
export interface NotificationView {
  notification_id: string;
  medium: Medium;
  recipient: string;
  subject: string | null;
  body: string;
  sensitive: boolean;
  status: ListedStatus;
  attempts: number;
  last_error: string | null;
  /** The alert that asked for it (`notifier.alerts.notify`), or null. */
  alert_id: string | null;
  created_at: number;
  sent_at: number | null;
  next_attempt_at: number | null;
}

/** Params of `notifier.email.send`. */
export interface EmailSendParams {
  to: string;
  subject: string;
  text: string;
  /** The same key twice is one notification: a caller's retry never sends a second email. */
  idempotency_key?: string;
  /** The body holds a secret (OTP, password): it is redacted once the notification is final. */
  sensitive?: boolean;
}

/** Params of `notifier.notifications.list`. */
export interface NotificationsListParams {
  status?: ListedStatus;
  medium?: Medium;
  alert_id?: string;
  /** Default 50. */
  limit?: number;
}

/** Params of `notifier.notifications.retry`: the given notifications, or else the oldest failed ones. */
export interface NotificationsRetryParams {
  notification_ids?: string[];
}

/** What `notifier.notifications.retry` answers: how many were queued again, and each as it stands after its attempt. */
export interface RetryResult {
  retried: number;
  notifications: NotificationView[];
}

export interface NotifierContract {
  "email.send": { params: EmailSendParams; reply: SendResult };
  "notifications.list": { params: NotificationsListParams; reply: NotificationView[] };
  "notifications.retry": { params: NotificationsRetryParams; reply: RetryResult };
}

export const notifierClient = serviceClient<NotifierContract>("notifier");
