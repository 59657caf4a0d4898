/**
 * The resources alerting answers with, as the docs show them (announced in the service's
 * `openapi` setting), and the field docs its operations share.
 */
import { arr, int, measured, obj, ref, str, type JsonSchema } from "../../lib/openapi-schema";
import type { FieldDoc } from "../../lib/operations";
import { COMPARISONS } from "./evaluator";
import { ALERT_LIFECYCLE_FIELDS } from "./lifecycle.openapi";

const described = (schema: JsonSchema, description: string, example?: unknown): JsonSchema => ({
  ...schema,
  description,
  ...(example !== undefined ? { examples: [example] } : {}),
});
const uuid = (description: string, example: string): JsonSchema => described({ type: "string", format: "uuid" }, description, example);
const epochMs = (description: string): JsonSchema => measured("integer", "epoch ms", description);
const flag = (description: string): JsonSchema => described({ type: "integer", enum: [0, 1] }, description);
const byClass = (item: JsonSchema, what: string): Record<string, JsonSchema> =>
  Object.fromEntries(["high", "medium", "low"].map((k) => [k, described(item, `${what} of ${k} severity`)]));

const MONITOR_ID = "9b2f6c1e-4d3a-4f7b-8e21-5c6d7e8f9a01";
const FUNCTION_ID = "3f1c2a9e-8a61-4a4e-9d0b-2b7f6c1d5e42";
const PLANT_ID = "5a7d9c2b-1e3f-4a6b-8c9d-0e1f2a3b4c5d";
const SITE_ID = "7c8d9e0f-1a2b-4c3d-9e4f-5a6b7c8d9e0f";
const GATEWAY_ID = "c4d5e6f7-8a9b-4c0d-8e1f-2a3b4c5d6e7f";
const WATCHER_ID = "e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b";

export const EXAMPLE_TRIGGER = {
  id: "t1",
  name: "Bearing overheating",
  minimum_duration: "30s",
  condition: [{ comparison: ">=", monitor_id: MONITOR_ID, tag_id: "temp", threshold: "80" }],
  notifyTo: { email: true, sms: false, whatsapp: false, users: ["asha.patil"] },
  severity: 1,
  trigger_relation: "AND",
};

/** A watcher as fetched, for the docs' answer examples. */
export const EXAMPLE_WATCHER = {
  watcher_id: WATCHER_ID,
  watcher_name: "Pump bearings",
  function_id: FUNCTION_ID,
  plant_id: PLANT_ID,
  site_id: SITE_ID,
  gateway_id: GATEWAY_ID,
  gateway_name: "Pune Works edge 1",
  is_enabled: 1,
  is_hidden: 0,
  created_at_time: 1767225600000,
  last_update_time: 1767312000000,
  latest_alert_date: 1769847302000,
  total_alerts: 4,
  triggers: [EXAMPLE_TRIGGER],
};

/** An alert as listed, for the docs' answer examples. */
export const EXAMPLE_ALERT = {
  _id: "0d9e8f7a-6b5c-4d3e-8f1a-2b3c4d5e6f70",
  asset: "Pump P-101",
  duration: 95,
  start_time: "2026-01-31T08:15:02+00:00",
  end_time: "2026-01-31T08:16:37+00:00",
  monitor: "Bearing DE",
  monitor_id: MONITOR_ID,
  note: "",
  severity: "High",
  state: "closed",
  tag: { temp: "Temperature" },
  trigger_id: "t1",
  trigger_name: "Bearing overheating",
  type_of_data: "Condition",
  watcher_id: WATCHER_ID,
  watcher_name: "Pump bearings",
  ack_state: "acknowledged",
  acked_by: "asha.patil",
  acked_at: "2026-01-31T08:15:40+00:00",
  shelved_until: null,
  assignee: "asha.patil",
  suppressed: false,
  reason: "condition",
};

/** Where an alert stands, as the alarm summary lists it. */
export const EXAMPLE_PLACE = { asset_id: "2b3c4d5e-6f70-4a8b-9c0d-1e2f3a4b5c6d", function_id: FUNCTION_ID, plant_id: PLANT_ID, site_id: SITE_ID };

