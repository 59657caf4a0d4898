/**
 * The notifier's contract: an email to send (auth's OTPs and generated passwords), an opened
 * alert to tell (alerting's `alerts` stream message, also taken by action), and the operators'
 * list and retry. Each answers as soon as the notification is recorded; delivery goes on behind.
 */
import { serviceClient } from "../../lib/contract";
import type { AlertOpened } from "../alerting/contract";
import type { ListedStatus, Medium, SendResult } from "./delivery";
import type { NotificationView } from "./notifications.repo";

export type { NotificationView, SendResult };

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
  /** One notification per user and medium the alert names, each once however often the alert comes. */
  "alerts.notify": { params: AlertOpened; reply: SendResult[] };
  "notifications.list": { params: NotificationsListParams; reply: NotificationView[] };
  "notifications.retry": { params: NotificationsRetryParams; reply: RetryResult };
}

export const notifierClient = serviceClient<NotifierContract>("notifier");
