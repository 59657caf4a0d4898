/**
 * Energy rollups: readings of an energy tag folded into quarter-hour buckets (UTC-aligned epoch
 * ms), and the energy figures read back from them.
 *
 * Why a quarter hour and not an hour: trend buckets follow the site's time zone, and some zones
 * sit 30 or 45 minutes off UTC (Asia/Kolkata, Asia/Kathmandu, Australia/Adelaide). Every zone's
 * offset is a whole number of quarter hours, so local hours, days, weeks and months are always
 * unions of quarter-hour buckets, and a year is 35,040 rows a tag.
 */
import type { Reading } from "../pipelines/contract";

export type { Reading };

export const QUARTER_MS = 15 * 60_000;

export const quarterOf = (ts: number): number => Math.floor(ts / QUARTER_MS) * QUARTER_MS;

export interface Rollup {
  monitor_id: string;
  tag_id: string;
  bucket: number;
  n: number;
  sum: number;
  min: number;
  max: number;
  first_ts: number;
  first_value: number;
  last_ts: number;
  last_value: number;
}

/** One rollup delta per (monitor, tag, quarter) of the readings; merged into stored rows by the same rules as `mergeRollups`. */
export function rollupReadings(readings: Reading[]): Rollup[] {
  const byKey = new Map<string, Rollup>();
  for (const r of readings) {
    const bucket = quarterOf(r.ts);
    const key = `${r.monitor_id}|${r.tag_id}|${bucket}`;
    const one: Rollup = {
      monitor_id: r.monitor_id,
      tag_id: r.tag_id,
      bucket,
      n: 1,
      sum: r.value,
      min: r.value,
      max: r.value,
      first_ts: r.ts,
      first_value: r.value,
      last_ts: r.ts,
      last_value: r.value,
    };
    const seen = byKey.get(key);
    byKey.set(key, seen ? mergeRollups(seen, one) : one);
  }
  return [...byKey.values()];
}

export function mergeRollups(a: Rollup, b: Rollup): Rollup {
  const firstFromB = b.first_ts < a.first_ts;
  const lastFromB = b.last_ts > a.last_ts;
  return {
    ...a,
    n: a.n + b.n,
    sum: a.sum + b.sum,
    min: Math.min(a.min, b.min),
    max: Math.max(a.max, b.max),
    first_ts: firstFromB ? b.first_ts : a.first_ts,
    first_value: firstFromB ? b.first_value : a.first_value,
    last_ts: lastFromB ? b.last_ts : a.last_ts,
    last_value: lastFromB ? b.last_value : a.last_value,
  };
}

/** What a counter's increase needs of a bucket. */
export type CounterBucket = Pick<Rollup, "bucket" | "first_value" | "last_value" | "max">;

/**
 * Increase of a cumulative counter within one bucket. A counter that went down was reset (meter
 * replaced, rolled over): what it counted before the reset (max − first) plus what it counted
 * since (last, from zero).
 */
export function increaseWithin(b: CounterBucket): number {
  return b.last_value >= b.first_value ? b.last_value - b.first_value : b.max - b.first_value + b.last_value;
}

/** Increase between the last reading of one bucket and the first of the next (reset-aware). */
export function increaseBetween(prevLast: number, first: number): number {
  return first >= prevLast ? first - prevLast : first;
}

/**
 * Consumption per trend bucket, in the counter's unit. `buckets` are quarter-hour rollups in
 * time order; `starts` are the trend buckets' starts in order. A step between two readings
 * counts in the trend bucket of the later reading, so the parts add up to the counter's
 * increase between its first and last reading of the range. Rows must end before the last
 * trend bucket does. The service folds rollups in SQL by the same rules (metrics.repo.ts, aggregate); this is
 * the reference the tests hold it to.
 */
export function increasesByBucket(buckets: CounterBucket[], starts: number[]): number[] {
  const totals = new Array<number>(starts.length).fill(0);
  let i = 0;
  let prev: CounterBucket | undefined;
  for (const b of buckets) {
    while (i + 1 < starts.length && b.bucket >= starts[i + 1]) i++;
    if (b.bucket >= starts[0]) {
      totals[i] += increaseWithin(b) + (prev ? increaseBetween(prev.last_value, b.first_value) : 0);
    }
    prev = b;
  }
  return totals;
}

/** Mean of a tag per trend bucket from (bucket, n, sum) rows in time order; null where no reading. */
export function meansByBucket(buckets: Pick<Rollup, "bucket" | "n" | "sum">[], starts: number[]): (number | null)[] {
  const n = new Array<number>(starts.length).fill(0);
  const sum = new Array<number>(starts.length).fill(0);
  let i = 0;
  for (const b of buckets) {
    if (b.bucket < starts[0]) continue;
    while (i + 1 < starts.length && b.bucket >= starts[i + 1]) i++;
    n[i] += b.n;
    sum[i] += b.sum;
  }
  return n.map((c, k) => (c > 0 ? sum[k] / c : null));
}
