/** The notification queue: what is waiting, sent or failed, and retrying the failed ones. */
import { LISTED_STATUSES, MEDIA } from "../../services/notifier/delivery";
import { callAs } from "../call";
import { requireId, table } from "../format";
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

const STATUSES: readonly string[] = LISTED_STATUSES;
const MEDIA_NAMES: readonly string[] = MEDIA;
const COLUMNS = ["notification_id", "medium", "recipient", "status", "attempts", "last_error"];
const row = (n: NotificationItem) => [n.notification_id, n.medium, n.recipient, n.status, n.attempts, n.last_error];

export const notifications: AdminCommand = {
  command: "notifications",
  description: "Show notifications, newest first (every status unless --status narrows it).",
  options: [
    { option: "--status <status>", description: `one of ${STATUSES.join(", ")}` },
    { option: "--medium <medium>", description: `one of ${MEDIA_NAMES.join(", ")}` },
    { option: "--alert <alertId>", description: "only those of this alert" },
    { option: "--limit <n>", description: "at most n rows (default 50)" },
  ],
  async run(ctx, args) {
    const status = args.options.status === undefined ? undefined : String(args.options.status);
    if (status !== undefined && !STATUSES.includes(status)) throw new UsageError(`--status must be one of ${STATUSES.join(", ")}`);
    const medium = args.options.medium === undefined ? undefined : String(args.options.medium);
    if (medium !== undefined && !MEDIA_NAMES.includes(medium)) throw new UsageError(`--medium must be one of ${MEDIA_NAMES.join(", ")}`);
    const alertId = args.options.alert === undefined ? undefined : requireId(args.options.alert, "--alert");
    const limit = args.options.limit === undefined ? 50 : Number(args.options.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError("--limit must be an integer from 1 to 1000");
    const rows = await callAs<NotificationItem[]>(ctx, "notifier.notifications.list", {
      ...(status ? { status } : {}),
      ...(medium ? { medium } : {}),
      ...(alertId ? { alert_id: alertId } : {}),
      limit,
    });
    if (rows.length === 0) return "no notifications";
    return table(COLUMNS, rows.map(row));
  },
};

export const notificationsRetry: AdminCommand = {
  command: "notifications-retry [notificationIds...]",
  description: "Queue failed notifications again and deliver them now (the oldest 100 failed ones when no id is given); shows how each stands a few seconds later.",
  async run(ctx, args) {
    const ids = Array.isArray(args.notificationIds) ? args.notificationIds.map(String) : [];
    const res = await callAs<{ retried: number; notifications: NotificationItem[] }>(ctx, "notifier.notifications.retry", ids.length ? { notification_ids: ids } : {});
    const head = `${res.retried} notification(s) queued again`;
    return res.notifications.length ? `${head}\n${table(COLUMNS, res.notifications.map(row))}` : head;
  },
};
