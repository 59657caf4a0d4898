/**
 * Dates of the EMS operations: `from`/`to` (lib/time), trend buckets that follow
 * the site's time zone (hour, day, ISO week from Monday, month), and local date-time text.
 *
 * Time zones come from the runtime's own IANA database through Intl.DateTimeFormat: no library
 * is needed, and the rules are the ones Node (ICU) ships and updates.
 */
export { parseIsoDate } from "../../lib/time";
export { formatLocal, instantOf, isTimeZone, offsetAt } from "../../lib/time-zone";
import { instantOf, isTimeZone, wallOf } from "../../lib/time-zone";

export type Interval = "hourly" | "daily" | "weekly" | "monthly";

/** The range of an operation, epoch ms, `to` excluded. */
export interface Range {
  from: number;
  to: number;
}

/** The spellings accepted for `interval` (the spec's request form uses `month`). */
export const INTERVALS: Record<string, Interval> = {
  hourly: "hourly",
  hour: "hourly",
  daily: "daily",
  day: "daily",
  weekly: "weekly",
  week: "weekly",
  monthly: "monthly",
  month: "monthly",
};

const HOUR = 3_600_000;
const DAY = 86_400_000;

/** The zone a site's buckets follow: its `timezone`, UTC when it has none the runtime knows. */
export const zoneOf = (site: { timezone?: string | null }): string => (site.timezone && isTimeZone(site.timezone) ? site.timezone : "UTC");

/** The start of the local bucket that contains `ts`. */
export function bucketStart(ts: number, interval: Interval, timeZone: string): number {
  const w = wallOf(ts, timeZone);
  if (interval === "hourly") {
    // Offsets are whole quarter hours, so the local hour began at the last quarter-hour
    // boundary whose wall minutes were 0.
    return ts - ((w.minute * 60 + w.second) * 1000 + (((ts % 1000) + 1000) % 1000));
  }
  let day = w.day;
  if (interval === "monthly") day = 1;
  if (interval === "weekly") {
    const dow = new Date(Date.UTC(w.year, w.month - 1, w.day)).getUTCDay(); // 0 = Sunday
    day = w.day - ((dow + 6) % 7);
  }
  return instantOf(Date.UTC(w.year, w.month - 1, day), timeZone);
}

/** The start of the bucket after the one beginning at `start`. */
export function nextBucket(start: number, interval: Interval, timeZone: string): number {
  if (interval === "hourly") return start + HOUR;
  const w = wallOf(start, timeZone);
  // A day that began in a spring gap shows 01:00 at its start; its date is still the one to step from.
  const date = Date.UTC(w.year, w.month - 1, w.day);
  const next =
    interval === "daily"
      ? date + DAY
      : interval === "weekly"
        ? date + 7 * DAY
        : Date.UTC(w.year, w.month, 1);
  return instantOf(next, timeZone);
}

/** Starts of the local buckets covering [from, to): the first one contains `from`. */
export function bucketStarts(from: number, to: number, interval: Interval, timeZone: string, max = Infinity): number[] {
  const starts: number[] = [];
  for (let s = bucketStart(from, interval, timeZone); s < to; s = nextBucket(s, interval, timeZone)) {
    starts.push(s);
    if (starts.length > max) break;
  }
  return starts;
}
