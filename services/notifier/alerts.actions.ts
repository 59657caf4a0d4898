/**
 * Opened alerts, as the notifier takes them: from alerting's alerts stream (ALERTS_STREAM), or by
 * `notifier.alerts.notify` for tools and tests. What each asks for is in alert-notifications.ts.
 */
import type { Context } from "moleculer";
import { compileParams, MAX_TEXT } from "../../lib/validation";
import type { StreamConsumers } from "../../mixins/stream.mixin";
import { STREAMS, type AlertingStreams, type AlertOpened } from "../alerting/contract";
import { notifyAlert } from "./alert-notifications";
import type { SendResult } from "./delivery";
import type { NotifierActions, NotifierThis } from "./notifier.types";

const anyText = { type: "string", max: 2000 } as const;

/** An opened alert as the notifier takes it, by action or from the stream. */
const ALERT_PARAMS = {
  alert_id: { type: "string", max: MAX_TEXT },
  watcher_id: anyText,
  watcher_name: anyText,
  trigger_id: anyText,
  trigger_name: anyText,
  severity: anyText,
  start_time: anyText,
  start_ts: "number",
  site: anyText,
  plant: anyText,
  // Optional: notices queued before alerts carried their place have none (and are delivered as then).
  site_id: { ...anyText, optional: true },
  plant_id: { ...anyText, optional: true },
  timezone: { ...anyText, optional: true },
  function: anyText,
  asset: anyText,
  monitor: anyText,
  tag: anyText,
  value: { type: "number", nullable: true },
  threshold: { type: "number", nullable: true },
  comparison: anyText,
  unit: anyText,
  conditions: { type: "array", max: 100, items: "object" },
  notifyTo: {
    type: "object",
    props: { email: "boolean", sms: "boolean", whatsapp: "boolean", users: { type: "array", max: 200, items: { type: "string", max: 320 } } },
  },
  // A re-notification, an escalation tier or a shelf's end (alerting's followups.ts): its own key part.
  followup: { type: "string", max: 64, optional: true },
  // A silence (alerting's nodata.ts): no value, the trigger's no_data duration instead.
  reason: { type: "enum", values: ["no_data"], optional: true },
  no_data: { type: "string", max: 32, optional: true },
};
/** The stream's messages skip the action's params check: the same check, so a malformed one is dead-lettered, not recorded. */
const checkAlert = compileParams(ALERT_PARAMS);

export const alertsActions: NotifierActions = {
  /** Internal: the notifications an opened alert asks for (alert-notifications.ts). */
  "alerts.notify": {
    visibility: "public",
    params: ALERT_PARAMS,
    handler(ctx: Context<AlertOpened>): Promise<SendResult[]> {
      return notifyAlert(this.system(ctx), ctx.params);
    },
  },
};

/**
 * The alerts stream, read by the durable group "notifier": every replica shares it, so each
 * opened alert is handled by one of them, and alerts opened while no notifier ran wait in the
 * stream. A throw (a user the contacts copy cannot tell of yet, the database away) gets the
 * message delivered again later, as often as it takes: a notice is never given up on (a missed alert is a broken machine), only retried with
 * back-off capped at 30 s, its watcher's later notices waiting behind it.
 */
export const ALERTS_STREAM: StreamConsumers<NotifierThis, AlertingStreams> = {
  [STREAMS.alerts]: {
    group: "notifier",
    concurrency: 4,
    maxDeliveries: Infinity,
    async handler(alert) {
      // Typed by alerting's contract, checked like the action's params all the same (another version may have sent it).
      const finding = checkAlert(alert);
      if (finding !== true) {
        // No retry can make it an alert, and it would hold back every later notice of its watcher.
        this.logger.error(`alerts stream: dropped a message that is not an opened alert (${finding.field}): ${JSON.stringify(alert).slice(0, 500)}`);
        return;
      }
      await notifyAlert(this.system(this.broker), alert);
    },
  },
};