export const ALERTING_SCHEMAS = {
  Condition: obj(
    {
      comparison: described({ type: "string", enum: [...COMPARISONS] }, "how the tag's value is compared with the threshold", ">="),
      monitor_id: uuid("the monitor whose tag is watched (in the watcher's plant)", MONITOR_ID),
      tag_id: described(str, "the monitor tag whose readings are compared", "temp"),
      threshold: described(str, "the value compared against: a number written as text (a JSON number is taken too), in the tag's unit; " +
          "or an ISO 20816-3 zone `zone:A` to `zone:D` on a velocity tag (mm/s) with >= (that zone or worse) or == (that zone), " +
          "read against the boundaries of the monitor's asset when the watcher is saved; deadband does not apply to it",
        "80"),
    },
    ["comparison", "monitor_id", "tag_id", "threshold"],
  ),
  NotifyTo: obj(
    {
      email: described({ type: "boolean" }, "send an email to each user"),
      sms: described({ type: "boolean" }, "send an SMS to each user"),
      whatsapp: described({ type: "boolean" }, "send a WhatsApp message to each user"),
      users: described(arr(str), "usernames of the users to notify", ["asha.patil"]),
    },
    ["email", "sms", "whatsapp", "users"],
  ),
  EscalationTier: obj(
    {
      after: {
        ...described(str, "how long after the alert's opening (its start_time) the tier is told if nobody has acknowledged it; a number with a unit suffix ms, s, m or h", "15m"),
        "x-unit": "ms | s | m | h (suffix)",
      },
      users: described(arr(str), "usernames of the tier's users, at least one", ["shift.lead@example.com"]),
      email: described({ type: "boolean" }, "send them an email (default false; at least one medium)"),
      sms: described({ type: "boolean" }, "send them an SMS (default false)"),
      whatsapp: described({ type: "boolean" }, "send them a WhatsApp message (default false)"),
    },
    ["after", "users"],
  ),
  Trigger: obj(
    {
      id: described(str, "the trigger's id, unique within its watcher", "t1"),
      name: described(str, "the trigger's name, shown on its alerts", "Bearing overheating"),
      minimum_duration: {
        ...described(str, "how long the conditions must hold before an alert opens: a number with a unit suffix ms, s, m or h", "30s"),
        "x-unit": "ms | s | m | h (suffix)",
      },
      condition: described(arr(ref("Condition")), "the conditions; a trigger without any never fires"),
      notifyTo: ref("NotifyTo"),
      severity: described({ type: "integer", minimum: 1 }, "importance, lower is higher: 1 High, 2 Medium, 3 and above Low", 1),
      trigger_relation: described({ type: "string", enum: ["AND", "OR"] }, "how the conditions combine", "AND"),
      deadband: {
        ...described(
          str,
          "optional hysteresis on clear, a number ≥ 0 written as text in the tags' unit: once holding, a > or >= condition stops holding only below threshold − deadband (a < or <= one only above threshold + deadband); exactly there it still holds",
          "2",
        ),
        "x-unit": "the tag's unit",
      },
      clear_delay: {
        ...described(str, "optional off-delay: the conditions must stop holding this long before an active alert closes; a number with a unit suffix ms, s, m or h", "30s"),
        "x-unit": "ms | s | m | h (suffix)",
      },
      no_data: {
        ...described(
          str,
          "optional: while the watcher's gateway (pipeline) is running, no reading of a condition's tag for this long opens an alert with reason no_data; the tag's next reading closes it; a number with a unit suffix ms, s, m or h, more than 0",
          "5m",
        ),
        "x-unit": "ms | s | m | h (suffix)",
      },
      renotify_every: {
        ...described(
          str,
          "optional: notify notifyTo again every this long while the alert is active, unacknowledged and not shelved (`notified` in its history each time); a number with a unit suffix ms, s, m or h, more than 0",
          "30m",
        ),
        "x-unit": "ms | s | m | h (suffix)",
      },
      escalation: described(
        arr(ref("EscalationTier")),
        "optional tiers, at most 10: an alert still unacknowledged `after` its opening notifies the tier's users too, once per tier (`escalated` in its history); a shelf pauses a tier until it ends",
      ),
    },
    ["id", "name", "minimum_duration", "notifyTo", "severity", "trigger_relation"],
  ),
  Watcher: obj({
    watcher_id: uuid("the watcher's id", WATCHER_ID),
    watcher_name: described(str, "the watcher's name", "Pump bearings"),
    function_id: uuid("the function it watches", FUNCTION_ID),
    plant_id: uuid("the function's plant", PLANT_ID),
    site_id: uuid("the plant's site", SITE_ID),
    gateway_id: uuid("the gateway (pipeline) whose readings it watches; one watcher per gateway", GATEWAY_ID),
    gateway_name: described(str, "the gateway's name (its id when the gateway is unknown)", "Pune Works edge 1"),
    is_enabled: flag("1 enabled, 0 disabled (a disabled watcher opens no alerts)"),
    is_hidden: flag("1 for a system watcher, made for a condition gateway from its monitors' thresholds"),
    created_at_time: epochMs("when the watcher was created"),
    last_update_time: epochMs("when the watcher was last changed"),
    latest_alert_date: { ...measured("integer", "epoch ms", "start of its newest alert; null when it has none"), type: ["integer", "null"] },
    total_alerts: described(int, "alerts it has opened"),
    triggers: described(arr(ref("Trigger")), "its alert rules"),
  }),
  Alert: obj({
    _id: uuid("the alert's id", "0d9e8f7a-6b5c-4d3e-8f1a-2b3c4d5e6f70"),
    asset: described(str, "the name of the monitor's asset (empty when the monitor has none)", "Pump P-101"),
    duration: measured("integer", "s", "how long it held, or has held so far while active"),
    start_time: described({ type: "string", format: "date-time" }, "when it opened, ISO 8601 with a numeric offset", "2026-01-31T08:15:02+00:00"),
    end_time: described({ type: ["string", "null"], format: "date-time" }, "when it closed, ISO 8601 with a numeric offset; null while active", null),
    monitor: described(str, "the monitor's name", "Bearing DE"),
    monitor_id: uuid("the monitor of its first condition", MONITOR_ID),
    note: described(str, "the note added to it; empty by default", ""),
    severity: described({ type: "string", enum: ["High", "Medium", "Low"] }, "its trigger's severity class"),
    state: described({ type: "string", enum: ["active", "closed"] }, "active while the conditions hold, then closed"),
    tag: described({ type: "object", additionalProperties: str }, "tag id to tag name, for the tags of its conditions", { temp: "Temperature" }),
    trigger_id: described(str, "the trigger that opened it", "t1"),
    trigger_name: described(str, "the trigger's name", "Bearing overheating"),
    type_of_data: described(str, "the gateway's data type (Condition, Process, Energy, Production, Others)", "Condition"),
    watcher_id: uuid("the trigger's watcher", WATCHER_ID),
    watcher_name: described(str, "the watcher's name", "Pump bearings"),
    ...ALERT_LIFECYCLE_FIELDS,
  }),
  ActiveAlerts: obj({
    unacknowledged: described(obj(byClass(int, "active alerts, not shelved, not yet acknowledged")), "what still wants an operator, by severity class"),
    active: described(obj(byClass(int, "active alerts, not shelved")), "the active alerts by severity class; shelved ones are counted apart"),
    shelved: described(int, "active alerts shelved now"),
    alerts: described(
      arr({
        allOf: [
          ref("Alert"),
          obj({
            asset_id: described({ type: ["string", "null"], format: "uuid" }, "the asset of its monitor; null when the monitor has none", EXAMPLE_PLACE.asset_id),
            function_id: described({ type: ["string", "null"], format: "uuid" }, "its function; null for a gateway's alerts placed at the plant", FUNCTION_ID),
            plant_id: uuid("its plant", PLANT_ID),
            site_id: uuid("its site", SITE_ID),
          }),
        ],
      }),
      "the active alerts, shelved included, newest first",
    ),
  }),
  AlertCount: obj(byClass(int, "alerts that started in the range")),
  AlertTrend: obj(
    byClass(
      arr(
        obj({
          time: measured("integer", "epoch ms", "the bucket's start: a UTC hour when the range is at most 2 days, else a UTC day"),
          total: described(int, "alerts that started in the bucket"),
        }),
      ),
      "one point per bucket, zeros included, for alerts",
    ),
  ),
};

