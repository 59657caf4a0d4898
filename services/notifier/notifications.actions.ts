/**
 * Internal actions: an email to send (auth's OTPs, generated passwords and lock notices), and the
 * operators' list and retry (the REPL's `notifications` and `notifications-retry`). Each hands
 * its params to notifications.ts.
 */
import type { Context } from "moleculer";
import { MAX_TEXT } from "../../lib/validation";
import type { EmailSendParams, NotificationsListParams, NotificationsRetryParams, RetryResult } from "./contract";
import { LISTED_STATUSES, MEDIA, type SendResult } from "./delivery";
import type { NotifierActions } from "./notifier.types";
import * as notifications from "./notifications";
import { RETRY_BATCH } from "./notifications";
import type { NotificationView } from "./notifications.repo";

export const notificationsActions: NotifierActions = {
  /** Records an email and starts its delivery. Answers `{notification_id, status}`. */
  "email.send": {
    visibility: "public",
    params: {
      to: { type: "string", max: 320, pattern: /^[^\s@]+@[^\s@]+$/ },
      subject: { type: "string", max: 998 },
      text: { type: "string", max: 100_000 },
      idempotency_key: { type: "string", max: MAX_TEXT, optional: true },
      sensitive: { type: "boolean", optional: true },
    },
    handler(ctx: Context<EmailSendParams>): Promise<SendResult> {
      return notifications.sendEmail(this.system(ctx), ctx.params);
    },
  },

  /** Operators: the newest notifications first; a secret's body is shown redacted. */
  "notifications.list": {
    visibility: "public",
    params: {
      status: { type: "enum", values: [...LISTED_STATUSES], optional: true },
      medium: { type: "enum", values: [...MEDIA], optional: true },
      alert_id: { type: "uuid", optional: true },
      limit: { type: "number", integer: true, min: 1, max: 1000, optional: true, default: 50 },
    },
    // The params' default fills `limit`.
    handler(ctx: Context<NotificationsListParams & { limit: number }>): Promise<NotificationView[]> {
      return notifications.listNotifications(this.system(ctx), ctx.params);
    },
  },

  /** Operators: queues notifications again and delivers them now; a sent or a redacted one is refused. */
  "notifications.retry": {
    visibility: "public",
    params: {
      notification_ids: { type: "array", items: { type: "uuid" }, min: 1, max: RETRY_BATCH, optional: true },
    },
    handler(ctx: Context<NotificationsRetryParams>): Promise<RetryResult> {
      return notifications.retryNotifications(this.system(ctx), ctx.params);
    },
  },
};
