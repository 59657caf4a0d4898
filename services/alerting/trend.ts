/** Alert trend buckets: hourly when to - from is at most 2 days, else daily. */
import { severityKey, type SeverityKey } from "./severity";
import { DAY_MS, HOUR_MS, type Range } from "./time";

export interface TrendPoint {
  /** The bucket's start, epoch ms (UTC hour or UTC day). */
  time: number;
  total: number;
}

export type Trend = Record<SeverityKey, TrendPoint[]>;

/** A range wider than this many buckets is refused rather than answered with a huge body. */
export const MAX_BUCKETS = 5000;

export function bucketSize(range: Range): number {
  return range.to - range.from <= 2 * DAY_MS ? HOUR_MS : DAY_MS;
}

export function bucketStarts(range: Range): number[] {
  const size = bucketSize(range);
  const starts: number[] = [];
  for (let t = Math.floor(range.from / size) * size; t <= range.to; t += size) starts.push(t);
  return starts;
}

export function bucketCount(range: Range): number {
  const size = bucketSize(range);
  return Math.floor(range.to / size) - Math.floor(range.from / size) + 1;
}

/** Every bucket of the range for each class, zeros included, so a chart has no holes. */
export function trendOf(alerts: { start: number; severity: number }[], range: Range): Trend {
  const size = bucketSize(range);
  const starts = bucketStarts(range);
  const index = new Map(starts.map((t, i) => [t, i]));
  const trend: Trend = {
    high: starts.map((time) => ({ time, total: 0 })),
    medium: starts.map((time) => ({ time, total: 0 })),
    low: starts.map((time) => ({ time, total: 0 })),
  };
  for (const a of alerts) {
    if (a.start < range.from || a.start > range.to) continue;
    const i = index.get(Math.floor(a.start / size) * size);
    if (i !== undefined) trend[severityKey(a.severity)][i].total += 1;
  }
  return trend;
}
