/**
 * `npm run bench:collectors`: the SQL collector (docs/collectors.md) reading a large MariaDB
 * table of 8 numeric columns, rows one every 10 ms ending now.
 *
 *   (a) the source alone: the collector's page queries (lib/sql-source.ts, pageQuery and pageOf)
 *       over the whole table, nothing stored: SQL rows/s read;
 *   (b) end to end: api+auth+config+pipelines in one process, collectors in its own, over NATS; a
 *       started SQL pipeline whose 8 tags are the 8 columns: rows/s collected and readings/s
 *       stored (each page stored through the ingestion with its position, in one transaction),
 *       from the first page stored to the last (the collectors process's start left out).
 *
 *   (c) OPC-UA: an OPC-UA server of the tests' own (test/helpers/opcua-server.ts) with
 *       BENCH_OPCUA_ITEMS Double variables all changing every second; as many started OPC-UA
 *       pipelines of 1,000 tags as they need (op 50 takes 1,000 tags a pipeline), sampled at
 *       BENCH_OPCUA_RATE Hz (1), collected by one collectors process: readings/s stored over BENCH_OPCUA_SECONDS,
 *       and the lag from a value's change (its source timestamp) to its being stored, seen in
 *       the collections' positions every 100 ms (so up to 100 ms late): p50, p99, max.
 *
 * Env: BENCH_CASES (`sql,opcua`), BENCH_ROWS (1,000,000), COLLECTOR_PAGE_ROWS (1000; 625 with 8
 * tags: a page carries at most 5,000 readings), BENCH_TIMEOUT_S (1800), BENCH_OPCUA_ITEMS (5000),
 * BENCH_OPCUA_SECONDS (30). Needs PostgreSQL, Redis, NATS and MariaDB (root without a password)
 * on 127.0.0.1.
 */
import mysql from "mysql2/promise";
import { Client } from "pg";
import { openSession } from "../lib/sql-source";
import { fingerprintOf, pageOf, seenCount, type SourceRow } from "../services/collectors/pages";
import { pageQuery, sqlSourceOf } from "../services/collectors/sql-source";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, pollUntil, startCluster, type Cluster } from "../test/helpers/cluster";
import { OpcuaTestServer } from "../test/helpers/opcua";
import type { HttpClient } from "../test/helpers/node";
import { ok } from "./http";

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const PAGE_ROWS = Number(process.env.COLLECTOR_PAGE_ROWS ?? 1000);
const TIMEOUT_S = Number(process.env.BENCH_TIMEOUT_S ?? 1800);
const COLUMNS = Array.from({ length: 8 }, (_, i) => `c${i + 1}`);
const DB = "ims_bench_collectors";
const CASES = (process.env.BENCH_CASES ?? "sql,opcua").split(",");
const OPCUA_ITEMS = Number(process.env.BENCH_OPCUA_ITEMS ?? 5000);
const OPCUA_SECONDS = Number(process.env.BENCH_OPCUA_SECONDS ?? 30);
const OPCUA_RATE = Number(process.env.BENCH_OPCUA_RATE ?? 1);

/** The table: ROWS rows, one every 10 ms up to now (UTC), 8 doubles each (MariaDB's sequence engine makes them). */
async function fill(): Promise<void> {
  const my = await mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root" });
  await my.query(`DROP DATABASE IF EXISTS ${DB}`);
  await my.query(`CREATE DATABASE ${DB}`);
  await my.query(`CREATE TABLE ${DB}.readings (ts datetime(3) NOT NULL, ${COLUMNS.map((c) => `${c} double`).join(", ")}, KEY (ts))`);
  const values = COLUMNS.map((_, i) => `seq * ${i + 1} / 7`).join(", ");
  for (let from = 1; from <= ROWS; from += 100_000) {
    const to = Math.min(ROWS, from + 99_999);
    await my.query(`INSERT INTO ${DB}.readings SELECT UTC_TIMESTAMP(3) - INTERVAL (${ROWS} - seq) * 10000 MICROSECOND, ${values} FROM ${DB}.seq_${from}_to_${to}`);
  }
  await my.end();
}

const settings = {
  mac_address: "02:be:0c:00:00:01",
  server_address: "127.0.0.1",
  port: 3306,
  username: "root",
  password: "",
  config: { database: DB, table: "readings", time_field: "ts", last_collected: "none", frequency: 1, frequency_unit: "seconds" },
};

/** A site, plant and function for the bench's monitors: the function's id. */
async function benchFunction(http: HttpClient): Promise<string> {
  const site = (await ok<{ id: string }>(http, "POST", "/_config/sites", { site_name: "Bench site", location: "Bench", timezone: "UTC", longitude: "0", retention_period: 30, edge_firmware: {} })).id;
  const plant = (await ok<{ id: string }>(http, "POST", "/_config/plants", { plant_name: "Bench plant", site_id: site })).id;
  return (await ok<{ id: string }>(http, "POST", "/_config/functions", { function_name: "Bench line", plant_id: plant })).id;
}

