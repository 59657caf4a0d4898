/**
 * Maintenance windows as the docs show them (announced with the service's other resources): a
 * window, and the watcher as its fetch answers it (the listed watcher plus its windows).
 */
import { arr, obj, ref, type JsonSchema } from "../../lib/openapi-schema";
import { ALERTING_SCHEMAS, EXAMPLE_WATCHER } from "./openapi";

const described = (schema: JsonSchema, description: string, example?: unknown): JsonSchema => ({
  ...schema,
  description,
  ...(example !== undefined ? { examples: [example] } : {}),
});

export const EXAMPLE_SUPPRESSION = {
  id: "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b",
  from: "2026-02-01T02:00:00+00:00",
  to: "2026-02-01T06:00:00+00:00",
  reason: "Bearing replacement on P-101",
  created_by: "asha.patil",
};

/** A watcher as fetched: the listed watcher plus its maintenance windows. */
export const EXAMPLE_WATCHER_DETAIL = { ...EXAMPLE_WATCHER, suppressions: [EXAMPLE_SUPPRESSION] };

const watcher = ALERTING_SCHEMAS.Watcher as { properties: Record<string, JsonSchema> };

export const SUPPRESSION_SCHEMAS = {
  Suppression: obj(
    {
      id: described({ type: "string", format: "uuid" }, "the window's id", EXAMPLE_SUPPRESSION.id),
      from: described({ type: "string", format: "date-time" }, "start of the window, ISO 8601 with a numeric offset", EXAMPLE_SUPPRESSION.from),
      to: described({ type: "string", format: "date-time" }, "end of the window, ISO 8601 with a numeric offset", EXAMPLE_SUPPRESSION.to),
      reason: described({ type: "string" }, "why alerts are suppressed meanwhile", EXAMPLE_SUPPRESSION.reason),
      created_by: described({ type: ["string", "null"] }, "the username of who made the window", EXAMPLE_SUPPRESSION.created_by),
    },
    ["id", "from", "to", "reason", "created_by"],
  ),
  WatcherDetail: obj({
    ...watcher.properties,
    suppressions: described(
      arr(ref("Suppression")),
      "its maintenance windows, earliest first: an alert whose start falls inside one opens suppressed and is not notified",
    ),
  }),
};
