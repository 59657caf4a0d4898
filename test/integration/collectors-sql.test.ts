/**
 * The SQL collector (docs/collectors.md) against real sources: a PostgreSQL of the test's own
 * (test/helpers/pg-server.ts: the service's own database is never a source) and the machine's
 * MariaDB, tables filled by the test. Pages of 4 rows, so that rows sharing a time straddle a
 * page's edge; a conditions filter and an ignored column; rows inserted while collecting (one at
 * the very time already collected); a time column without a zone read in the site's; a wrong
 * password said in the pipeline's last action; a stop that stops the collection; `last_collected`
 * set back by an update, which collects again; the service's own database refused (a
 * Third-Party-Apps pipeline); SQL Server, which no server here answers, as far as its refusal.
 */
import { randomBytes } from "node:crypto";
import mysql from "mysql2/promise";
import { Client } from "pg";
import { instantOf } from "../../lib/time-zone";
import { pollUntil, startCluster, type Cluster, type ServiceProcess } from "../helpers/cluster";
import { RAW_READINGS_ONLY } from "../helpers/node";
import { action, listed, sorted, startSqlPipeline, stored } from "../helpers/collectors";
import type { TestNode } from "../helpers/node";
import { PgServer } from "../helpers/pg-server";
import { hierarchy, type Hierarchy } from "../e2e/pipelines-fixtures";

