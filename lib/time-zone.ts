/**
 * Time zones as the runtime's own IANA database (ICU, through Intl.DateTimeFormat) knows them:
 * whether a name is a zone, its offset at an instant, wall time and back, and local ISO text.
 * Offsets are found once per zone and year and then computed, so a trend of 100,000 buckets
 * asks ICU a few dozen times, not 100,000. Pure.
 */

const DAY = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether the runtime knows the zone name. */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

export interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The zone's offset at `ts` as ICU reports it: exact, and slow (one formatToParts). */
function intlOffset(ts: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ts))) {
    if (p.type !== "literal") parts[p.type] = Number(p.value);
  }
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall - (ts - (((ts % 1000) + 1000) % 1000));
}

interface YearOffsets {
  /** Offset in force at the start of the span. */
  base: number;
  /** Offset changes in the span, in time order. */
  changes: { at: number; offset: number }[];
}

const WEEK = 7 * DAY;
const yearCache = new Map<string, YearOffsets>();

/**
 * A zone's offset changes in a UTC year (with a day's margin), found by asking ICU once a week
 * and bisecting to the second where two answers differ: about 60 ICU calls a zone and year,
 * cached, after which every offset is arithmetic. (No zone changes offset twice within a week.)
 */
function offsetsOf(timeZone: string, year: number): YearOffsets {
  const key = `${timeZone}|${year}`;
  let hit = yearCache.get(key);
  if (hit) return hit;
  const from = Date.UTC(year, 0, 1) - DAY;
  const to = Date.UTC(year + 1, 0, 1) + DAY;
  const base = intlOffset(from, timeZone);
  const changes: { at: number; offset: number }[] = [];
  let prevTs = from;
  let prev = base;
  for (let ts = Math.min(from + WEEK, to); ; ts = Math.min(ts + WEEK, to)) {
    const off = intlOffset(ts, timeZone);
    if (off !== prev) {
      let lo = prevTs;
      let hi = ts;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (intlOffset(mid, timeZone) === prev) lo = mid;
        else hi = mid;
      }
      changes.push({ at: hi, offset: off });
      prev = off;
    }
    prevTs = ts;
    if (ts >= to) break;
  }
  hit = { base, changes };
  if (yearCache.size > 1000) yearCache.clear();
  yearCache.set(key, hit);
  return hit;
}

/** The zone's offset from UTC at instant `ts`, in ms (whole seconds). */
export function offsetAt(ts: number, timeZone: string): number {
  formatter(timeZone); // refuses an unknown zone
  const { base, changes } = offsetsOf(timeZone, new Date(ts).getUTCFullYear());
  let offset = base;
  for (const c of changes) {
    if (ts < c.at) break;
    offset = c.offset;
  }
  return offset;
}

export function wallOf(ts: number, timeZone: string): Wall {
  const d = new Date(ts + offsetAt(ts, timeZone));
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
}

/**
 * The instant at which the wall clock of `timeZone` shows `wallMs` (a Date.UTC of the wall time).
 * An ambiguous wall time (autumn) is its first occurrence; one that does not exist (a spring gap)
 * is the instant the gap ends, which is when that local day or hour actually begins.
 */
export function instantOf(wallMs: number, timeZone: string): number {
  const offsets = new Set([offsetAt(wallMs - DAY / 2, timeZone), offsetAt(wallMs, timeZone), offsetAt(wallMs + DAY / 2, timeZone)]);
  const candidates = [...offsets].map((o) => wallMs - o).sort((a, b) => a - b);
  const exact = candidates.find((c) => c + offsetAt(c, timeZone) === wallMs);
  return exact ?? candidates[candidates.length - 1];
}

const pad = (n: number, width = 2): string => String(Math.abs(n)).padStart(width, "0");

/** `2025-03-30T03:00:00+02:00`: the local wall time with the zone's offset at that instant. */
export function formatLocal(ts: number, timeZone: string): string {
  const w = wallOf(ts, timeZone);
  const off = Math.round(offsetAt(ts, timeZone) / 60_000);
  const sign = off < 0 ? "-" : "+";
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${sign}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
}
