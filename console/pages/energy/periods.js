// @ts-check
// The periods of the Energy view and the period each is compared with, in the plant's site time
// zone: "this month" at a plant in Pune starts at midnight in Pune whatever the browser's zone,
// as the service's own trend buckets do (docs/api-tour.md, "Condition monitoring and energy").
import { formatTime } from "../../lib/prefs.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The wall-clock fields of an instant in a zone.
 * @param {number} ms
 * @param {string} timeZone
 */
function wallOf(ms, timeZone) {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  }).formatToParts(new Date(ms));
  const get = (/** @type {Intl.DateTimeFormatPartTypes} */ type) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { year: get("year"), month: get("month"), day: get("day"), hour: get("hour"), minute: get("minute"), second: get("second") };
}

/**
 * The instant whose wall clock in `timeZone` reads the given UTC-encoded wall time.
 * @param {number} wallMs
 * @param {string} timeZone
 */
function instantOf(wallMs, timeZone) {
  let guess = wallMs;
  // Two rounds settle the zone's offset, a daylight-saving change included.
  for (let i = 0; i < 2; i++) {
    const w = wallOf(guess, timeZone);
    const shown = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
    guess += wallMs - shown;
  }
  return guess;
}

/**
 * A zone the runtime knows, else the browser's own.
 * @param {string | null | undefined} timeZone
 */
export function zoneOr(timeZone) {
  if (!timeZone) return Intl.DateTimeFormat().resolvedOptions().timeZone;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return timeZone;
  } catch {
    return Intl.DateTimeFormat().resolvedOptions().timeZone;
  }
}

/**
 * Midnight of the local day (offset by `days`) that contains `ms`.
 * @param {number} ms
 * @param {string} tz
 */
function dayStart(ms, tz, days = 0) {
  const w = wallOf(ms, tz);
  return instantOf(Date.UTC(w.year, w.month - 1, w.day + days), tz);
}

/**
 * The first of the local month (offset by `months`) that contains `ms`.
 * @param {number} ms
 * @param {string} tz
 */
function monthStart(ms, tz, months = 0) {
  const w = wallOf(ms, tz);
  return instantOf(Date.UTC(w.year, w.month - 1 + months, 1), tz);
}

/**
 * `ms` moved by whole months on the wall clock, the day kept within the shorter month (31 March → 28 February).
 * @param {number} ms
 * @param {string} tz
 * @param {number} months
 */
function shiftMonths(ms, tz, months) {
  const w = wallOf(ms, tz);
  const lastDay = new Date(Date.UTC(w.year, w.month - 1 + months + 1, 0)).getUTCDate();
  return instantOf(Date.UTC(w.year, w.month - 1 + months, Math.min(w.day, lastDay), w.hour, w.minute, w.second), tz);
}

/**
 * The periods offered: each gives its range [from, to) for `now`, and the range it is compared
 * with: the same stretch of the month (or year) before for calendar periods, else the stretch
 * of equal length just before.
 */
/**
 * A range of time: [fromMs, toMs).
 * @typedef {[number, number]} Range
 */
/**
 * A period offered: its range for `now` in the zone `tz`, and the range compared with it (custom
 * dates have neither).
 * @typedef {{ id: string, label: string, range?: (now: number, tz: string) => Range, previous?: (range: Range, tz: string) => Range }} PeriodChoice
 */
/**
 * @type {PeriodChoice[]}
 */
export const PERIODS = [
  { id: "today", label: "Today", range: (now, tz) => [dayStart(now, tz), now], previous: ([f, t], tz) => [dayStart(f, tz, -1), t - DAY] },
  { id: "7d", label: "Last 7 days", range: (now, tz) => [dayStart(now, tz, -6), now], previous: ([f, t], tz) => [dayStart(f, tz, -7), t - 7 * DAY] },
  { id: "30d", label: "Last 30 days", range: (now, tz) => [dayStart(now, tz, -29), now], previous: ([f, t], tz) => [dayStart(f, tz, -30), t - 30 * DAY] },
  { id: "month", label: "This month", range: (now, tz) => [monthStart(now, tz), now], previous: ([f, t], tz) => [monthStart(f, tz, -1), Math.min(shiftMonths(t, tz, -1), f)] },
  { id: "last-month", label: "Last month", range: (now, tz) => [monthStart(now, tz, -1), monthStart(now, tz)], previous: ([f], tz) => [monthStart(f, tz, -1), f] },
  { id: "year", label: "This year", range: (now, tz) => [monthStart(now, tz, -(wallOf(now, tz).month - 1)), now], previous: ([f, t], tz) => [shiftMonths(f, tz, -12), shiftMonths(t, tz, -12)] },
  { id: "custom", label: "Custom dates" },
];

