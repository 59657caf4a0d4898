/**
 * A tag's history as pure rules (services/pipelines/history.ts) and the export's CSV
 * (history.csv.ts): bucket sizes, which tier reads which part of a range (every ms once), parts
 * merged into points, rollups of a batch, the range's problems, and CSV rows from cursor chunks.
 */
import { bucketPlan, type MsRange } from "../../../lib/buckets";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../../../lib/time";
import { csvField, csvHeader, csvRows, csvText, type CsvTag } from "../../../services/pipelines/history.csv";
import {
  bucketSize,
  historyRange,
  freshFrom,
  historyTiers,
  MAX_HISTORY_DAYS,
  pointsOf,
  type HistoryTiers,
  type Part,
} from "../../../services/pipelines/history";
import type { ExportRow } from "../../../services/pipelines/history.repo";

const SECOND = 1000;
/** Every bucket size the history may answer below whole days. */
const NICE = [1, 2, 5, 10, 15, 30].map((s) => s * SECOND).concat([1, 2, 5, 10, 15, 30].map((m) => m * MINUTE_MS), [1, 2, 3, 6, 12].map((h) => h * HOUR_MS));
/** A day in 2026, midnight UTC: ranges are placed after it. */
const T0 = Date.UTC(2026, 2, 1);

/** Deterministic pseudo-random numbers (a linear congruential generator): the same ranges on every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const touched = (r: MsRange, size: number) => Math.floor(r.to / size) - Math.floor(r.from / size) + 1;

describe("bucketSize", () => {
  it("picks the smallest nice size that gives no more than `points` buckets", () => {
    // A day at 1,000 points needs 86.4 s: 2 minutes, 720 buckets.
    expect(bucketSize({ from: T0, to: T0 + DAY_MS - 1 }, 1000)).toBe(2 * MINUTE_MS);
    // An hour at 3,600 points: one-second buckets; at 3,599: two seconds.
    expect(bucketSize({ from: T0, to: T0 + HOUR_MS - 1 }, 3600)).toBe(SECOND);
    expect(bucketSize({ from: T0, to: T0 + HOUR_MS - 1 }, 3599)).toBe(2 * SECOND);
    // Ten minutes at 40 points: 15 s; a week at 100 points: 2 hours.
    expect(bucketSize({ from: T0, to: T0 + 10 * MINUTE_MS - 1 }, 40)).toBe(15 * SECOND);
    expect(bucketSize({ from: T0, to: T0 + 7 * DAY_MS - 1 }, 100)).toBe(2 * HOUR_MS);
    // Never below a second, however short the range.
    expect(bucketSize({ from: T0, to: T0 }, 10_000)).toBe(SECOND);
  });

  it("answers whole days past 12 hours", () => {
    expect(bucketSize({ from: T0, to: T0 + 400 * DAY_MS - 1 }, 1000)).toBe(12 * HOUR_MS);
    expect(bucketSize({ from: T0, to: T0 + 400 * DAY_MS - 1 }, 400)).toBe(DAY_MS);
    expect(bucketSize({ from: T0, to: T0 + 400 * DAY_MS - 1 }, 399)).toBe(2 * DAY_MS);
    // 4 days would do for 400 days starting on a multiple of 4 days; T0 is not one (cut 101 buckets): 5.
    expect(bucketSize({ from: T0, to: T0 + 400 * DAY_MS - 1 }, 100)).toBe(5 * DAY_MS);
    expect(bucketSize({ from: 5128 * 4 * DAY_MS, to: 5228 * 4 * DAY_MS - 1 }, 100)).toBe(4 * DAY_MS);
    expect(bucketSize({ from: T0, to: T0 + 400 * DAY_MS - 1 }, 1) % DAY_MS).toBe(0);
  });

  it("counts the buckets a range's ends cut into: a day from 00:00:30 at 1,440 points is 2 minutes, not 1,441 minutes", () => {
    const r = { from: T0 + 30 * SECOND, to: T0 + DAY_MS + 29_999 };
    expect(bucketSize(r, 1440)).toBe(2 * MINUTE_MS);
    expect(bucketSize({ from: T0, to: T0 + DAY_MS - 1 }, 1440)).toBe(MINUTE_MS);
    // One point: one bucket holding the whole range, however it falls.
    expect(touched({ from: T0 + 500, to: T0 + 1499 }, bucketSize({ from: T0 + 500, to: T0 + 1499 }, 1))).toBe(1);
  });

  it("never gives more buckets than points, and gives the smallest size that does not", () => {
    const rnd = random(16);
    for (let i = 0; i < 3000; i++) {
      const len = Math.floor(rnd() ** 3 * MAX_HISTORY_DAYS * DAY_MS);
      const from = T0 + Math.floor(rnd() * 30 * DAY_MS);
      const r = { from, to: from + len };
      const points = [1, 2, 7, 50, 100, 1000, 1440, 10_000][i % 8];
      const size = bucketSize(r, points);
      expect([r, points, size, touched(r, size) <= points]).toEqual([r, points, size, true]);
      if (size <= 12 * HOUR_MS) {
        expect(NICE).toContain(size);
        const smaller = NICE[NICE.indexOf(size) - 1];
        if (smaller !== undefined) expect([r, points, smaller, touched(r, smaller) > points]).toEqual([r, points, smaller, true]);
      } else {
        expect(size % DAY_MS).toBe(0);
        const smaller = size === DAY_MS ? 12 * HOUR_MS : size - DAY_MS;
        expect([r, points, smaller, touched(r, smaller) > points]).toEqual([r, points, smaller, true]);
      }
    }
  });
});

/** The [start, end) spans each tier reads, with the tier's name. */
function spansOf(r: MsRange, t: HistoryTiers): { tier: "hours" | "minutes" | "raw"; from: number; end: number }[] {
  return [
    ...(t.hours ? [{ tier: "hours" as const, ...t.hours }] : []),
    ...t.minutes.map((m) => ({ tier: "minutes" as const, ...m })),
    ...t.raw.map((x) => ({ tier: "raw" as const, from: x.from, end: x.to + 1 })),
  ].filter((s) => s.end > s.from || r.from > r.to);
}

