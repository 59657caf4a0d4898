/**
 * `npm run bench:storage`: what a reading costs on disk all-in — raw rows, chunks, the series
 * dictionary, minute and hour rollups, their indexes and TOAST, after VACUUM FULL — raw (as
 * before the historian) and compressed, in the same run, on:
 *   - the simulator's signals (bench/signals.ts: 12 tags at 1 Hz, decimals at sensor resolution,
 *     an energy counter, a run state 0/1), timestamps as a gateway's clock gives them (±20 ms);
 *   - random doubles (the worst case), 4 tags at 1 Hz.
 * Then the compression's throughput (readings/s, the job on one core with PostgreSQL beside it),
 * and read latency p50/p99 of a day of one tag raw (86,400 readings) and of a year of one tag at
 * 1,000 points, raw rows vs compressed. Readings are written by SQL into the service's tables
 * (the ingestion path is bench:ingest's); the job and the reads are the service's own functions.
 *
 * Env: BENCH_STORAGE_HOURS (24), BENCH_STORAGE_READS (20).
 */
import { Client } from "pg";
import type { DataSource } from "typeorm";
import { randomUUID } from "node:crypto";
import { compressReadings } from "../services/pipelines/chunks";
import { bucketSize, historyTiers } from "../services/pipelines/history";
import { historyParts, rawReadings } from "../services/pipelines/history.repo";
import { startTestNode, RAW_READINGS_ONLY } from "../test/helpers/node";
import { DAY_MS, HOUR_MS } from "../lib/time";
import { seedPartitions } from "./history-seed";
import { signals } from "./signals";

const HOURS = Number(process.env.BENCH_STORAGE_HOURS ?? 24);
const READS = Number(process.env.BENCH_STORAGE_READS ?? 20);
/** Whole days some weeks back: every hour is past HISTORY_COMPRESS_AFTER. */
const START = Math.floor(Date.now() / DAY_MS) * DAY_MS - 20 * DAY_MS;
const TABLES = ["readings", "chunks", "series", "reading_minutes", "reading_hours"];

