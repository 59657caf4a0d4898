/** Times at the alerting API's edges: alert start/end as ISO 8601 with a numeric offset, from/to ranges. */
import { DAY_MS, HOUR_MS, parseIsoDate } from "../../lib/time";

/** `2025-01-31T08:15:02+00:00`: UTC, written with a numeric offset as the spec's Alert asks. */
export function isoWithOffset(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+00:00");
}

export { DAY_MS, HOUR_MS };

export interface Range {
  from: number;
  to: number;
}

/**
 * The from/to range of alert count, list and trend: both ISO 8601, defaulting to the last 7 days
 * (spec: Limits). Returns the name of the field that does not parse, or the range.
 */
export function rangeOf(from: string | undefined, to: string | undefined, now = Date.now()): Range | { invalid: "from" | "to" } {
  const toMs = to === undefined || to === "" ? now : parseIso(to);
  if (toMs === null) return { invalid: "to" };
  const fromMs = from === undefined || from === "" ? toMs - 7 * DAY_MS : parseIso(from);
  if (fromMs === null || fromMs > toMs) return { invalid: "from" };
  return { from: fromMs, to: toMs };
}

/** Epoch ms of an ISO 8601 date or date-time (no offset means UTC), or null (lib/time). */
export function parseIso(text: string): number | null {
  return parseIsoDate(text) ?? null;
}
