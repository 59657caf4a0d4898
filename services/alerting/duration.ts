/**
 * Trigger `minimum_duration`: a number with a unit suffix.
 * `0s`, `2s`, `500ms`, `5m`, `1h`; a fraction is allowed (`1.5s`). Anything else is not a duration.
 */
import { parseDurationMs } from "../../lib/time";

/** The longest hold a trigger may ask for; longer is a typo, not a rule. */
export const MAX_DURATION_MS = 30 * 24 * 3_600_000;

/** Milliseconds, or null when the text is not a duration this service understands. */
export function parseDuration(text: unknown): number | null {
  // A trigger's hold is counted in ms, s, m or h; days are for the service's own settings.
  if (typeof text !== "string" || /d$/.test(text.trim())) return null;
  const ms = parseDurationMs(text);
  return ms !== undefined && ms <= MAX_DURATION_MS ? ms : null;
}
