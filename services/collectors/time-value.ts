/**
 * A source's time value as epoch ms (docs/collectors.md#times). Pure.
 *
 * A value is read as `time_field_format` says: `epoch_s` or `epoch_ms` for numbers, or a pattern
 * of `%Y %m %d %H %M %S %f %z` (and `%y`, `%b`; any other character stands for itself). Without a
 * format: a number is epoch seconds below 10^11 and epoch ms above; a text is ISO 8601 (a space
 * for the `T` allowed). A time without a zone is the site's wall time, as plant databases keep local
 * time; one the server gives in UTC without saying so (`utc`) is UTC.
 */
import { instantOf, type Wall } from "../../lib/time-zone";

const ISO = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/** A wall time (lib/time-zone.ts) with its milliseconds, and the zone its text named. */
interface Parts extends Wall {
  ms: number;
  /** Minutes east of UTC; undefined when the text names no zone. */
  offset?: number;
}

const fraction = (digits: string | undefined): number => (digits ? Math.round(Number(`0.${digits}`) * 1000) : 0);

function offsetOf(zone: string): number {
  if (zone.toUpperCase() === "Z") return 0;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (!m) return NaN;
  return (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0));
}

function isoParts(text: string): Parts | null {
  const m = ISO.exec(text.trim());
  if (!m) return null;
  return {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    ms: fraction(m[7]),
    offset: m[8] === undefined ? undefined : offsetOf(m[8]),
  };
}

const TOKENS: Record<string, { re: string; set(p: Parts, v: string): void }> = {
  Y: { re: "(\\d{4})", set: (p, v) => void (p.year = Number(v)) },
  y: { re: "(\\d{2})", set: (p, v) => void (p.year = 2000 + Number(v)) },
  m: { re: "(\\d{1,2})", set: (p, v) => void (p.month = Number(v)) },
  b: { re: "([A-Za-z]{3})", set: (p, v) => void (p.month = MONTHS.indexOf(v.toLowerCase()) + 1) },
  d: { re: "(\\d{1,2})", set: (p, v) => void (p.day = Number(v)) },
  H: { re: "(\\d{1,2})", set: (p, v) => void (p.hour = Number(v)) },
  M: { re: "(\\d{2})", set: (p, v) => void (p.minute = Number(v)) },
  S: { re: "(\\d{2})", set: (p, v) => void (p.second = Number(v)) },
  f: { re: "(\\d{1,9})", set: (p, v) => void (p.ms = fraction(v)) },
  z: { re: "(Z|[+-]\\d{2}:?\\d{2})", set: (p, v) => void (p.offset = offsetOf(v)) },
};

interface Compiled {
  re: RegExp;
  setters: ((p: Parts, v: string) => void)[];
}

const patterns = new Map<string, Compiled>();

/** A `%`-pattern as a regular expression and what each group sets; null when it names an unknown directive. */
function compile(format: string): Compiled | null {
  const known = patterns.get(format);
  if (known) return known;
  let re = "";
  const setters: ((p: Parts, v: string) => void)[] = [];
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== "%") {
      re += c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      continue;
    }
    const token = TOKENS[format[++i] ?? ""];
    if (!token) return null;
    re += token.re;
    setters.push(token.set);
  }
  const compiled = { re: new RegExp(`^${re}$`), setters };
  patterns.set(format, compiled);
  return compiled;
}

function patternParts(text: string, format: string): Parts | null {
  const compiled = compile(format);
  const m = compiled?.re.exec(text.trim());
  if (!compiled || !m) return null;
  const p: Parts = { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0, ms: 0 };
  compiled.setters.forEach((set, i) => set(p, m[i + 1]!));
  return p;
}

/** Whether `time_field_format` is one this reader knows. */
export function isTimeFormat(format: string): boolean {
  return format === "epoch_s" || format === "epoch_ms" || compile(format) !== null;
}

function instant(p: Parts, timeZone: string, utc: boolean): number | null {
  if (p.month < 1 || p.month > 12 || p.day < 1 || p.day > 31 || p.hour > 23 || p.minute > 59 || p.second > 60) return null;
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second, p.ms);
  if (p.offset !== undefined) return Number.isNaN(p.offset) ? null : wall - p.offset * 60_000;
  return utc ? wall : instantOf(wall, timeZone);
}

/** The value as epoch ms; null when it is no time this format reads. */
export function epochMsOf(value: unknown, opts: { format?: string; timeZone: string; utc?: boolean }): number | null {
  if (value === null || value === undefined) return null;
  const text = String(value).trim();
  const numeric = typeof value === "number" || typeof value === "bigint" || /^-?\d+(\.\d+)?$/.test(text);
  const { format } = opts;
  if (numeric && (!format || format === "epoch_s" || format === "epoch_ms")) {
    const n = Number(text);
    if (!Number.isFinite(n)) return null;
    const ms = format === "epoch_ms" || (!format && Math.abs(n) >= 1e11) ? n : n * 1000;
    return Math.round(ms);
  }
  if (format === "epoch_s" || format === "epoch_ms") return null;
  const parts = format ? patternParts(text, format) : isoParts(text);
  return parts && instant(parts, opts.timeZone, opts.utc ?? false);
}
