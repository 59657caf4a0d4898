/** Times read at the API's edges: ISO 8601 `from`/`to` of alerting, cm and ems; the lengths every service counts in. */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

const UNIT_MS = { ms: 1, s: 1000, m: MINUTE_MS, h: HOUR_MS, d: DAY_MS } as const;
const DURATION_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;

/** A length written with its unit (`500ms`, `1.5s`, `5m`, `1h`, `2d`) in ms; undefined for anything else. */
export function parseDurationMs(text: string): number | undefined {
  const m = DURATION_RE.exec(text.trim());
  if (!m) return undefined;
  const ms = Math.round(Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]);
  return Number.isFinite(ms) ? ms : undefined;
}

const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Epoch ms of an ISO 8601 date or date-time (UTC unless it carries an offset); undefined when it
 * does not parse or names no real instant (31 February, hour 24). An offset's `+` sent unescaped
 * in a query string arrives as a space (`…T07:57:37 05:30`, an alert's own start_time pasted into
 * `from`): it is read back as the `+` it was.
 */
export function parseIsoDate(text: string): number | undefined {
  const m = ISO_RE.exec(text.trim().replace(/([T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?) (\d{2}(?::?\d{2})?)$/i, "$1+$2"));
  if (!m) return undefined;
  const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "", zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = frac ? Math.floor(Number(`0.${frac}`) * 1000) : 0;
  const wall = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  // Date.UTC rolls 31 February over into March; a date that rolls over does not exist.
  if (new Date(wall).getUTCDate() !== day) return undefined;
  let offsetMin = 0;
  if (zone && zone.toUpperCase() !== "Z") {
    const digits = zone.slice(1).replace(":", "");
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return undefined;
    offsetMin = (zone[0] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  return wall - offsetMin * 60_000;
}