/** Documentation of the ids and ranges several operations take. */
export const FUNCTION_FIELD: FieldDoc = { description: "the function whose watchers or alerts are meant", example: FUNCTION_ID };

export const RANGE_FIELDS: Record<"from" | "to", FieldDoc> = {
  from: { description: "start of the range, ISO 8601 (default: 7 days before `to`)", example: "2026-01-01T00:00:00+05:30" },
  to: { description: "end of the range, ISO 8601 (default: now)", example: "2026-01-08T00:00:00+05:30" },
};

/** The watcher body of create and update, and the query of their no-body variants. */
export const WATCHER_FIELDS: Record<string, FieldDoc> = {
  watcher_name: { required: true, description: "the watcher's name", example: "Pump bearings" },
  function_id: { required: true, description: "the function it watches", example: FUNCTION_ID },
  plant_id: { required: true, description: "the function's plant", example: PLANT_ID },
  site_id: { required: true, description: "the plant's site", example: SITE_ID },
  gateway_id: { required: true, description: "the gateway (pipeline) whose readings it watches, in the same plant; one watcher per gateway", example: GATEWAY_ID },
  is_enabled: { required: true, type: "integer", enum: [1, 0], description: "1 enabled, 0 disabled", example: 1 },
  triggers: { required: true, type: "$Trigger[]", description: "its alert rules; ids unique within the watcher", example: [EXAMPLE_TRIGGER] },
  pipeline_id: {
    in: "query",
    description: "with is_hidden=1 and no body: the condition gateway whose system watcher is made from its monitors' thresholds",
    example: GATEWAY_ID,
  },
  is_hidden: { in: "query", type: "integer", enum: [0, 1], description: "1 with pipeline_id and no body: the system watcher variant", example: 1 },
  // Read-only fields of a watcher read back and sent again: accepted and ignored.
  watcher_id: { hidden: true },
  gateway_name: { hidden: true },
  created_at_time: { hidden: true },
  last_update_time: { hidden: true },
  latest_alert_date: { hidden: true },
  total_alerts: { hidden: true },
  suppressions: { hidden: true },
};
