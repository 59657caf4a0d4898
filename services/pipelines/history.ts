/**
 * A tag's past at any zoom (docs/api-tour.md, "Looking back"): the range and size of a history request, the
 * bucket size a range gets, which rollup tier reads which part of it, and how parts become
 * points. Pure; history.repo.ts runs the SQL.
 *
 * Readings are kept raw (daily partitions) and rolled up per minute and per hour (count, sum,
 * min, max per tag; history.repo.ts's rollUp). A history answers the raw readings when the range holds no more
 * than `points` of them; else equal, epoch-aligned buckets of a "nice" size (1 s … 12 h, then
 * whole days) with the mean as `value` and the extremes in `min`/`max`, so a spike survives the
 * zoom-out. Each bucket is summed from the coarsest rollup that fits whole inside it (hours when
 * the bucket is a whole number of hours, else minutes), the finer tier at the range's edges, and
 * raw readings only within the partial minutes at each end: exact for any range.
 */
import { bucketPlan, type MsRange } from "../../lib/buckets";
import { DAY_MS, HOUR_MS, MINUTE_MS, parseIsoDate } from "../../lib/time";

export const DEFAULT_POINTS = 1000;
export const MAX_POINTS = 10_000;
export const MAX_HISTORY_DAYS = 400;
export const MAX_EXPORT_DAYS = 31;
/** Rollups are kept at least this long (the longest history range), also where raw readings go sooner. */
export const ROLLUPS_KEPT_DAYS = MAX_HISTORY_DAYS;

/** Bucket sizes a range may get, smallest first; past the last, whole days. */
const NICE_MS = [1, 2, 5, 10, 15, 30].map((s) => s * 1000).concat([1, 2, 5, 10, 15, 30].map((m) => m * MINUTE_MS), [1, 2, 3, 6, 12].map((h) => h * HOUR_MS));

/** Epoch-aligned buckets of `ms` the range touches: one more than its length over `ms` when its ends fall inside buckets. */
const bucketsTouched = (r: MsRange, ms: number): number => Math.floor(r.to / ms) - Math.floor(r.from / ms) + 1;

/** The smallest nice bucket whose epoch-aligned buckets touching the range are no more than `points`. */
export function bucketSize(r: MsRange, points: number): number {
  const nice = NICE_MS.find((ms) => bucketsTouched(r, ms) <= points);
  if (nice !== undefined) return nice;
  // Whole days: the fewest that could do, one more while the range's ends still cut one bucket too many.
  let days = Math.ceil((r.to - r.from + 1) / points / DAY_MS);
  while (bucketsTouched(r, days * DAY_MS) > points) days++;
  return days * DAY_MS;
}

/** The request's range, or which input is wrong and how (the action turns it into its message). */
export type RangeProblem = "missing" | "unparsed" | "from-after-to" | "too-long";

export function historyRange(from: string | undefined, to: string | undefined, maxDays: number): MsRange | { problem: RangeProblem; field: "from" | "to" } {
  if (from === undefined || from === "") return { problem: "missing", field: "from" };
  if (to === undefined || to === "") return { problem: "missing", field: "to" };
  const f = parseIsoDate(from);
  if (f === undefined) return { problem: "unparsed", field: "from" };
  const t = parseIsoDate(to);
  if (t === undefined) return { problem: "unparsed", field: "to" };
  if (f > t) return { problem: "from-after-to", field: "from" };
  if (t - f > maxDays * DAY_MS) return { problem: "too-long", field: "to" };
  return { from: f, to: t };
}

/** Which tier reads which part of a range for buckets of `bucket` ms. */
export interface HistoryTiers {
  /** Hour rollups: starts in [from, end). */
  hours: { from: number; end: number } | null;
  /** Minute rollups: starts in these [from, end) spans. */
  minutes: { from: number; end: number }[];
  /** Raw readings: these inclusive ranges. */
  raw: MsRange[];
}

function tiersOf(r: MsRange, bucket: number): HistoryTiers {
  if (bucket < MINUTE_MS) return { hours: null, minutes: [], raw: [r] };
  const byMinute = bucketPlan(r, MINUTE_MS);
  if (byMinute.whole === null) return { hours: null, minutes: [], raw: byMinute.raw };
  const minuteSpan = byMinute.whole;
  if (bucket % HOUR_MS !== 0) return { hours: null, minutes: [minuteSpan], raw: byMinute.raw };
  // Whole hours inside the whole minutes; the minutes left at either end.
  const byHour = bucketPlan({ from: minuteSpan.from, to: minuteSpan.end - 1 }, HOUR_MS);
  if (byHour.whole === null) return { hours: null, minutes: [minuteSpan], raw: byMinute.raw };
  const minutes = byHour.raw.map((x) => ({ from: x.from, end: x.to + 1 }));
  return { hours: byHour.whole, minutes, raw: byMinute.raw };
}

/**
 * A range's newest minutes are read raw: a batch's share of the rollups is staged with its readings
 * and folded a moment later (history.repo.ts), so the rollups of the last seconds may not hold it yet.
 */
export const FRESH_MS = 2 * MINUTE_MS;

/** Where the raw-read end of a range begins at `now`: a whole minute, FRESH_MS back or more. */
export const freshFrom = (now: number): number => Math.floor((now - FRESH_MS) / MINUTE_MS) * MINUTE_MS;

/** Which tier reads which part of the range; from `fresh` on (freshFrom), raw readings only. */
export function historyTiers(r: MsRange, bucket: number, fresh = Infinity): HistoryTiers {
  if (r.to < fresh) return tiersOf(r, bucket);
  const newest = { from: Math.max(r.from, fresh), to: r.to };
  if (r.from >= fresh) return { hours: null, minutes: [], raw: [newest] };
  const older = tiersOf({ from: r.from, to: fresh - 1 }, bucket);
  return { ...older, raw: [...older.raw, newest] };
}

/** A bucket's share from one tier: readings counted, their sum and extremes. */
export interface Part {
  /** The bucket's start, epoch ms (a multiple of the bucket size). */
  bucket: number;
  n: number;
  sum: number;
  min: number;
  max: number;
}

export interface HistoryPoint {
  /** Epoch ms: a raw reading's time; a bucket's start, or `from` for a first bucket that begins before it. */
  timestamp: number;
  value: number;
  min: number;
  max: number;
  count: number;
}

/** The parts of each bucket (any tier, any order) merged into its point, ascending; empty buckets have none. */
export function pointsOf(parts: Part[], r: MsRange): HistoryPoint[] {
  const byBucket = new Map<number, Part>();
  for (const p of parts) {
    if (p.n === 0) continue;
    const b = byBucket.get(p.bucket);
    if (!b) byBucket.set(p.bucket, { ...p });
    else {
      b.n += p.n;
      b.sum += p.sum;
      b.min = Math.min(b.min, p.min);
      b.max = Math.max(b.max, p.max);
    }
  }
  return [...byBucket.values()]
    .sort((a, b) => a.bucket - b.bucket)
    .map((b) => ({ timestamp: Math.max(b.bucket, r.from), value: b.sum / b.n, min: b.min, max: b.max, count: b.n }));
}

/** A raw reading as a point of its own (`bucket_ms` 0). */
export const rawPoint = (ts: number, value: number): HistoryPoint => ({ timestamp: ts, value, min: value, max: value, count: 1 });
