/**
 * Alarm management's resources as the docs show them (docs/api-tour.md, "Alarm management"): the
 * fields alerts gain, an alert fetched with its history, the bulk acknowledgement's answer.
 */
import { arr, int, obj, ref, type JsonSchema } from "../../lib/openapi-schema";
import { HISTORY_ACTIONS } from "./lifecycle";

const described = (schema: JsonSchema, description: string, example?: unknown): JsonSchema => ({
  ...schema,
  description,
  ...(example !== undefined ? { examples: [example] } : {}),
});
const isoOrNull = (description: string, example: string | null): JsonSchema =>
  described({ type: ["string", "null"], format: "date-time" }, description, example);

/** Added to the Alert resource (openapi.ts). */
export const ALERT_LIFECYCLE_FIELDS: Record<string, JsonSchema> = {
  ack_state: described(
    { type: "string", enum: ["unacknowledged", "acknowledged"] },
    "whether an operator has acknowledged it; an alert that closed unacknowledged stays so until acknowledged",
    "unacknowledged",
  ),
  acked_by: described({ type: ["string", "null"] }, "the username that acknowledged it; null while unacknowledged", null),
  acked_at: isoOrNull("when it was acknowledged, ISO 8601 with a numeric offset; null while unacknowledged", null),
  shelved_until: isoOrNull("while shelved, when the shelf ends (ISO 8601 with a numeric offset); null when not shelved or the shelf has ended", null),
  assignee: described({ type: ["string", "null"] }, "the username it is assigned to; null when unassigned", null),
  suppressed: described({ type: "boolean" }, "opened inside a maintenance window of its watcher, so not notified", false),
  reason: described({ type: "string", enum: ["condition", "no_data"] }, "why it opened: its trigger's conditions held, or a tag sent no reading for too long", "condition"),
};

export const LIFECYCLE_SCHEMAS = {
  AlertHistoryEntry: obj({
    at: described({ type: "string", format: "date-time" }, "when, ISO 8601 with a numeric offset", "2026-01-31T08:15:40+00:00"),
    by: described({ type: ["string", "null"] }, "the username that acted; null for the system (opened, closed, notified, escalated)", "asha.patil"),
    action: described({ type: "string", enum: [...HISTORY_ACTIONS] }, "what happened", "acknowledged"),
    detail: described(
      { type: ["string", "null"] },
      "the acknowledgement's note, the shelf's reason, the assignee, the note added, or what the system says; null when nothing more",
      "Checking the bearing",
    ),
  }),
  AlertWithHistory: {
    allOf: [ref("Alert"), obj({ history: described(arr(ref("AlertHistoryEntry")), "what happened to the alert, oldest first") })],
    description: "an alert as listed, with its history",
  },
  AlertsAcknowledged: obj({
    acknowledged: described(int, "how many of the alerts became acknowledged (already acknowledged, unknown or out-of-scope ids not counted)", 1),
  }),
};
