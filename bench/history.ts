/**
 * `npm run bench:history`: a tag's history and a monitor's CSV export, on one node
 * (api, auth, config, pipelines; HISTORY_ROLLUPS as configured, on by default).
 *   1. Seeded by SQL into pipelines.readings (the day partitions made with the service's own DDL):
 *      tag A, a year of one-minute readings (525,600, 2025); tag B, a day of one-second readings
 *      (86,400, 2025-06-01); and the minute and hour rollups computed from them by SQL as the
 *      migration PipelinesHistoryRollups does; then VACUUM ANALYZE, as autovacuum would leave them.
 *   2. `GET /_cm/monitors/<id>/_history` of each tag's whole range at 1,000 points, BENCH_HISTORY_REQUESTS
 *      (50) requests one at a time through the gateway: p50/p99 (target p99 < 100 ms each). The
 *      baseline in the same run: the same buckets by one GROUP BY over the raw rows, by SQL,
 *      BENCH_HISTORY_SCANS (5) runs each; the answers are checked equal bucket by bucket.
 *   3. `GET /_cm/monitors/<id>/_export` of a monitor of 23 tags read every minute for 31 days
 *      (1,026,720 readings), counting bytes, CSV rows and readings as they stream: readings/s, and
 *      the peak RSS and heap of this process (the node runs in it) sampled every 100 ms; a tenth of
 *      the range first, so the two peaks show whether memory grows with the range. The script runs
 *      node with --expose-gc: a full collection before each export gives both the same start, and
 *      two more exports collect before every sample, so their heap peak is what the export holds
 *      live (without that, the peak also counts garbage V8 has not yet collected, more of it the
 *      longer the export runs).
 */
import { Client } from "pg";
import { ADMIN, basic, startTestNode, type TestNode } from "../test/helpers/node";
import { create, createPlace, pct } from "./alerts-common";
import { seedPartitions, seedRollups, seedSeries, type Series } from "./history-seed";

const REQUESTS = Number(process.env.BENCH_HISTORY_REQUESTS ?? 50);
const SCANS = Number(process.env.BENCH_HISTORY_SCANS ?? 5);
const POINTS = 1000;
const TARGET_P99_MS = 100;
const MIN = 60_000;
const DAY = 86_400_000;
const YEAR_FROM = Date.UTC(2025, 0, 1);
const SECONDS_DAY = Date.UTC(2025, 5, 1);
const EXPORT_FROM = Date.UTC(2025, 2, 1);
const EXPORT_DAYS = 31;
const EXPORT_TAGS = 23;

const iso = (ms: number): string => new Date(ms).toISOString();
const ms1 = (x: number): string => `${x.toFixed(1)} ms`;
/** Present when node runs with --expose-gc (the npm script does). */
const gc = (globalThis as { gc?: () => void }).gc;
const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

interface HistoryAnswer {
  bucket_ms: number;
  points: { timestamp: number; value: number; min: number; max: number; count: number }[];
}

async function monitorWithTags(t: TestNode, fn: string, name: string, tags: { tag_id: string; tag_name: string }[]): Promise<string> {
  const id = (await create(t, "/_config/monitors", { monitor_name: name, monitor_type: "process-monitor", function_id: fn })).id;
  const res = await t.http("PUT", `/_config/monitors/${id}`, {
    body: {
      monitor_name: name,
      monitor_type: "process-monitor",
      tags: tags.map((x) => ({ ...x, tag_desc: "", tag_unit: "bar", thresholds: {} })),
      specs: {},
      attributes: {},
    },
  });
  if (res.status !== 200) throw new Error(`PUT monitor: ${res.status} ${JSON.stringify(res.body)}`);
  return id;
}