/** A monitor of the function whose tags are `tagIds` (tag_name = tag_id): its id. */
async function benchMonitor(http: HttpClient, fn: string, name: string, tagIds: string[]): Promise<string> {
  const monitor = (await ok<{ id: string }>(http, "POST", "/_config/monitors", { monitor_name: name, monitor_type: "process-monitor", function_id: fn })).id;
  await ok(http, "PUT", `/_config/monitors/${monitor}`, {
    monitor_name: name,
    monitor_type: "process-monitor",
    tags: tagIds.map((c) => ({ tag_id: c, tag_name: c, tag_desc: "", tag_unit: "", thresholds: {} })),
    specs: {},
    attributes: {},
  });
  return monitor;
}

/** (a) The source alone: every page of the table, read as the collector reads it. */
async function readAlone(): Promise<{ rows: number; seconds: number }> {
  const source = sqlSourceOf(settings);
  const session = await openSession(source.target, source.database);
  const pageRows = Math.min(PAGE_ROWS, Math.floor(5000 / COLUMNS.length));
  let position = { last: null as string | null, seen: {} as Record<string, number> };
  let rows = 0;
  const t0 = process.hrtime.bigint();
  try {
    for (;;) {
      const limit = pageRows + seenCount(position);
      const q = pageQuery(source, COLUMNS, position, limit);
      const result = await session.query(q.sql, q.params);
      const page: SourceRow[] = result.rows.map((r) => {
        const time = String(r.c0);
        const values = COLUMNS.map((_, i) => r[`c${i + 1}`]);
        return { time, values, fingerprint: fingerprintOf(time, values) };
      });
      const { fresh, to } = pageOf(page, position);
      rows += fresh.length;
      position = to;
      if (fresh.length === 0 || page.length < limit) break;
    }
  } finally {
    await session.close();
  }
  return { rows, seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

async function endToEnd(): Promise<{ rows: number; readings: number; seconds: number }> {
  let cluster: Cluster | undefined;
  const pg = { client: undefined as Client | undefined };
  try {
    cluster = await startCluster({ processes: [["api", "auth", "config", "pipelines"]], env: { MQTT_PORT: "0", LOG_LEVEL: "warn" } });
    const { http } = cluster;
    pg.client = new Client({ connectionString: cluster.db!.url });
    await pg.client.connect();
    const fn = await benchFunction(http);
    const monitor = await benchMonitor(http, fn, "Bench meter", COLUMNS);
    const { id } = await ok<{ id: string }>(http, "POST", "/_config/pipelines/edge-server", {
      pipeline_name: "Bench SQL",
      function_id: fn,
      data_type: "Production",
      data_source: "Cloud",
      data_source_subtype: "SQL",
      settings,
      gateway_firmware: { current_version: "1.0.0" },
      tags: COLUMNS.map((c) => ({ tag_name: c, tag_desc: "", tag_unit: "", column_name: c, monitor_id: monitor })),
    });
    const collectors = cluster.addProcess(["collectors"], { SOURCE_ALLOW: "127.0.0.1:3306", COLLECTOR_PAGE_ROWS: String(PAGE_ROWS) });
    const collected = async () => {
      const { rows } = await pg.client!.query<{ n: string }>(`SELECT collected AS n FROM pipelines.pipeline_collections WHERE pipeline_id = $1`, [id]);
      return Number(rows[0]?.n ?? 0);
    };
    await ok(http, "POST", "/_config/pipelines/_action", { pipeline_id: [id], action: "start" });
    // Timed from the first page stored: the collectors process's own start is not the collector's rate.
    let first = 0;
    await pollUntil(async () => (first = await collected()) > 0, 120_000, "the first page", [collectors]);
    const t0 = process.hrtime.bigint();
    let last = 0;
    await pollUntil(
      async () => {
        last = await collected();
        return last >= ROWS * COLUMNS.length;
      },
      TIMEOUT_S * 1000,
      "the table collected",
      [collectors],
    );
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const { rows } = await pg.client.query<{ n: string }>(`SELECT count(*) AS n FROM pipelines.readings WHERE pipeline_id = $1`, [id]);
    if (Number(rows[0]!.n) !== ROWS * COLUMNS.length) throw new Error(`stored ${rows[0]!.n} readings, expected ${ROWS * COLUMNS.length}`);
    return { rows: (last - first) / COLUMNS.length, readings: last - first, seconds };
  } finally {
    await pg.client?.end().catch(() => undefined);
    await cluster?.stop();
  }
}

/** (c) OPC-UA: OPCUA_ITEMS variables changing every second, collected for OPCUA_SECONDS. */
async function opcua(): Promise<{ readings: number; seconds: number; lags: number[] }> {
  let cluster: Cluster | undefined;
  let server: OpcuaTestServer | undefined;
  let db: Client | undefined;
  const pki = mkdtempSync(path.join(os.tmpdir(), "ims-bench-opcua-"));
  try {
    const port = await freePort();
    server = await OpcuaTestServer.start(port, path.join(pki, "server"), { OPCUA_TEST_VARIABLES: String(OPCUA_ITEMS), OPCUA_TEST_PERIOD_MS: "1000" });
    cluster = await startCluster({ processes: [["api", "auth", "config", "pipelines"]], env: { MQTT_PORT: "0", LOG_LEVEL: "warn" } });
    const { http } = cluster;
    db = new Client({ connectionString: cluster.db!.url });
    await db.connect();
    const fn = await benchFunction(http);
    const ids: string[] = [];
    for (let from = 0, k = 0; from < OPCUA_ITEMS; from += 1000, k++) {
      const vars = Array.from({ length: Math.min(1000, OPCUA_ITEMS - from) }, (_, i) => `v${from + i}`);
      const monitor = await benchMonitor(http, fn, `Bench rig ${k}`, vars);
      const { id } = await ok<{ id: string }>(http, "POST", "/_config/pipelines/edge-server", {
        pipeline_name: `Bench OPC-UA ${k}`,
        function_id: fn,
        data_type: "Process",
        data_source: "Cloud",
        data_source_subtype: "OPC-UA",
        settings: { mac_address: `02:be:0c:00:01:${k.toString(16).padStart(2, "0")}`, server_url: `opc.tcp://127.0.0.1:${port}`, user_name: "opc", user_password: "opc-secret", sampling_rate: OPCUA_RATE },
        gateway_firmware: { current_version: "1.0.0" },
        tags: vars.map((v) => ({ tag_name: v, tag_desc: "", tag_unit: "", monitor_id: monitor, address: `ns=1;s=Var${v.slice(1)}`, tag_id: v })),
      });
      ids.push(id);
    }
    const collectors = cluster.addProcess(["collectors"], { SOURCE_ALLOW: "127.0.0.0/8", OPCUA_PKI_DIR: path.join(pki, "client") });
    await ok(http, "POST", "/_config/pipelines/_action", { pipeline_id: ids, action: "start" });
    const positions = async () => {
      const { rows } = await db!.query<{ collected: string; position: { seen: Record<string, number> } }>(
        `SELECT collected, position FROM pipelines.pipeline_collections WHERE pipeline_id = ANY($1::uuid[])`,
        [ids],
      );
      const seen = new Map<string, number>();
      for (const r of rows) for (const [address, ts] of Object.entries(r.position.seen ?? {})) seen.set(address, ts);
      return { collected: rows.reduce((n, r) => n + Number(r.collected), 0), seen };
    };
    // Timed once every item has a value stored: sessions opened, subscriptions made.
    await pollUntil(async () => (await positions()).seen.size >= OPCUA_ITEMS, 180_000, "a value of every item", [collectors]);
    let before = await positions();
    const start = { at: Date.now(), collected: before.collected };
    const lags: number[] = [];
    while (Date.now() - start.at < OPCUA_SECONDS * 1000) {
      await new Promise((r) => setTimeout(r, 100));
      const now = await positions();
      const seenAt = Date.now();
      for (const [address, ts] of now.seen) if (ts > (before.seen.get(address) ?? 0)) lags.push(seenAt - ts);
      before = now;
    }
    return { readings: before.collected - start.collected, seconds: (Date.now() - start.at) / 1000, lags };
  } finally {
    await db?.end().catch(() => undefined);
    await cluster?.stop();
    await server?.stop("SIGKILL");
    rmSync(pki, { recursive: true, force: true });
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

async function main(): Promise<void> {
  if (CASES.includes("sql")) await sql();
  if (CASES.includes("opcua")) {
    console.log(`bench:collectors (c) OPC-UA: ${OPCUA_ITEMS} items changing every second, ${Math.ceil(OPCUA_ITEMS / 1000)} pipelines sampling at ${OPCUA_RATE} Hz, ${OPCUA_SECONDS} s`);
    const c = await opcua();
    const lags = [...c.lags].sort((x, y) => x - y);
    console.log(
      `(c) OPC-UA: ${c.readings} readings in ${c.seconds.toFixed(1)} s = ${Math.round(c.readings / c.seconds)} readings/s stored; ` +
        `change to stored (${lags.length} values): p50 ${quantile(lags, 0.5)} ms, p99 ${quantile(lags, 0.99)} ms, max ${lags.at(-1)} ms`,
    );
  }
}

async function sql(): Promise<void> {
  console.log(`bench:collectors: ${ROWS} rows x ${COLUMNS.length} columns, pages of ${Math.min(PAGE_ROWS, Math.floor(5000 / COLUMNS.length))} rows`);
  const f0 = Date.now();
  await fill();
  console.log(`table filled in ${((Date.now() - f0) / 1000).toFixed(1)} s`);
  const a = await readAlone();
  if (a.rows !== ROWS) throw new Error(`read ${a.rows} rows, expected ${ROWS}`);
  console.log(`(a) source alone: ${a.rows} rows in ${a.seconds.toFixed(1)} s = ${Math.round(a.rows / a.seconds)} rows/s`);
  const b = await endToEnd();
  console.log(
    `(b) end to end: ${b.rows} rows, ${b.readings} readings in ${b.seconds.toFixed(1)} s = ${Math.round(b.rows / b.seconds)} rows/s, ${Math.round(b.readings / b.seconds)} readings/s stored`,
  );
  const my = await mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root" });
  await my.query(`DROP DATABASE IF EXISTS ${DB}`);
  await my.end();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
