import { bucketPlan } from "../../../lib/buckets";
import { HOUR_MS, MINUTE_MS } from "../../../lib/time";
import { WINDOW_MS, windowPlan } from "../../../services/alerting/kpi";
import type { Range } from "../../../services/alerting/time";

/** Every ms of the range read exactly once: by a whole bucket of the plan or by one of its raw ranges. */
function coverage(r: Range, whole: { from: number; end: number } | null, raw: Range[], skip: (bucket: number) => boolean = () => false): Map<number, number> {
  const seen = new Map<number, number>();
  const mark = (t: number) => seen.set(t, (seen.get(t) ?? 0) + 1);
  for (const x of raw) for (let t = x.from; t <= x.to; t += 1000) mark(t);
  if (whole) for (let t = whole.from; t < whole.end; t += 1000) if (!skip(t - (t % MINUTE_MS))) mark(t);
  return seen;
}

describe("bucketPlan", () => {
  it("reads whole hours from the rollup and the edges raw", () => {
    const r = { from: 10 * HOUR_MS + 5 * MINUTE_MS, to: 14 * HOUR_MS + 30 * MINUTE_MS };
    expect(bucketPlan(r, HOUR_MS)).toEqual({
      whole: { from: 11 * HOUR_MS, end: 14 * HOUR_MS },
      raw: [
        { from: r.from, to: 11 * HOUR_MS - 1 },
        { from: 14 * HOUR_MS, to: r.to },
      ],
    });
  });

  it("has no raw edge when the range falls on bucket edges (to inclusive)", () => {
    expect(bucketPlan({ from: 2 * HOUR_MS, to: 5 * HOUR_MS - 1 }, HOUR_MS)).toEqual({ whole: { from: 2 * HOUR_MS, end: 5 * HOUR_MS }, raw: [] });
    // `to` exactly on an hour: that instant is raw, the hour after it is not whole.
    expect(bucketPlan({ from: 2 * HOUR_MS, to: 5 * HOUR_MS }, HOUR_MS).raw).toEqual([{ from: 5 * HOUR_MS, to: 5 * HOUR_MS }]);
  });

  it("reads a range inside one bucket raw", () => {
    const r = { from: HOUR_MS + 1, to: 2 * HOUR_MS - 2 };
    expect(bucketPlan(r, HOUR_MS)).toEqual({ whole: null, raw: [r] });
  });
});

describe("windowPlan", () => {
  it("cuts nothing when `from` is on a minute", () => {
    const r = { from: 100 * MINUTE_MS, to: 100 * MINUTE_MS + 3 * WINDOW_MS + 20_000 };
    const plan = windowPlan(r);
    expect(plan.splitBase).toBeNull();
    expect(plan.raw).toEqual([{ from: 130 * MINUTE_MS, to: r.to }]);
  });

  it("reads raw the minute each window edge cuts, and every second of the range once", () => {
    const r = { from: 100 * MINUTE_MS + 17_000, to: 100 * MINUTE_MS + 3 * WINDOW_MS + 45_000 };
    const plan = windowPlan(r);
    expect(plan.splitBase).toBe(100 * MINUTE_MS);
    expect(plan.raw).toEqual([
      { from: r.from, to: 101 * MINUTE_MS - 1 },
      { from: 130 * MINUTE_MS, to: r.to },
      { from: 110 * MINUTE_MS, to: 111 * MINUTE_MS - 1 },
      { from: 120 * MINUTE_MS, to: 121 * MINUTE_MS - 1 },
    ]);
    const cut = (m: number) => plan.splitBase !== null && (m - plan.splitBase) % WINDOW_MS === 0;
    const seen = coverage(r, plan.whole, plan.raw, cut);
    for (let t = r.from; t <= r.to; t += 1000) expect([t, seen.get(t)]).toEqual([t, 1]);
    // No uncut whole minute straddles a window edge: its first and last ms fall in one window.
    for (let m = plan.whole!.from; m < plan.whole!.end; m += MINUTE_MS) {
      if (cut(m)) continue;
      expect(Math.floor((m - r.from) / WINDOW_MS)).toBe(Math.floor((m + MINUTE_MS - 1 - r.from) / WINDOW_MS));
    }
  });
});