/** The export's monitor: every tag read at each minute of the days, as one gateway batch per minute would. */
async function seedExport(pg: Client, monitor: string, site: string, pipeline: string): Promise<number> {
  const minutes = EXPORT_DAYS * 1440;
  const res = await pg.query(
    `INSERT INTO pipelines.readings (ts, pipeline_id, site_id, monitor_id, tag_id, value, batch_id, idx)
     SELECT to_timestamp(($1::float8 + i * 60000::float8) / 1000), $2, $3, $4, 'x' || lpad(g::text, 2, '0'),
            round((20 + g + 5 * sin(i / 60.0 + g))::numeric, 3)::float8, md5('x' || i)::uuid, g - 1
       FROM generate_series(0, $5::int - 1) AS i, generate_series(1, $6::int) AS g`,
    [EXPORT_FROM, pipeline, site, monitor, minutes, EXPORT_TAGS],
  );
  return res.rowCount ?? 0;
}

async function history(t: TestNode, s: Series): Promise<{ ms: number; answer: HistoryAnswer }> {
  const to = s.from + (s.count - 1) * s.step;
  const started = performance.now();
  const res = await t.http<HistoryAnswer>(
    "GET",
    `/_cm/monitors/${s.monitor}/_history?tag=${encodeURIComponent(s.tag_name)}&from=${encodeURIComponent(iso(s.from))}&to=${encodeURIComponent(iso(to))}&points=${POINTS}`,
  );
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`history ${s.label}: ${res.status} ${JSON.stringify(res.body)}`);
  return { ms, answer: res.body };
}

interface RawBucket {
  bucket: string;
  n: number;
  min: number;
  max: number;
}

/** The baseline: the same buckets by one GROUP BY over the tag's raw rows in the range. */
async function rawScan(pg: Client, s: Series, bucket: number): Promise<RawBucket[]> {
  const to = s.from + (s.count - 1) * s.step;
  return (
    await pg.query<RawBucket>(
      `SELECT (round(extract(epoch FROM ts) * 1000)::bigint / $3::bigint) * $3::bigint AS bucket, count(*)::int AS n, min(value) AS min, max(value) AS max
         FROM pipelines.readings
        WHERE monitor_id = $1 AND tag_id = $2 AND ts >= to_timestamp($4::float8 / 1000) AND ts <= to_timestamp($5::float8 / 1000)
        GROUP BY 1 ORDER BY 1`,
      [s.monitor, s.tag_id, bucket, s.from, to],
    )
  ).rows;
}

/** Whether the answer's buckets are the raw scan's: counts and extremes, bucket by bucket. */
function sameBuckets(answer: HistoryAnswer, raw: RawBucket[], from: number): boolean {
  if (answer.points.length !== raw.length) return false;
  return raw.every((r, i) => {
    const p = answer.points[i]!;
    return Math.max(Number(r.bucket), from) === p.timestamp && p.count === r.n && p.min === r.min && p.max === r.max;
  });
}

async function benchHistory(t: TestNode, pg: Client, s: Series): Promise<boolean> {
  for (let i = 0; i < 3; i++) await history(t, s); // warm-up: plans, auth cache
  const latencies: number[] = [];
  let answer: HistoryAnswer | undefined;
  for (let i = 0; i < REQUESTS; i++) {
    const r = await history(t, s);
    latencies.push(r.ms);
    answer = r.answer;
  }
  if (!answer) throw new Error("no history request ran");
  const scans: number[] = [];
  let raw: RawBucket[] = [];
  for (let i = 0; i < SCANS; i++) {
    const started = performance.now();
    raw = await rawScan(pg, s, answer.bucket_ms);
    scans.push(performance.now() - started);
  }
  const held = answer.points.reduce((n, p) => n + p.count, 0);
  const same = sameBuckets(answer, raw, s.from);
  const p99 = pct(latencies, 0.99);
  console.log(
    `${s.label}: ${answer.points.length} buckets of ${answer.bucket_ms / MIN} min holding ${held.toLocaleString("en")} readings; ` +
      `${REQUESTS} requests over HTTP: p50 ${ms1(pct(latencies, 0.5))}, p99 ${ms1(p99)}, max ${ms1(Math.max(...latencies))} (target p99 < ${TARGET_P99_MS} ms: ${p99 < TARGET_P99_MS ? "met" : "MISSED"})`,
  );
  console.log(
    `  baseline, the same buckets by a GROUP BY over the raw rows (${SCANS} runs by SQL, no HTTP): p50 ${ms1(pct(scans, 0.5))}, max ${ms1(Math.max(...scans))}; ` +
      `history p50 ${(pct(scans, 0.5) / pct(latencies, 0.5)).toFixed(1)}× faster; buckets equal to the raw scan's: ${same ? "yes" : "NO"}`,
  );
  if (!same || held !== s.count) throw new Error(`${s.label}: the answer differs from the raw readings (held ${held} of ${s.count})`);
  return p99 < TARGET_P99_MS;
}