/**
 * Every ms of the range read exactly once: the tiers' spans, sorted, tile [from, to] with neither
 * gap nor overlap (checked on the span edges, which is every ms at once), and each span sits on
 * its tier's grid, so the rollup rows it names hold readings of the range only.
 */
function expectExactCover(r: MsRange, bucket: number, fresh?: number): HistoryTiers {
  const tiers = historyTiers(r, bucket, fresh);
  const spans = spansOf(r, tiers).sort((a, b) => a.from - b.from);
  let at = r.from;
  for (const s of spans) {
    expect([r, bucket, s, s.from]).toEqual([r, bucket, s, at]);
    at = s.end;
  }
  expect([r, bucket, at]).toEqual([r, bucket, r.to + 1]);
  for (const s of spans) {
    const grid = s.tier === "hours" ? HOUR_MS : s.tier === "minutes" ? MINUTE_MS : 1;
    expect([r, bucket, s, s.from % grid, s.end % grid]).toEqual([r, bucket, s, 0, 0]);
  }
  return tiers;
}

describe("historyTiers", () => {
  const at = (h: number, m = 0, s = 0, ms = 0) => T0 + h * HOUR_MS + m * MINUTE_MS + s * SECOND + ms;

  it("reads the newest minutes raw (their batches may not be folded yet), the rest as before, still each ms once", () => {
    const now = at(14, 30, 10, 500);
    const fresh = freshFrom(now);
    expect(fresh).toBe(at(14, 28));
    const r = { from: at(2, 5, 30), to: now };
    const tiers = expectExactCover(r, HOUR_MS, fresh);
    expect(tiers.hours).toEqual({ from: at(3), end: at(14) });
    expect(tiers.minutes).toEqual([
      { from: at(2, 6), end: at(3) },
      { from: at(14), end: at(14, 28) },
    ]);
    expect(tiers.raw).toEqual([
      { from: r.from, to: at(2, 6) - 1 },
      { from: at(14, 28), to: now },
    ]);
    // A range that ends before the fresh edge is untouched; one inside it is all raw.
    expect(historyTiers({ from: at(1), to: at(2) - 1 }, HOUR_MS, fresh)).toEqual(historyTiers({ from: at(1), to: at(2) - 1 }, HOUR_MS));
    expect(historyTiers({ from: at(14, 29), to: now }, MINUTE_MS, fresh)).toEqual({ hours: null, minutes: [], raw: [{ from: at(14, 29), to: now }] });
    for (const bucket of [SECOND, MINUTE_MS, 5 * MINUTE_MS, HOUR_MS, 12 * HOUR_MS]) expectExactCover({ from: at(0, 0, 0, 7), to: now + MINUTE_MS }, bucket, fresh);
  });

  it("reads raw readings only for buckets under a minute", () => {
    const r = { from: at(1, 2, 3, 4), to: at(5, 6, 7, 8) };
    for (const bucket of [SECOND, 5 * SECOND, 30 * SECOND]) expect(historyTiers(r, bucket)).toEqual({ hours: null, minutes: [], raw: [r] });
  });

  it("reads whole minutes from minute rollups for minute buckets, and the partial minutes at the ends raw", () => {
    const r = { from: at(10, 5, 30, 250), to: at(14, 30, 10) };
    expect(historyTiers(r, 5 * MINUTE_MS)).toEqual({
      hours: null,
      minutes: [{ from: at(10, 6), end: at(14, 30) }],
      raw: [
        { from: r.from, to: at(10, 6) - 1 },
        { from: at(14, 30), to: r.to },
      ],
    });
    // On minute edges (`to` inclusive): nothing raw.
    expect(historyTiers({ from: at(10, 5), to: at(10, 45) - 1 }, 2 * MINUTE_MS)).toEqual({ hours: null, minutes: [{ from: at(10, 5), end: at(10, 45) }], raw: [] });
    // Inside one minute: all raw.
    const inside = { from: at(3, 3, 1), to: at(3, 3, 59) };
    expect(historyTiers(inside, MINUTE_MS)).toEqual({ hours: null, minutes: [], raw: [inside] });
  });

  it("reads whole hours from hour rollups for hour buckets, the minutes around them from minute rollups, the rest raw", () => {
    const r = { from: at(10, 5, 30), to: at(14, 30, 10, 999) };
    expect(historyTiers(r, HOUR_MS)).toEqual({
      hours: { from: at(11), end: at(14) },
      minutes: [
        { from: at(10, 6), end: at(11) },
        { from: at(14), end: at(14, 30) },
      ],
      raw: [
        { from: r.from, to: at(10, 6) - 1 },
        { from: at(14, 30), to: r.to },
      ],
    });
    // Whole minutes but no whole hour: minute rollups and the edges raw.
    const short = { from: at(10, 5, 30), to: at(10, 50, 10) };
    expect(historyTiers(short, HOUR_MS)).toEqual({
      hours: null,
      minutes: [{ from: at(10, 6), end: at(10, 50) }],
      raw: [
        { from: short.from, to: at(10, 6) - 1 },
        { from: at(10, 50), to: short.to },
      ],
    });
    // Days on hour edges: hours only.
    expect(historyTiers({ from: at(0), to: at(72) - 1 }, DAY_MS)).toEqual({ hours: { from: at(0), end: at(72) }, minutes: [], raw: [] });
  });

  it("covers every ms of any range exactly once, each tier on its grid, and raw only within the partial minutes", () => {
    const rnd = random(1600);
    const sizes = [...NICE, DAY_MS, 3 * DAY_MS];
    for (let i = 0; i < 4000; i++) {
      const len = Math.floor(rnd() ** 4 * 40 * DAY_MS);
      const from = T0 + Math.floor(rnd() * 3 * DAY_MS);
      const r = { from, to: from + len };
      const bucket = sizes[i % sizes.length];
      const tiers = expectExactCover(r, bucket);
      if (bucket >= MINUTE_MS) {
        // Raw readings only at the ends and in no whole minute; minute rollups in no whole hour when hours are read.
        expect(tiers.raw.length).toBeLessThanOrEqual(2);
        for (const x of tiers.raw) expect([r, bucket, x, bucketPlan(x, MINUTE_MS).whole]).toEqual([r, bucket, x, null]);
        if (bucket % HOUR_MS === 0) for (const m of tiers.minutes) expect([r, bucket, m, bucketPlan({ from: m.from, to: m.end - 1 }, HOUR_MS).whole]).toEqual([r, bucket, m, null]);
      }
      if (bucket % HOUR_MS !== 0) expect(tiers.hours).toBeNull();
    }
    // The range's extremes: one ms, and exactly one minute or hour.
    for (const bucket of [SECOND, MINUTE_MS, HOUR_MS, DAY_MS]) {
      expectExactCover({ from: at(7, 7, 7, 7), to: at(7, 7, 7, 7) }, bucket);
      expectExactCover({ from: at(7, 7), to: at(7, 8) - 1 }, bucket);
      expectExactCover({ from: at(7), to: at(8) - 1 }, bucket);
    }
  });
});

