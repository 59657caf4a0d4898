/** The KPI answer as the docs show it (announced with the service's other resources). */
import { arr, int, measured, obj, type JsonSchema } from "../../lib/openapi-schema";

const described = (schema: JsonSchema, description: string, example?: unknown): JsonSchema => ({
  ...schema,
  description,
  ...(example !== undefined ? { examples: [example] } : {}),
});
const text = (description: string, example: string): JsonSchema => described({ type: "string" }, description, example);
const uuid = (description: string, example: string): JsonSchema => described({ type: "string", format: "uuid" }, description, example);
const pct = (description: string): JsonSchema => measured("number", "%", description);
const WATCHER_ID = "e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b";

export const EXAMPLE_KPI = {
  from: "2026-01-01T00:00:00+00:00",
  to: "2026-01-31T00:00:00+00:00",
  alerts: 864,
  per_10min_avg: 0.2,
  per_10min_peak: 14,
  flood_percent: 0.05,
  priority_distribution: { high: 5.09, medium: 19.91, low: 75 },
  top_triggers: [{ trigger_id: "t1", trigger_name: "Bearing overheating", watcher_id: WATCHER_ID, count: 212, percent: 24.54 }],
  chattering: [{ trigger_id: "t1", trigger_name: "Bearing overheating", count: 212 }],
  stale: [{ alert_id: "0d9e8f7a-6b5c-4d3e-8f1a-2b3c4d5e6f70", trigger_name: "Seal leak", active_hours: 49.5 }],
  mean_time_to_ack_s: 184.5,
  mean_time_to_close_s: 912.25,
  unacknowledged_active: 3,
};

export const KPI_SCHEMAS = {
  AlertKpi: obj({
    from: described({ type: "string", format: "date-time" }, "start of the range, ISO 8601 with a numeric offset", EXAMPLE_KPI.from),
    to: described({ type: "string", format: "date-time" }, "end of the range, ISO 8601 with a numeric offset", EXAMPLE_KPI.to),
    alerts: described(int, "alerts that opened in the range"),
    per_10min_avg: measured("number", "alerts / 10 min", "mean openings per 10-minute window of the range (windows counted from `from`)"),
    per_10min_peak: measured("integer", "alerts / 10 min", "most openings in one 10-minute window"),
    flood_percent: pct("share of the range's 10-minute windows in which 10 or more alerts opened"),
    priority_distribution: described(
      obj({ high: pct("share of the alerts of severity 1"), medium: pct("share of the alerts of severity 2"), low: pct("share of the alerts of severity 3 and above") }),
      "the alerts by severity class, in percent",
    ),
    top_triggers: described(
      arr(
        obj({
          trigger_id: text("the trigger's id (unique within its watcher)", "t1"),
          trigger_name: text("the trigger's name on its newest alert", "Bearing overheating"),
          watcher_id: uuid("the trigger's watcher", WATCHER_ID),
          count: described(int, "its alerts that opened in the range"),
          percent: pct("its share of all the alerts of the range"),
        }),
      ),
      "the 10 triggers that opened most alerts, most first",
    ),
    chattering: described(
      arr(
        obj({
          trigger_id: text("the trigger's id", "t1"),
          trigger_name: text("the trigger's name on its newest alert", "Bearing overheating"),
          count: described(int, "its alerts that opened in the range"),
        }),
      ),
      "triggers that opened 3 or more alerts within 60 s somewhere in the range, most alerts first",
    ),
    stale: described(
      arr(
        obj({
          alert_id: uuid("the alert's id", EXAMPLE_KPI.stale[0].alert_id),
          trigger_name: text("its trigger's name", "Seal leak"),
          active_hours: measured("number", "h", "how long it has been active"),
        }),
      ),
      "alerts active now for more than 24 h, whenever they opened; the longest-standing first, at most 100",
    ),
    mean_time_to_ack_s: { ...measured("number", "s", "mean time from opening to acknowledgement of the range's acknowledged alerts; null when none"), type: ["number", "null"] },
    mean_time_to_close_s: { ...measured("number", "s", "mean time from opening to closing of the range's closed alerts; null when none"), type: ["number", "null"] },
    unacknowledged_active: described(int, "alerts active now and not acknowledged, whenever they opened"),
  }),
};