interface Tag {
  monitor_id: string;
  tag_id: string;
  timestamps: number[];
  values: number[];
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function bytes(pg: Client): Promise<number> {
  for (const t of TABLES) await pg.query(`VACUUM FULL pipelines.${t}`);
  const parts = (await pg.query(`SELECT inhrelid::regclass::text AS name FROM pg_inherits WHERE inhparent = 'pipelines.readings'::regclass`)).rows as { name: string }[];
  for (const p of parts) await pg.query(`VACUUM FULL ${p.name}`);
  const r = await pg.query(
    `SELECT sum(pg_total_relation_size(c.oid))::float8 AS b FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'pipelines' AND (c.relname = ANY($1) OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'pipelines.readings'::regclass))`,
    [TABLES],
  );
  return r.rows[0].b as number;
}

/** The tags' readings into `readings` (a batch per 10,000 as ingestion would), then their minute and hour rollups. */
async function seed(pg: Client, tags: Tag[], site: string, pipeline: string): Promise<number> {
  let n = 0;
  for (const tag of tags) {
    for (let i = 0; i < tag.values.length; i += 50_000) {
      const ts = tag.timestamps.slice(i, i + 50_000);
      const vs = tag.values.slice(i, i + 50_000);
      await pg.query(
        `INSERT INTO pipelines.readings (ts, pipeline_id, site_id, monitor_id, tag_id, value, batch_id, idx)
         SELECT to_timestamp(u.t / 1000), $1, $2, $3, $4, u.v, md5($4 || u.i / 10000)::uuid, (u.i % 10000)::int
           FROM unnest($5::float8[], $6::float8[]) WITH ORDINALITY AS u(t, v, i)`,
        [pipeline, site, tag.monitor_id, tag.tag_id, ts, vs.map((v) => (Object.is(v, -0) ? 0 : v))],
      );
      n += ts.length;
    }
  }
  for (const [table, size] of [
    ["reading_minutes", 60_000],
    ["reading_hours", HOUR_MS],
  ] as const) {
    await pg.query(
      `INSERT INTO pipelines.${table} (monitor_id, tag_id, start, site_id, n, sum, min, max)
       SELECT monitor_id, tag_id, t - t % ${size}, $1, count(*), sum(value), min(value), max(value)
         FROM (SELECT monitor_id, tag_id, value, round(extract(epoch FROM ts) * 1000)::bigint AS t FROM pipelines.readings WHERE site_id = $1) r GROUP BY 1, 2, 3`,
      [site],
    );
  }
  return n;
}

async function truncate(pg: Client): Promise<void> {
  await pg.query(`TRUNCATE pipelines.readings, pipelines.chunks, pipelines.series, pipelines.reading_minutes, pipelines.reading_hours`);
}

async function latency(run: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  const xs: number[] = [];
  for (let i = 0; i < READS; i++) {
    const t0 = performance.now();
    await run();
    xs.push(performance.now() - t0);
  }
  return { p50: pct(xs, 50), p99: pct(xs, 99) };
}

async function main(): Promise<void> {
  const t = await startTestNode({ services: ["pipelines"], env: { ...RAW_READINGS_ONLY, LOG_LEVEL: "warn" } });
  const db = (t.node.broker.getLocalService("pipelines") as unknown as { db: DataSource }).db;
  const pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  try {
    // Partitions for the days that have readings only: an empty partition's pages (~16 KB) would weigh on a small sample.
    // (and the day before each: a jittered first reading may fall 20 ms before midnight).
    await seedPartitions(pg, START - DAY_MS, Math.ceil(HOURS / 24) + 2);
    await seedPartitions(pg, START - 365 * DAY_MS, 2);
    const gen = signals(29, START, HOURS);
    const jittered = (signal: (t: number) => number): Pick<Tag, "timestamps" | "values"> => {
      const chunks = gen.hourly(signal, true);
      return { timestamps: chunks.flatMap((c) => c.timestamps), values: chunks.flatMap((c) => c.values) };
    };
    const monitor = randomUUID();
    const cases: { name: string; tags: Tag[] }[] = [
      { name: `simulator, ${Object.keys(gen.simulator()).length} tags × ${HOURS} h at 1 Hz`, tags: Object.entries(gen.simulator()).map(([name, signal]) => ({ monitor_id: monitor, tag_id: name, ...jittered(signal) })) },
      { name: `random doubles, 4 tags × ${HOURS} h at 1 Hz`, tags: [0, 1, 2, 3].map((i) => ({ monitor_id: monitor, tag_id: `random ${i}`, ...jittered(gen.random53) })) },
    ];
    console.log(`Historian storage, all-in (raw rows, chunks, series, rollups, indexes, TOAST) after VACUUM FULL; Node ${process.version}`);
    console.log(`${"data".padEnd(44)} readings   raw B/r  compressed B/r  ratio   compress readings/s`);
    for (const c of cases) {
      await truncate(pg);
      const n = await seed(pg, c.tags, randomUUID(), randomUUID());
      const raw = await bytes(pg);
      const t0 = performance.now();
      await compressReadings(db, Date.now(), HOUR_MS);
      const seconds = (performance.now() - t0) / 1000;
      const compressed = await bytes(pg);
      console.log(
        `${c.name.padEnd(44)} ${String(n).padStart(8)} ${(raw / n).toFixed(1).padStart(9)} ${(compressed / n).toFixed(2).padStart(15)} ${(raw / compressed).toFixed(0).padStart(6)}×   ${Math.round(n / seconds).toLocaleString("en").padStart(12)}`,
      );
    }

    // Reads: a day of one tag raw (every reading), and a year at 1,000 points (hour rollups, the edges read finer).
    await truncate(pg);
    const tag = "pressure bar";
    const day = { from: START, to: START + DAY_MS - 1 };
    const yearFrom = START + DAY_MS - 365 * DAY_MS;
    const year = { from: yearFrom + 1234, to: START + DAY_MS - 1 - 4321 };
    const one: Tag = { monitor_id: monitor, tag_id: tag, ...jittered(gen.simulator()[tag]!) };
    // The year's first day too, so both edges of the year read below the hour rollups.
    const first: Tag = { ...one, timestamps: one.timestamps.map((x) => x - START + yearFrom) };
    const site = randomUUID();
    await seed(pg, [one, first], site, randomUUID());
    // The hours between: rollups only (what the year's buckets read whole), as a year of data would leave them.
    await pg.query(
      `INSERT INTO pipelines.reading_hours (monitor_id, tag_id, start, site_id, n, sum, min, max)
       SELECT $1, $2, h, $3, 3600, 3600 * 4.5, 4.0, 5.0 FROM generate_series($4::bigint, $5::bigint, ${HOUR_MS}) AS h ON CONFLICT DO NOTHING`,
      [monitor, tag, site, yearFrom + DAY_MS, START - HOUR_MS],
    );
    await pg.query(`VACUUM ANALYZE pipelines.readings, pipelines.reading_hours, pipelines.reading_minutes`);
    const bucket = bucketSize(year, 1000);
    const reads = {
      day: () => rawReadings(db, monitor, tag, day, 100_000),
      year: () => historyParts(db, monitor, tag, historyTiers(year, bucket), bucket),
    };
    const check = (await reads.day()).length;
    const rawDay = await latency(reads.day);
    const rawYear = await latency(reads.year);
    await compressReadings(db, Date.now(), HOUR_MS);
    await pg.query(`VACUUM ANALYZE pipelines.chunks, pipelines.readings`);
    if ((await reads.day()).length !== check) throw new Error("the compressed day does not read back whole");
    const cDay = await latency(reads.day);
    const cYear = await latency(reads.year);
    console.log(`\nReads of one tag, ${READS} each, p50 / p99 (raw rows → compressed; ratio of p50s)`);
    console.log(`  a day raw (${check} readings)         ${ms(rawDay.p50)} / ${ms(rawDay.p99)}  →  ${ms(cDay.p50)} / ${ms(cDay.p99)}   ${(rawDay.p50 / cDay.p50).toFixed(2)}×`);
    console.log(`  a year at 1,000 points (${bucket / HOUR_MS} h buckets)  ${ms(rawYear.p50)} / ${ms(rawYear.p99)}  →  ${ms(cYear.p50)} / ${ms(cYear.p99)}   ${(rawYear.p50 / cYear.p50).toFixed(2)}×`);
  } finally {
    await pg.end();
    await t.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