/** A tag's readings as the rollup SQL folds them (history.repo.ts rollUp): per `size` bucket, count, sum and extremes. */
interface RolledReading {
  monitor_id: string;
  tag_id: string;
  ts: number;
  value: number;
}
function rollupsOf(readings: RolledReading[], size: number): { start: number; n: number; sum: number; min: number; max: number }[] {
  const by = new Map<number, { start: number; n: number; sum: number; min: number; max: number }>();
  for (const r of readings) {
    const start = r.ts - (r.ts % size);
    const x = by.get(start) ?? { start, n: 0, sum: 0, min: Infinity, max: -Infinity };
    by.set(start, { start, n: x.n + 1, sum: x.sum + r.value, min: Math.min(x.min, r.value), max: Math.max(x.max, r.value) });
  }
  return [...by.values()];
}

/** Readings of one tag, folded as the SQL folds them (history.repo.ts historyParts): each tier's rows in the range's spans. */
function partsFrom(readings: RolledReading[], tiers: HistoryTiers, bucket: number): Part[] {
  const parts: Part[] = [];
  const bucketOf = (ms: number) => Math.floor(ms / bucket) * bucket;
  const fold = (size: number, spans: { from: number; end: number }[]) => {
    for (const x of rollupsOf(readings, size)) {
      if (spans.some((s) => x.start >= s.from && x.start < s.end)) parts.push({ bucket: bucketOf(x.start), n: x.n, sum: x.sum, min: x.min, max: x.max });
    }
  };
  if (tiers.hours) fold(HOUR_MS, [tiers.hours]);
  fold(MINUTE_MS, tiers.minutes);
  for (const x of readings) {
    if (tiers.raw.some((s) => x.ts >= s.from && x.ts <= s.to)) parts.push({ bucket: bucketOf(x.ts), n: 1, sum: x.value, min: x.value, max: x.value });
  }
  return parts;
}

