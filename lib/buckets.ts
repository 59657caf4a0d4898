/**
 * Reading a range from rollups of fixed-size buckets (epoch-aligned: a bucket of `size` starts at
 * a multiple of it): the whole buckets inside the range come from the rollup, what is left at its
 * edges from a finer source, so that a range need not fall on bucket edges to be exact. Used by
 * the alarm KPIs (alerting/kpi.ts) and the history of readings (pipelines/history.ts). Pure.
 */

/** An inclusive range of epoch ms. */
export interface MsRange {
  from: number;
  to: number;
}

export interface BucketPlan {
  /** Starts of the whole buckets inside the range: [from, end); null when it holds none. */
  whole: { from: number; end: number } | null;
  /** The rest of the range, at its edges (inclusive ranges, at most two). */
  raw: MsRange[];
}

export function bucketPlan(r: MsRange, size: number): BucketPlan {
  const from = Math.ceil(r.from / size) * size;
  const end = Math.floor((r.to + 1) / size) * size;
  if (from >= end) return { whole: null, raw: [r] };
  const raw: MsRange[] = [];
  if (r.from < from) raw.push({ from: r.from, to: from - 1 });
  if (end <= r.to) raw.push({ from: end, to: r.to });
  return { whole: { from, end }, raw };
}
