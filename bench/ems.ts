/**
 * `npm run bench:ems`: the energy trend of one monitor holding a year of minute data
 * (525,600 readings of a kWh counter, 2025, site in Europe/Berlin).
 *   1. Ingestion: the readings through `ems.ingest.readings` in batches of 10,000 (raw row,
 *      dedupe key, quarter-hour rollup upsert), readings per second.
 *   2. `GET /_ems/monitor/_trend/<id>` over the whole year, monthly and daily, and over one day
 *      hourly, through the gateway (auth cached as in production): p50 and p99. Target p99 under
 *      100 ms for the year.
 *   3. The same monthly and daily question answered by scanning the raw readings in PostgreSQL
 *      (a window over every reading, grouped by local day or month with date_trunc in the
 *      zone): p50 and p99.
 *
 * Env: BENCH_EMS_REQUESTS (100), BENCH_EMS_SCANS (20).
 */
import { Client } from "pg";
import { RAW_READINGS_ONLY, startTestNode, type TestNode } from "../test/helpers/node";

const REQUESTS = Number(process.env.BENCH_EMS_REQUESTS ?? 100);
const SCANS = Number(process.env.BENCH_EMS_SCANS ?? 20);
const TZ = "Europe/Berlin";
const YEAR_FROM = "2025-01-01T00:00:00+01:00";
const YEAR_TO = "2026-01-01T00:00:00+01:00";
const MINUTES = 525_600;
const BATCH = 10_000;

async function create(t: TestNode, path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.http<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

function stats(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return `p50 ${at(0.5).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms`;
}

async function timed(n: number, fn: () => Promise<void>): Promise<number[]> {
  for (let i = 0; i < Math.min(5, n); i++) await fn();
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  return ms;
}

async function main() {
  // Step 3 scans the raw readings: ems's compression of its key (services/ems/hours.ts) would move them under it.
  const t = await startTestNode({ services: ["api", "auth", "config", "ems"], env: { ...RAW_READINGS_ONLY } });
  const pg = new Client({ connectionString: t.db.url });
  try {
    const site = await create(t, "/_config/sites", {
      site_name: "Bench site",
      location: "Berlin",
      timezone: TZ,
      latitude: "52.5",
      edge_firmware: { current_version: "1.0.0", previous_version: "" },
    });
    const plant = await create(t, "/_config/plants", { plant_name: "Bench plant", site_id: site });
    const fn = await create(t, "/_config/functions", { function_name: "Bench function", plant_id: plant });
    const monitor = await create(t, "/_config/monitors", { monitor_name: "Main feeder", monitor_type: "energy-monitor", function_id: fn });
    const put = await t.http("PUT", `/_config/monitors/${monitor}`, {
      body: {
        monitor_name: "Main feeder",
        monitor_type: "energy-monitor",
        tags: [{ tag_id: "kwh", tag_name: "Energy", tag_desc: "", tag_unit: "kWh" }],
        specs: {},
        attributes: {},
      },
    });
    if (put.status !== 200) throw new Error(JSON.stringify(put.body));

    const start = Date.parse(YEAR_FROM);
    const t0 = performance.now();
    let counter = 100_000;
    for (let i = 0; i < MINUTES; i += BATCH) {
      const readings = [];
      for (let j = i; j < Math.min(MINUTES, i + BATCH); j++) {
        counter += 0.5 + ((j * 7919) % 100) / 100; // 0.5-1.5 kWh a minute
        readings.push({ monitor_id: monitor, tag_id: "kwh", ts: start + j * 60_000, value: Math.round(counter * 1000) / 1000 });
      }
      await t.node.broker.call("ems.ingest.readings", { readings });
    }
    const ingestS = (performance.now() - t0) / 1000;
    console.log(`Ingestion: ${MINUTES.toLocaleString("en")} minute readings in ${ingestS.toFixed(1)} s (${Math.round(MINUTES / ingestS).toLocaleString("en")} readings/s)`);

    const trend = (from: string, to: string, interval: string) => async () => {
      const res = await t.http<unknown[]>(
        "GET",
        `/_ems/monitor/_trend/${monitor}?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&metric=consumption_chart&interval=${interval}`,
      );
      if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    };
    const monthly = await timed(REQUESTS, trend(YEAR_FROM, YEAR_TO, "monthly"));
    const daily = await timed(REQUESTS, trend(YEAR_FROM, YEAR_TO, "daily"));
    const oneDay = await timed(REQUESTS, trend("2025-06-01T00:00:00+02:00", "2025-06-02T00:00:00+02:00", "hourly"));
    const metrics = await timed(REQUESTS, async () => {
      const res = await t.http("GET", `/_ems/monitor/${monitor}?from=${encodeURIComponent(YEAR_FROM)}&to=${encodeURIComponent(YEAR_TO)}`);
      if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    });
    console.log(`Trend from the rollups (local days + quarter hours), over HTTP (${REQUESTS} requests each):`);
    console.log(`  year, monthly (12 buckets):  ${stats(monthly)}`);
    console.log(`  year, daily (365 buckets):   ${stats(daily)}`);
    console.log(`  one day, hourly (24):        ${stats(oneDay)}`);
    console.log(`  year, metrics object (op 75): ${stats(metrics)}`);

    await pg.connect();
    const scan = (unit: string) => async () => {
      await pg.query(
        `SELECT date_trunc($5, to_timestamp(ts / 1000.0), $6) AS bucket, sum(step) AS kwh
           FROM (SELECT ts, value - lag(value) OVER (ORDER BY ts) AS step
                   FROM ems.readings WHERE monitor_id = $1 AND tag_id = $2 AND ts >= $3 AND ts < $4) s
          GROUP BY 1 ORDER BY 1`,
        [monitor, "kwh", start, Date.parse(YEAR_TO), unit, TZ],
      );
    };
    const rawMonthly = await timed(SCANS, scan("month"));
    const rawDaily = await timed(SCANS, scan("day"));
    console.log(`The same question scanning the ${MINUTES.toLocaleString("en")} raw readings in SQL (${SCANS} runs each):`);
    console.log(`  year, monthly:  ${stats(rawMonthly)}`);
    console.log(`  year, daily:    ${stats(rawDaily)}`);
  } finally {
    await pg.end().catch(() => undefined);
    await t.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