/** The points straight from the readings: what any tiering must answer. */
function directPoints(readings: RolledReading[], r: MsRange, bucket: number) {
  const by = new Map<number, number[]>();
  for (const x of readings) {
    if (x.ts < r.from || x.ts > r.to) continue;
    const b = Math.floor(x.ts / bucket) * bucket;
    by.set(b, [...(by.get(b) ?? []), x.value]);
  }
  return [...by]
    .sort((a, b) => a[0] - b[0])
    .map(([b, v]) => ({ timestamp: Math.max(b, r.from), count: v.length, min: Math.min(...v), max: Math.max(...v), value: v.reduce((s, x) => s + x, 0) / v.length }));
}

const reading = (ts: number, value: number): RolledReading => ({ monitor_id: "m", tag_id: "t", ts, value });

describe("pointsOf", () => {
  const r = { from: T0 + 90 * SECOND, to: T0 + 10 * MINUTE_MS - 1 };
  const part = (bucket: number, values: number[]): Part => ({ bucket, n: values.length, sum: values.reduce((s, x) => s + x, 0), min: Math.min(...values), max: Math.max(...values) });

  it("stamps each bucket at its start, the partial first one at `from`, ascending", () => {
    // Two-minute buckets; `from` is 00:01:30, inside the first.
    const points = pointsOf([part(T0 + 4 * MINUTE_MS, [3, 5]), part(T0, [1]), part(T0 + 2 * MINUTE_MS, [2])], r);
    expect(points).toEqual([
      { timestamp: r.from, value: 1, min: 1, max: 1, count: 1 },
      { timestamp: T0 + 2 * MINUTE_MS, value: 2, min: 2, max: 2, count: 1 },
      { timestamp: T0 + 4 * MINUTE_MS, value: 4, min: 3, max: 5, count: 2 },
    ]);
  });

  it("merges a bucket's parts from several tiers into one point: counts and sums added, extremes kept", () => {
    const bucket = T0 + 6 * MINUTE_MS;
    const points = pointsOf([part(bucket, [1, 2, 3]), part(bucket, [10]), part(bucket, [-4, 0])], r);
    expect(points).toEqual([{ timestamp: bucket, value: 12 / 6, min: -4, max: 10, count: 6 }]);
  });

  it("keeps a spike in max (and a dip in min) while the mean hardly moves", () => {
    const values = Array.from({ length: 600 }, (_, i) => (i === 300 ? 42 : i === 17 ? -9 : 5));
    const [p] = pointsOf([part(T0 + 2 * MINUTE_MS, values.slice(0, 200)), part(T0 + 2 * MINUTE_MS, values.slice(200))], r);
    expect(p.max).toBe(42);
    expect(p.min).toBe(-9);
    expect(p.value).toBeCloseTo((598 * 5 + 42 - 9) / 600, 12);
  });

  it("leaves out buckets without readings, and empty parts", () => {
    const points = pointsOf([part(T0 + 2 * MINUTE_MS, [1]), { bucket: T0 + 4 * MINUTE_MS, n: 0, sum: 0, min: 0, max: 0 }, part(T0 + 8 * MINUTE_MS, [2])], r);
    expect(points.map((p) => p.timestamp)).toEqual([T0 + 2 * MINUTE_MS, T0 + 8 * MINUTE_MS]);
    expect(pointsOf([], r)).toEqual([]);
  });

  it("answers fewer points than asked when the range holds fewer readings", () => {
    const range = { from: T0, to: T0 + DAY_MS - 1 };
    const bucket = bucketSize(range, 1000);
    const readings = [reading(T0 + 5, 1), reading(T0 + 7 * HOUR_MS + 1, 2), reading(T0 + 7 * HOUR_MS + 2, 4), reading(T0 + DAY_MS - 1, 8)];
    const points = pointsOf(partsFrom(readings, historyTiers(range, bucket), bucket), range);
    expect(points).toEqual(directPoints(readings, range, bucket));
    expect(points.map((p) => p.count)).toEqual([1, 2, 1]);
  });

  it("answers, from the tiers' parts, the points the raw readings give, for any range and bucket", () => {
    const rnd = random(7);
    // Two days of irregular readings (1 to 45 s apart) with spikes.
    const readings: RolledReading[] = [];
    for (let ts = T0 - HOUR_MS; ts < T0 + 2 * DAY_MS; ts += 1 + Math.floor(rnd() * 45 * SECOND)) readings.push(reading(ts, rnd() < 0.001 ? 1000 : Math.round(rnd() * 100) / 4));
    for (let i = 0; i < 60; i++) {
      const from = T0 + Math.floor(rnd() * DAY_MS);
      const range = { from, to: from + Math.floor(rnd() * DAY_MS) };
      const bucket = bucketSize(range, [10, 60, 500, 2000][i % 4]);
      const points = pointsOf(partsFrom(readings, historyTiers(range, bucket), bucket), range);
      const want = directPoints(readings, range, bucket);
      expect([range, bucket, points.map((p) => [p.timestamp, p.count, p.min, p.max])]).toEqual([range, bucket, want.map((p) => [p.timestamp, p.count, p.min, p.max])]);
      points.forEach((p, k) => expect(p.value).toBeCloseTo(want[k].value, 9));
    }
  });
});