/**
 * `YYYY-MM-DD` of a date input as the local midnight of the site (plus `days`).
 * @param {string | undefined} text
 * @param {string} tz
 */
function dateInput(text, tz, days = 0) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text ?? "");
  return m ? instantOf(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + days), tz) : null;
}

/**
 * `YYYY-MM-DD` of an instant in the zone, for a date input's value.
 * @param {number} ms
 * @param {string} tz
 */
export function dateValue(ms, tz) {
  const w = wallOf(ms, tz);
  return `${w.year}-${String(w.month).padStart(2, "0")}-${String(w.day).padStart(2, "0")}`;
}

/**
 * The chosen period: `{id, label, range, previous}` with ranges as [fromMs, toMs). Custom dates
 * run from the first day's midnight to the end of the last day (the "To" date is included).
 * `now` is rounded down to the minute, so that the requests stay the same between renders.
 * @param {Record<string, string>} query the route's query: `period`, and `from`, `to` of custom dates
 * @param {string} tz
 */
export function periodOf(query, tz, now = Date.now()) {
  const minute = now - (now % 60_000);
  const def = /** @type {PeriodChoice} */ (PERIODS.find((p) => p.id === query.period) ?? PERIODS.find((p) => p.id === "month"));
  /** @type {Range} */
  let range;
  if (def.id === "custom") {
    const from = dateInput(query.from, tz);
    const to = dateInput(query.to, tz, 1);
    range = from !== null && to !== null && from < to ? [from, Math.min(to, minute)] : [dayStart(minute, tz, -6), minute];
  } else {
    // Every period but custom dates has its range.
    range = /** @type {NonNullable<PeriodChoice["range"]>} */ (def.range)(minute, tz);
  }
  /** @type {Range} */
  const previous = def.previous ? def.previous(range, tz) : [range[0] - (range[1] - range[0]), range[0]];
  return { id: def.id, label: def.label, range, previous };
}

/**
 * A range as people read it, with its zone: the site's days (`2026-11-01 – 2026-11-30
 * (Asia/Kolkata)`) when both ends are the site's midnights, else two times in the console's one
 * format and display zone.
 * @param {Range} range
 * @param {string} tz the site's zone
 */
export function rangeLabel([from, to], tz) {
  const fw = wallOf(from, tz);
  const tw = wallOf(to, tz);
  if (fw.hour + fw.minute === 0 && tw.hour + tw.minute === 0) {
    // A range ending at midnight ends with the day before it.
    return `${dateValue(from, tz)} – ${dateValue(to - 1, tz)} (${tz})`;
  }
  return `${formatTime(from, { siteZone: tz })} – ${formatTime(to, { siteZone: tz })}`;
}

/**
 * Nominal length of a trend bucket, to foresee how many bars a range makes.
 * @type {Record<string, number>}
 */
export const INTERVAL_MS = { hourly: HOUR, daily: DAY, weekly: 7 * DAY, monthly: 30.44 * DAY };
/** @type {[id: string, label: string][]} */
export const INTERVALS = [
  ["hourly", "Hourly"],
  ["daily", "Daily"],
  ["weekly", "Weekly"],
  ["monthly", "Monthly"],
];

/**
 * The interval a range is best shown in when the user chose none.
 * @param {Range} range
 */
export function defaultInterval([from, to]) {
  const span = to - from;
  if (span <= 3 * DAY) return "hourly";
  if (span <= 62 * DAY) return "daily";
  if (span <= 200 * DAY) return "weekly";
  return "monthly";
}

/**
 * The interval actually asked for: the chosen one, or the next coarser one while it would make
 * more bars than the chart has pixels.
 * @param {string} chosen
 * @param {Range} range
 * @param {number} pixels
 */
export function fittingInterval(chosen, [from, to], pixels) {
  const order = INTERVALS.map(([id]) => id);
  let i = Math.max(0, order.indexOf(chosen));
  while (i < order.length - 1 && (to - from) / INTERVAL_MS[order[i]] > pixels) i++;
  return order[i];
}
