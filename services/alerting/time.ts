/** Times at the alerting API's edges: alert start/end as ISO 8601 with a numeric offset, from/to ranges. */

/** `2025-01-31T08:15:02+00:00`: UTC, written with a numeric offset as the spec's Alert asks. */
export function isoWithOffset(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+00:00");
}

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

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

const ISO_RE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Epoch ms of an ISO 8601 date or date-time (no offset means UTC), or null. An offset's `+` sent
 * unescaped in a query string arrives as a space (`…T07:57:37 00:00`, an alert's own start_time
 * pasted into `from`): read back as the `+` it was.
 */
export function parseIso(text: string): number | null {
  const t = text.trim().replace(/(T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?) (\d{2}:?\d{2})$/i, "$1+$2");
  if (!ISO_RE.test(t)) return null;
  // Date.parse reads an offset-less date-time as local time; the API's times are UTC.
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(t) && t.length > 10;
  const ms = Date.parse(hasZone || t.length === 10 ? t : `${t.replace(" ", "T")}Z`);
  return Number.isFinite(ms) ? ms : null;
}