describe("historyRange", () => {
  const from = "2026-03-01T00:00:00Z";
  it("answers the range in epoch ms, `to` inclusive, offsets read", () => {
    expect(historyRange(from, "2026-03-02T05:30:00+05:30", 400)).toEqual({ from: T0, to: T0 + DAY_MS });
    expect(historyRange(from, from, 400)).toEqual({ from: T0, to: T0 });
    // Exactly the longest range is allowed.
    expect(historyRange(from, "2026-03-11T00:00:00Z", 10)).toEqual({ from: T0, to: T0 + 10 * DAY_MS });
  });

  it.each([
    [undefined, "2026-03-02", { problem: "missing", field: "from" }],
    ["", "2026-03-02", { problem: "missing", field: "from" }],
    [from, undefined, { problem: "missing", field: "to" }],
    [from, "", { problem: "missing", field: "to" }],
    // Both missing: `from` is named first.
    [undefined, undefined, { problem: "missing", field: "from" }],
    ["yesterday", "2026-03-02", { problem: "unparsed", field: "from" }],
    [from, "2026-02-30", { problem: "unparsed", field: "to" }],
    [from, "1772409600000", { problem: "unparsed", field: "to" }],
    // A missing `to` is told before an unparsed `from`.
    ["yesterday", undefined, { problem: "missing", field: "to" }],
    ["2026-03-02", from, { problem: "from-after-to", field: "from" }],
    [from, "2026-03-11T00:00:00.001Z", { problem: "too-long", field: "to" }],
  ] as const)("from %p to %p: %p", (f, t, want) => {
    expect(historyRange(f, t, 10)).toEqual(want);
  });
});

