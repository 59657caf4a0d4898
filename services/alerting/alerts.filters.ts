/**
 * What the alert list and count (and the alarm-management reads) filter by (docs/api-tour.md,
 * "Alarm management"): the place, exactly one of `function_id`, `plant_id`, `site_id`
 * (lib/validation's `$$oneOf`: none answers as the missing `function_id` always did), and the
 * optional `state`, `ack_state`, `severity`. Without the new keys the list and count answer as
 * before.
 */
import type { FieldDoc } from "../../lib/operations";
import { MAX_TEXT } from "../../lib/validation";
import type { AckState } from "./lifecycle";
import { MSG } from "./messages";
import { FUNCTION_FIELD } from "./openapi";
import type { SeverityKey } from "./severity";

const optionalText = { type: "string", max: MAX_TEXT, optional: true } as const;

export const PLACE_KEYS = ["function_id", "plant_id", "site_id"] as const;

export const ALERT_FILTER_PARAMS = {
  function_id: optionalText,
  plant_id: optionalText,
  site_id: optionalText,
  state: { type: "enum", values: ["active", "closed"], optional: true },
  ack_state: { type: "enum", values: ["unacknowledged", "acknowledged"], optional: true },
  severity: { type: "enum", values: ["high", "medium", "low"], optional: true },
  $$oneOf: [...PLACE_KEYS],
} as const;

export const ALERT_FILTER_FIELDS: Record<string, FieldDoc> = {
  function_id: { ...FUNCTION_FIELD, description: "the function whose alerts are meant (or give plant_id or site_id: exactly one of the three)" },
  plant_id: { description: "the plant whose alerts are meant, instead of function_id", example: "5a7d9c2b-1e3f-4a6b-8c9d-0e1f2a3b4c5d" },
  site_id: { description: "the site whose alerts are meant, instead of function_id", example: "7c8d9e0f-1a2b-4c3d-9e4f-5a6b7c8d9e0f" },
  state: { description: "only the alerts in this state (default: both)", example: "active" },
  ack_state: { description: "only the alerts in this acknowledgement state (default: both)", example: "unacknowledged" },
  severity: { description: "only the alerts of this severity class (severity 1 high, 2 medium, 3 and above low)", example: "high" },
};

export const PLACE_ERRORS: [number, string][] = [
  [400, MSG.functionDoesNotExist],
  [400, MSG.plantDoesNotExist],
  [400, MSG.siteDoesNotExist],
  [400, MSG.insufficientInputs],
  [400, MSG.excessInputs],
];

export interface AlertFilterParams {
  function_id?: string;
  plant_id?: string;
  site_id?: string;
  state?: "active" | "closed";
  ack_state?: AckState;
  severity?: SeverityKey;
}

export type AlertFilter = Omit<AlertFilterParams, "function_id" | "plant_id" | "site_id"> &
  ({ function_id: string } | { plant_id: string } | { site_id: string });