const scratch = `ims_coll_${randomBytes(4).toString("hex")}`;
const user = `ims_coll_${randomBytes(3).toString("hex")}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cluster: Cluster;
let db: Client;
let h: Hierarchy;
let collector: ServiceProcess;
let source: PgServer;
let pg: Client;
let my: mysql.Connection;

/** Whole seconds an hour ago: inside the site's retention, never in the future. */
const base = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  source = await PgServer.create(scratch);
  pg = new Client({ connectionString: source.url });
  await pg.connect();
  my = await mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root" });
  await my.query(`CREATE DATABASE ${scratch}`);
  await my.query(`CREATE USER IF NOT EXISTS '${user}'@'%' IDENTIFIED BY 'right-one'`);
  await my.query(`CREATE USER IF NOT EXISTS '${user}'@'localhost' IDENTIFIED BY 'right-one'`);
  cluster = await startCluster({ processes: [["api", "auth", "config", "pipelines"]], env: { ...RAW_READINGS_ONLY, MQTT_PORT: "0" } });
  db = new Client({ connectionString: cluster.db!.url });
  await db.connect();
  collector = cluster.addProcess(["collectors"], { SOURCE_ALLOW: "127.0.0.0/8", COLLECTOR_PAGE_ROWS: "4" });
  h = await hierarchy(cluster as unknown as TestNode, "Coll");
}, 180_000);

afterAll(async () => {
  await db?.end();
  await cluster?.stop();
  await pg?.end();
  await source?.destroy();
  await my?.query(`DROP DATABASE IF EXISTS ${scratch}`);
  await my?.query(`DROP USER IF EXISTS '${user}'@'%'`);
  await my?.query(`DROP USER IF EXISTS '${user}'@'localhost'`);
  await my?.end();
});

describe("the SQL collector", () => {
  it("collects a PostgreSQL table page by page, filtered, without ignored columns, each row once, also rows inserted while collecting", async () => {
    await pg.query(`CREATE TABLE line_a (ts timestamptz, temp double precision, flow double precision, status text)`);
    const rows: [number, number, string][] = [];
    for (let i = 0; i < 10; i++) rows.push([base + i * 1000, i, "ok"]);
    // Six rows at one time across the pages of four, two of them alike in every column.
    for (const v of [20, 21, 22, 23, 24, 24]) rows.push([base + 20_000, v, "ok"]);
    // Left out by the condition.
    for (const v of [900, 901, 902]) rows.push([base + 5500 + v, v, "bad"]);
    for (const [ts, v, status] of rows) await pg.query(`INSERT INTO line_a VALUES ($1, $2, $3, $4)`, [iso(ts), v, v + 0.5, status]);
    const expected = rows.filter((r) => r[2] === "ok").map(([ts, v]) => `${ts}:${v}`);

    const id = await startSqlPipeline(cluster, h, {
      port: source.port,
      username: "postgres",
      database: scratch,
      table: "line_a",
      columns: { temp: "Pressure", flow: "Flow" },
      ignore_columns: ["flow"],
      conditions: [{ column_name: "status", comparison: "=", threshold: "ok" }],
    });
    await pollUntil(async () => (await stored(db, id, "pressure")).length >= expected.length, 30_000, "the table collected", [collector]);
    expect(sorted(await stored(db, id, "pressure"))).toEqual(sorted(expected));

    // Running from its first page stored: the status is written a moment after the page's readings.
    await pollUntil(async () => (await listed(cluster, h, id)).status === "running", 30_000, "the pipeline running", [collector]);
    const running = await listed(cluster, h, id);
    expect(running).toMatchObject({ status: "running", collected: expected.length, rejected: 0 });
    expect(running.heart_beats.gateway).toEqual(expect.any(Number));
    expect(running.last_actions[0]).toMatchObject({ action: "start", status: "completed" });
    expect(running.last_actions[0]!.error).toBeUndefined();
    // last_collected follows what was stored, as the source writes it.
    const fetched = await cluster.http<{ settings: { config: { last_collected: string } } }>("GET", `/_config/pipelines/edge-server/${id}`);
    expect(new Date(fetched.body.settings.config.last_collected.replace(/\+00$/, "Z")).getTime()).toBe(base + 20_000);

    // While it collects: a row at the very time already collected, then newer ones as they come.
    const later: [number, number][] = [[base + 20_000, 26]];
    for (let i = 0; i < 12; i++) later.push([base + 30_000 + i * 1000, 30 + i]);
    for (const [ts, v] of later) {
      await pg.query(`INSERT INTO line_a VALUES ($1, $2, $3, 'ok')`, [iso(ts), v, v]);
      await sleep(150);
    }
    const all = [...expected, ...later.map(([ts, v]) => `${ts}:${v}`)];
    await pollUntil(async () => (await stored(db, id, "pressure")).length >= all.length, 30_000, "the rows inserted while collecting", [collector]);
    expect(sorted(await stored(db, id, "pressure"))).toEqual(sorted(all));
    // The ignored column was never read.
    expect(await stored(db, id, "flow")).toEqual([]);

    // Stopped: the stop completes, and what comes next is not collected.
    await action(cluster, id, "stop");
    await pollUntil(async () => (await listed(cluster, h, id)).status === "stopped", 20_000, "the stop", [collector]);
    await pg.query(`INSERT INTO line_a VALUES ($1, 99, 99, 'ok')`, [iso(base + 60_000)]);
    await sleep(3000);
    expect(await stored(db, id, "pressure")).toHaveLength(all.length);
  }, 120_000);

  it("reads a MariaDB DATETIME, which has no zone, as the site's wall time", async () => {
    await my.query(`CREATE TABLE ${scratch}.line_b (ts datetime(3), temp double)`);
    const wall = (ms: number) => new Date(ms).toISOString().replace("T", " ").replace("Z", "");
    const values: string[] = [];
    for (let i = 0; i < 7; i++) {
      // The wall time in Paris (the site's zone) that is base + i s.
      const utc = base + i * 1000;
      const local = utc + (utc - instantOf(utc, "Europe/Paris"));
      await my.query(`INSERT INTO ${scratch}.line_b VALUES (?, ?)`, [wall(local), i * 1.5]);
      values.push(`${utc}:${i * 1.5}`);
    }
    const id = await startSqlPipeline(cluster, h, { port: 3306, database: scratch, table: "line_b", columns: { temp: "Pressure" } });
    await pollUntil(async () => (await stored(db, id, "pressure")).length >= values.length, 30_000, "the MariaDB table collected", [collector]);
    expect(sorted(await stored(db, id, "pressure"))).toEqual(sorted(values));
    await pollUntil(async () => (await listed(cluster, h, id)).status === "running", 30_000, "the pipeline running", [collector]);

    // Stopped, `last_collected` set back to `none` by an update, started again: collected again from the oldest row.
    await action(cluster, id, "stop");
    await pollUntil(async () => (await listed(cluster, h, id)).status === "stopped", 20_000, "the stop", [collector]);
    const gw = (await cluster.http<Record<string, unknown> & { settings: { config: Record<string, unknown> } }>("GET", `/_config/pipelines/edge-server/${id}`)).body;
    const put = await cluster.http("PUT", `/_config/pipelines/edge-server/${id}`, {
      body: { pipeline_name: gw.pipeline_name, settings: { ...gw.settings, password: "", config: { ...gw.settings.config, last_collected: "none" } }, tags: gw.tags },
    });
    expect(put.status).toBe(200);
    await action(cluster, id, "start");
    await pollUntil(async () => (await stored(db, id, "pressure")).length >= 2 * values.length, 30_000, "the table collected again", [collector]);
    expect(sorted(await stored(db, id, "pressure"))).toEqual(sorted([...values, ...values]));
  }, 90_000);

  it("says a wrong password in the pipeline's last action, in error", async () => {
    await my.query(`CREATE TABLE ${scratch}.line_c (ts datetime, temp double)`);
    const id = await startSqlPipeline(cluster, h, { port: 3306, username: user, password: "wrong-one", database: scratch, table: "line_c", columns: { temp: "Pressure" } });
    await pollUntil(async () => (await listed(cluster, h, id)).status === "error", 30_000, "the pipeline in error", [collector]);
    const p = await listed(cluster, h, id);
    expect(p.last_actions[0]).toMatchObject({ action: "start", error: "Failed to connect to DB" });
    // Nothing collected yet, and said so: a collected pipeline always has its counts.
    expect(p).toMatchObject({ collected: 0, rejected: 0 });
    expect(await stored(db, id, "pressure")).toEqual([]);
  }, 60_000);

  it("never reads the service's own database, whatever SOURCE_ALLOW says, and says so as a connection failure", async () => {
    const own = new URL(cluster.db!.url);
    const id = await startSqlPipeline(cluster, h, {
      port: Number(own.port || 5432),
      username: decodeURIComponent(own.username),
      database: own.pathname.slice(1),
      table: "pipelines.pipelines",
      time_field: "created_at",
      columns: { status: "Pressure" },
      data_source: "Third-Party-Apps",
    });
    await pollUntil(async () => (await listed(cluster, h, id)).status === "error", 30_000, "the pipeline in error", [collector]);
    expect((await listed(cluster, h, id)).last_actions[0]).toMatchObject({ action: "start", error: "Failed to connect to DB" });
    expect(collector.output()).toContain(`Pipeline ${id}: source postgres 127.0.0.1:${own.port || 5432} refused`);
  }, 60_000);

  it("takes SQL Server by its port, through the same collector: a server that is not there is a connection failure", async () => {
    // No SQL Server runs here: nothing listens on 1433, and the mssql driver's refusal is what it can show.
    const id = await startSqlPipeline(cluster, h, { port: 1433, username: "sa", password: "x", database: "plant", table: "line", columns: { temp: "Pressure" } });
    await pollUntil(async () => (await listed(cluster, h, id)).status === "error", 30_000, "the pipeline in error", [collector]);
    expect((await listed(cluster, h, id)).last_actions[0]).toMatchObject({ action: "start", error: "Failed to connect to DB" });
    expect(collector.output()).toContain(`Pipeline ${id}: source mssql 127.0.0.1:1433 failed`);
  }, 60_000);
});