async function csvOf(chunks: ExportRow[][], tags: CsvTag[]): Promise<string> {
  async function* feed(): AsyncGenerator<ExportRow[]> {
    for (const c of chunks) yield c;
  }
  let out = "";
  for await (const b of csvRows(feed(), tags)) out += b.toString("utf8");
  return out;
}

describe("history.csv", () => {
  const tags: CsvTag[] = [
    { tag_id: "p", tag_name: "Pressure" },
    { tag_id: "f", tag_name: "Flow" },
  ];
  const iso = (ms: number) => new Date(ms).toISOString();
  const row = (ts: number, tag_id: string, value: number): ExportRow => ({ ts, tag_id, value });

  it("quotes a tag name holding a comma, a quote or a line break in the header", () => {
    expect(csvHeader([{ tag_id: "a", tag_name: "Flow, inlet" }, { tag_id: "b", tag_name: 'Valve "A"' }, { tag_id: "c", tag_name: "plain" }])).toBe(
      'timestamp,"Flow, inlet","Valve ""A""",plain\n',
    );
    expect(csvField("two\nlines")).toBe('"two\nlines"');
    expect(csvField("")).toBe("");
  });

  it("neutralises text cells a spreadsheet would run, and writes negative readings as numbers", async () => {
    const formulas = ["=1+1", "+1", "-cmd", "@SUM(A1)", "\tx", "\rx", "=cmd|' /C calc'!A0"];
    expect(csvHeader(formulas.map((tag_name, i) => ({ tag_id: String(i), tag_name })))).toBe(
      `timestamp,'=1+1,'+1,'-cmd,'@SUM(A1),'\tx,"'\rx",'=cmd|' /C calc'!A0\n`,
    );
    // Only a leading character counts: a name holding one elsewhere is left as it is.
    expect(csvText("a=b")).toBe("a=b");
    expect(await csvOf([[row(T0, "p", -3.25), row(T0, "f", -0)]], tags)).toBe(`${iso(T0)},-3.25,0\n`);
  });

  it("writes one row per timestamp, ISO 8601 UTC, a column per tag in the tags' order, empty where a tag has no reading", async () => {
    const csv = await csvOf([[row(T0, "f", 3), row(T0, "p", 1.5), row(T0 + 1000, "p", 2), row(T0 + 2000, "f", 4)]], tags);
    expect(csv).toBe(`${iso(T0)},1.5,3\n${iso(T0 + 1000)},2,\n${iso(T0 + 2000)},,4\n`);
  });

  it("makes one row of a timestamp split across two chunks, and holds no more than a row between chunks", async () => {
    const chunks = [[row(T0, "p", 1), row(T0 + 1000, "p", 2)], [row(T0 + 1000, "f", 20), row(T0 + 2000, "p", 3)], [row(T0 + 2000, "f", 30)]];
    const parts: string[] = [];
    async function* feed(): AsyncGenerator<ExportRow[]> {
      for (const c of chunks) yield c;
    }
    for await (const b of csvRows(feed(), tags)) parts.push(b.toString("utf8"));
    expect(parts.join("")).toBe(`${iso(T0)},1,\n${iso(T0 + 1000)},2,20\n${iso(T0 + 2000)},3,30\n`);
    // Each chunk's complete rows leave with it: the first chunk's first row before the second chunk is read.
    expect(parts[0]).toBe(`${iso(T0)},1,\n`);
  });

  it("skips readings of tag ids the monitor no longer has, and a timestamp that had only those", async () => {
    const csv = await csvOf([[row(T0, "gone", 9), row(T0, "p", 1), row(T0 + 1000, "gone", 9)], [row(T0 + 2000, "f", 2), row(T0 + 3000, "gone", 9)]], tags);
    expect(csv).toBe(`${iso(T0)},1,\n${iso(T0 + 2000)},,2\n`);
  });

  it("keeps the later value of a tag read twice at one time", async () => {
    expect(await csvOf([[row(T0, "p", 1), row(T0, "p", 7)], [row(T0, "p", 8), row(T0, "f", 2)]], tags)).toBe(`${iso(T0)},8,2\n`);
  });

  it("writes nothing but what the header says for an empty range", async () => {
    expect(await csvOf([], tags)).toBe("");
    expect(await csvOf([[]], tags)).toBe("");
  });
});
