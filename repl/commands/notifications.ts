/** The notification queue: what is waiting or failed, and retrying the failed ones. */
import { callAs } from "../call";
import { table } from "../format";
import { UsageError, type AdminCommand } from "../types";

interface NotificationItem {
  notification_id: string;
  medium: string;
  recipient: string;
  status: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: number | null;
}

const STATUSES = ["queued", "sending", "sent", "failed", "skipped"];

export const notifications: AdminCommand = {
  command: "notifications",
  description: "Show the notification queue (default: queued and failed notifications).",
  options: [
    { option: "--status <status>", description: `one of ${STATUSES.join(", ")}` },
    { option: "--limit <n>", description: "at most n rows (default 50)" },
  ],
  async run(ctx, args) {
    const status = args.options.status === undefined ? undefined : String(args.options.status);
    if (status !== undefined && !STATUSES.includes(status)) throw new UsageError(`--status must be one of ${STATUSES.join(", ")}`);
    const limit = args.options.limit === undefined ? 50 : Number(args.options.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError("--limit must be an integer from 1 to 1000");
    const rows = await callAs<NotificationItem[]>(ctx, "notifier.notifications.list", { ...(status ? { status } : {}), limit });
    if (rows.length === 0) return "the queue is empty";
    return table(
      ["notification_id", "medium", "recipient", "status", "attempts", "last_error"],
      rows.map((n) => [n.notification_id, n.medium, n.recipient, n.status, n.attempts, n.last_error]),
    );
  },
};

export const notificationsRetry: AdminCommand = {
  command: "notifications-retry [notificationIds...]",
  description: "Queue failed notifications again (all failed ones when no id is given).",
  async run(ctx, args) {
    const ids = Array.isArray(args.notificationIds) ? args.notificationIds.map(String) : [];
    const res = await callAs<{ retried: number }>(ctx, "notifier.notifications.retry", ids.length ? { notification_ids: ids } : {});
    return `${res.retried} notification(s) queued again`;
  },
};
