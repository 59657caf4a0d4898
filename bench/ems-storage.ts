/**
 * `npm run bench:ems-storage`: what ems keeps of an energy reading, all-in — its readings key
 * (`ems.readings`, `ems.compressed_hours`), the quarter-hour and daily rollups, indexes and TOAST,
 * after VACUUM FULL — raw (as before) and with the hours past HISTORY_COMPRESS_AFTER compressed
 * (services/ems/hours.ts), in the same run, on an energy monitor's four tags of the simulator
 * (bench/signals.ts: kWh counter, kW, V, A at 1 Hz, timestamps as a gateway's clock gives them).
 * Then readings/s of:
 *   - ingestion of fresh readings (no compressed hour touched), in batches of 10,000;
 *   - the compression job (one core, PostgreSQL beside it);
 *   - a redelivery of a compressed day (every batch decoded against its hours, nothing counted).
 * Readings go through ems's own applyReadings, as its stream consumer calls it.
 *
 * Env: BENCH_EMS_STORAGE_HOURS (24).
 */
import { randomUUID } from "node:crypto";
import { Client } from "pg";
import type { DataSource } from "typeorm";
import { DAY_MS, HOUR_MS } from "../lib/time";
import { compressReadings } from "../services/ems/hours";
import { applyReadings } from "../services/ems/rollups.repo";
import type { Reading } from "../services/ems/rollup";
import { RAW_READINGS_ONLY, startTestNode } from "../test/helpers/node";
import { signals } from "./signals";

const HOURS = Number(process.env.BENCH_EMS_STORAGE_HOURS ?? 24);
const BATCH = 10_000;
/** Whole days some weeks back: every hour is past HISTORY_COMPRESS_AFTER. */
const START = Math.floor(Date.now() / DAY_MS) * DAY_MS - 20 * DAY_MS;
const TABLES = ["readings", "compressed_hours", "rollups", "rollups_daily"];

async function bytes(pg: Client): Promise<number> {
  for (const t of TABLES) await pg.query(`VACUUM FULL ems.${t}`);
  const r = await pg.query(`SELECT sum(pg_total_relation_size(('ems.' || t)::regclass))::float8 AS b FROM unnest($1::text[]) AS t`, [TABLES]);
  return r.rows[0].b as number;
}

/** Readings as a gateway's batches bring them: second by second, the monitor's tags together. */
function energyReadings(monitor_id: string): Reading[] {
  const gen = signals(31, START, HOURS);
  const tags = Object.entries(gen.simulator()).filter(([name]) => name.startsWith("energy"));
  const series = tags.map(([tag_id, signal]) => ({ tag_id, chunks: gen.hourly(signal, true) }));
  const out: Reading[] = [];
  for (let h = 0; h < HOURS; h++) {
    for (let s = 0; s < 3600; s++) {
      for (const { tag_id, chunks } of series) out.push({ monitor_id, tag_id, ts: chunks[h]!.timestamps[s]!, value: chunks[h]!.values[s]! });
    }
  }
  return out;
}

async function ingest(db: DataSource, readings: Reading[], zones: Map<string, string>): Promise<{ applied: number; perSecond: number }> {
  const t0 = performance.now();
  let applied = 0;
  for (let i = 0; i < readings.length; i += BATCH) applied += await applyReadings(db, readings.slice(i, i + BATCH), zones);
  return { applied, perSecond: readings.length / ((performance.now() - t0) / 1000) };
}

const rate = (x: number) => `${Math.round(x).toLocaleString("en")} readings/s`;

async function main(): Promise<void> {
  // The node's own job off (400 days): the benchmark runs it when it measures it.
  const t = await startTestNode({ services: ["ems"], env: { ...RAW_READINGS_ONLY, LOG_LEVEL: "warn" } });
  const db = (t.node.broker.getLocalService("ems") as unknown as { db: DataSource }).db;
  const pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  try {
    const monitor = randomUUID();
    const zones = new Map([[monitor, "Europe/Berlin"]]);
    const readings = energyReadings(monitor);
    const n = readings.length;
    console.log(`EMS storage of an energy monitor's 4 tags × ${HOURS} h at 1 Hz (${n.toLocaleString("en")} readings), all-in after VACUUM FULL; Node ${process.version}`);

    const each = async () => {
      const sizes = await pg.query(`SELECT t, pg_total_relation_size(('ems.' || t)::regclass)::float8 AS b FROM unnest($1::text[]) AS t`, [TABLES]);
      return sizes.rows.map((r: { t: string; b: number }) => `${r.t} ${(r.b / n).toFixed(2)}`).join(", ");
    };

    // No autovacuum meanwhile: an ANALYZE's snapshot would keep VACUUM FULL from dropping the compressed rows.
    for (const table of TABLES) await pg.query(`ALTER TABLE ems.${table} SET (autovacuum_enabled = false)`);
    const fresh = await ingest(db, readings, zones);
    if (fresh.applied !== n) throw new Error(`applied ${fresh.applied} of ${n}`);
    const raw = await bytes(pg);
    const t0 = performance.now();
    const hours = await compressReadings(db, Date.now(), HOUR_MS);
    const compressS = (performance.now() - t0) / 1000;
    const compressed = await bytes(pg);
    const byTable = await each();
    const redelivered = await ingest(db, readings, zones);
    if (redelivered.applied !== 0) throw new Error(`a redelivery counted ${redelivered.applied}`);
    const rows = await pg.query(
      `SELECT (SELECT count(*) FROM ems.readings)::int AS raw, (SELECT count(*) FROM ems.compressed_hours)::int AS hours,
              (SELECT count(*) FROM ems.rollups)::int AS rollups, (SELECT count(*) FROM ems.rollups_daily)::int AS daily`,
    );
    console.log(`  before (raw key):         ${(raw / n).toFixed(2)} B a reading (${raw.toLocaleString("en")} B)`);
    console.log(`  after (hours compressed): ${(compressed / n).toFixed(2)} B a reading (${compressed.toLocaleString("en")} B): ${(raw / compressed).toFixed(0)}× less`);
    console.log(`    by table, B a reading: ${byTable}`);
    console.log(`    rows: ${JSON.stringify(rows.rows[0])}; ${hours} hours written`);
    console.log(`  ingestion, fresh readings:             ${rate(fresh.perSecond)}`);
    console.log(`  compression job:                       ${rate(n / compressS)}`);
    console.log(`  redelivery of compressed hours:        ${rate(redelivered.perSecond)} (nothing counted)`);
    console.log(`  1,000 tags at 1 Hz for a year at ${(compressed / n).toFixed(2)} B: ${((compressed / n) * 1000 * 31_536_000 / 1e9).toFixed(1)} GB (raw key: ${((raw / n) * 1000 * 31_536_000 / 1e9).toFixed(0)} GB)`);
  } finally {
    await pg.end().catch(() => undefined);
    await t.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