interface ExportFigures {
  seconds: number;
  bytes: number;
  rows: number;
  readings: number;
  rssBefore: number;
  rssPeak: number;
  heapPeak: number;
}

/**
 * One export read as it streams: bytes, CSV rows (lines after the header) and readings (non-empty
 * cells after the timestamp), counted byte by byte so the client holds one chunk at a time; this
 * process's RSS sampled every 100 ms meanwhile (the node serving it runs here). `live`: a full
 * collection before each sample, so the heap figure is what is still referenced.
 */
async function exportOnce(t: TestNode, monitor: string, from: number, to: number, live = false): Promise<ExportFigures> {
  gc?.();
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  let heapPeak = process.memoryUsage().heapUsed;
  const sample = () => {
    if (live) gc?.();
    const m = process.memoryUsage();
    rssPeak = Math.max(rssPeak, m.rss);
    heapPeak = Math.max(heapPeak, m.heapUsed);
  };
  const timer = setInterval(sample, 100);
  const started = performance.now();
  try {
    const res = await fetch(`${t.baseUrl}/_cm/monitors/${monitor}/_export?from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}`, {
      headers: { authorization: basic(ADMIN) },
    });
    if (res.status !== 200 || !res.body) throw new Error(`export: ${res.status} ${await res.text()}`);
    let bytes = 0;
    let lines = 0;
    let commas = 0;
    let empty = 0;
    let prev = 0;
    const COMMA = 0x2c;
    const NL = 0x0a;
    for await (const chunk of res.body) {
      bytes += chunk.length;
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk[i]!;
        if (c === COMMA) {
          commas++;
          if (prev === COMMA) empty++;
        } else if (c === NL) {
          lines++;
          if (prev === COMMA) empty++;
        }
        prev = c;
      }
    }
    sample();
    // The header's commas separate tag names, not readings.
    return { seconds: (performance.now() - started) / 1000, bytes, rows: lines - 1, readings: commas - empty - EXPORT_TAGS, rssBefore, rssPeak, heapPeak };
  } finally {
    clearInterval(timer);
  }
}

function printExport(label: string, f: ExportFigures): void {
  console.log(
    `${label}: ${f.readings.toLocaleString("en")} readings in ${f.rows.toLocaleString("en")} CSV rows, ${mb(f.bytes)}, ${f.seconds.toFixed(1)} s: ` +
      `${Math.round(f.readings / f.seconds).toLocaleString("en")} readings/s (${Math.round(f.rows / f.seconds).toLocaleString("en")} rows/s); ` +
      `RSS ${mb(f.rssBefore)} before, peak ${mb(f.rssPeak)} (+${mb(f.rssPeak - f.rssBefore)}); heap peak ${mb(f.heapPeak)}`,
  );
}

