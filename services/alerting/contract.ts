/**
 * The alerting service's contract: the `alerts` durable stream it publishes (mixins/stream.mixin.ts).
 * An opened alert that names users to tell is staged on it in the transaction that opens the
 * alert (evaluation.ts), message id the alert id, keyed by watcher so that one watcher's notices
 * reach a consumer in the order its alerts opened. The notifier reads it as the group "notifier"
 * (and takes the same message by `notifier.alerts.notify`).
 */

/** Whom a watcher's alerts are told, and how. */
export interface NotifyTo {
  email: boolean;
  sms: boolean;
  whatsapp: boolean;
  users: string[];
}

/** The condition an alert names, with its names as they were when it opened. */
export interface AlertCondition {
  monitor_id: string;
  monitor: string;
  tag_id: string;
  tag: string;
  tag_unit: string;
  comparison: string;
  threshold: number;
  value: number | null;
}

/** An opened alert with the names it had then: a message of the `alerts` stream. */
export interface AlertOpened {
  alert_id: string;
  watcher_id: string;
  watcher_name: string;
  trigger_id: string;
  trigger_name: string;
  severity: string;
  start_time: string;
  start_ts: number;
  site: string;
  plant: string;
  /** Where the alert is: the notifier tells only users whose scope covers it. */
  site_id: string;
  plant_id: string;
  /** The site's IANA time zone, in which the notifier shows times; absent on older notices (the notifier asks config). */
  timezone?: string;
  function: string;
  asset: string;
  monitor: string;
  tag: string;
  value: number | null;
  threshold: number | null;
  comparison: string;
  unit: string;
  conditions: AlertCondition[];
  notifyTo: NotifyTo;
  /**
   * A follow-up of the opening (followups.ts): `renotify:<n>`, `escalation:<tier>` or `shelf:<n>`,
   * staged with message id `<alert_id>:<followup>` and part of the notifier's idempotency key, so
   * each follow-up is sent once. Absent: the opening's own notice.
   */
  followup?: string;
  /** `no_data` when the alert is a silence (nodata.ts): `value` is null and `no_data` the trigger's duration. Absent: a condition. */
  reason?: "no_data";
  no_data?: string;
}

/** The streams alerting publishes, by name: `StreamConsumers<This, AlertingStreams>` types a consumer's handlers. */
export interface AlertingStreams {
  alerts: AlertOpened;
}

export const STREAMS = { alerts: "alerts" } as const satisfies { [K in keyof AlertingStreams]: K };
