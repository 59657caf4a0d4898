/**
 * Trigger `minimum_duration`: a number with a unit suffix.
 * `0s`, `2s`, `500ms`, `5m`, `1h`; a fraction is allowed (`1.5s`). Anything else is not a duration.
 */
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
const DURATION_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;

/** The longest hold a trigger may ask for; longer is a typo, not a rule. */
export const MAX_DURATION_MS = 30 * 24 * 3_600_000;

/** Milliseconds, or null when the text is not a duration this service understands. */
export function parseDuration(text: unknown): number | null {
  if (typeof text !== "string") return null;
  const m = DURATION_RE.exec(text.trim());
  if (!m) return null;
  const ms = Math.round(Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]);
  return Number.isFinite(ms) && ms <= MAX_DURATION_MS ? ms : null;
}