async function main(): Promise<void> {
  const t = await startTestNode({ services: ["api", "auth", "config", "pipelines"], env: { LOG_LEVEL: "warn" } });
  const pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  try {
    const { site, fn } = await createPlace(t, "History");
    const monitor = await monitorWithTags(t, fn, "Bearing", [
      { tag_id: "a", tag_name: "Vibration" },
      { tag_id: "b", tag_name: "Temperature" },
    ]);
    const exportTags = Array.from({ length: EXPORT_TAGS }, (_, g) => `x${String(g + 1).padStart(2, "0")}`);
    const exportMonitor = await monitorWithTags(t, fn, "Compressor", exportTags.map((x) => ({ tag_id: x, tag_name: `Tag ${x}` })));
    // Readings name their pipeline; no pipeline is made, so no retention run reaches this site.
    const pipeline = crypto.randomUUID();
    const a: Series = { label: "tag A, a year of one-minute readings", monitor, tag_id: "a", tag_name: "Vibration", from: YEAR_FROM, step: MIN, count: 525_600 };
    const b: Series = { label: "tag B, a day of one-second readings", monitor, tag_id: "b", tag_name: "Temperature", from: SECONDS_DAY, step: 1000, count: 86_400 };

    const seeding = performance.now();
    const days = await seedPartitions(pg, YEAR_FROM, 365);
    await seedSeries(pg, a, site, pipeline);
    await seedSeries(pg, b, site, pipeline);
    const exported = await seedExport(pg, exportMonitor, site, pipeline);
    await seedRollups(pg);
    const total = a.count + b.count + exported;
    console.log(
      `Seeded by SQL: ${total.toLocaleString("en")} readings in ${days.length} day partitions (tag A ${a.count.toLocaleString("en")}, tag B ${b.count.toLocaleString("en")}, ` +
        `export monitor ${exported.toLocaleString("en")}) and their minute and hour rollups, in ${((performance.now() - seeding) / 1000).toFixed(1)} s\n`,
    );

    const metA = await benchHistory(t, pg, a);
    const metB = await benchHistory(t, pg, b);

    const exportTo = EXPORT_FROM + EXPORT_DAYS * DAY - 1;
    const tenthTo = EXPORT_FROM + (EXPORT_DAYS * DAY) / 10 - 1;
    const tenth = await exportOnce(t, exportMonitor, EXPORT_FROM, tenthTo);
    const whole = await exportOnce(t, exportMonitor, EXPORT_FROM, exportTo);
    console.log("");
    printExport(`export of ${EXPORT_DAYS / 10} days (a tenth)`, tenth);
    printExport(`export of ${EXPORT_DAYS} days`, whole);
    if (whole.readings !== exported || whole.rows !== EXPORT_DAYS * 1440) throw new Error(`export: ${whole.readings} readings in ${whole.rows} rows, ${exported} stored`);
    console.log(`export complete: every stored reading in the CSV (${exported.toLocaleString("en")}), one row per minute (${(EXPORT_DAYS * 1440).toLocaleString("en")})`);
    if (gc) {
      const liveTenth = await exportOnce(t, exportMonitor, EXPORT_FROM, tenthTo, true);
      const liveWhole = await exportOnce(t, exportMonitor, EXPORT_FROM, exportTo, true);
      console.log(
        `live heap (a full collection before each 100 ms sample): peak ${mb(liveTenth.heapPeak)} for ${EXPORT_DAYS / 10} days, ${mb(liveWhole.heapPeak)} for ${EXPORT_DAYS} days ` +
          `(the collections slow these two: ${Math.round(liveTenth.readings / liveTenth.seconds).toLocaleString("en")} and ${Math.round(liveWhole.readings / liveWhole.seconds).toLocaleString("en")} readings/s)`,
      );
    } else console.log("live heap: not measured (run node with --expose-gc, as the npm script does)");
    console.log(`\nhistory targets (p99 < ${TARGET_P99_MS} ms for each tag): ${metA && metB ? "met" : "MISSED"}`);
  } finally {
    await pg.end().catch(() => undefined);
    await t.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
