/**
 * The collectors' faults (docs/collectors.md#replicas): the collector process killed (kill -9)
 * in the middle of a table and started again, and two replicas of which the one collecting is
 * killed: the other continues within 10 s. MariaDB tables of 4,000 rows read in pages of 5,
 * three rows to a time so that every page's edge splits rows sharing one: every row is stored
 * exactly once. Then the two replicas share four pipelines, two each.
 */
import { randomBytes } from "node:crypto";
import mysql from "mysql2/promise";
import { Client } from "pg";
import { instantOf } from "../../lib/time-zone";
import { pollUntil, startCluster, type Cluster, type ServiceProcess } from "../helpers/cluster";
import { RAW_READINGS_ONLY } from "../helpers/node";
import { listed, sorted, startSqlPipeline, stored } from "../helpers/collectors";
import type { TestNode } from "../helpers/node";
import { hierarchy, type Hierarchy } from "../e2e/pipelines-fixtures";

const scratch = `ims_collf_${randomBytes(4).toString("hex")}`;
const ROWS = 4000;
const ENV = { SOURCE_ALLOW: "127.0.0.0/8", COLLECTOR_PAGE_ROWS: "5" };

let cluster: Cluster;
let db: Client;
let h: Hierarchy;
let my: mysql.Connection;

/** Two hours ago, whole seconds: three rows a second from there. */
const base = Math.floor(Date.now() / 1000) * 1000 - 7_200_000;
/** The site's (Europe/Paris) wall time of an instant, as a DATETIME holds it. */
const wall = (utc: number) => new Date(2 * utc - instantOf(utc, "Europe/Paris")).toISOString().replace("T", " ").replace("Z", "");

/** A table of ROWS rows, row i at base + floor(i / 3) s with `a` = i; what a pipeline must store of it. */
async function fill(table: string): Promise<string[]> {
  await my.query(`CREATE TABLE ${scratch}.${table} (ts datetime, a double)`);
  const expected: string[] = [];
  for (let from = 0; from < ROWS; from += 1000) {
    const rows = Array.from({ length: 1000 }, (_, k) => [wall(base + Math.floor((from + k) / 3) * 1000), from + k]);
    await my.query(`INSERT INTO ${scratch}.${table} (ts, a) VALUES ?`, [rows]);
  }
  for (let i = 0; i < ROWS; i++) expected.push(`${base + Math.floor(i / 3) * 1000}:${i}`);
  return expected;
}

const count = async (id: string) => (await stored(db, id, "pressure")).length;

/** The pid of the collectors replica holding the pipeline's lease (its lease connection is named after its pid), or null. */
async function holderPid(pipeline_id: string): Promise<number | null> {
  const { rows } = await db.query<{ application_name: string }>(
    `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database()
        AND l.classid = (hashtext('collector')::bigint & 4294967295)::oid AND l.objid = (hashtext($1)::bigint & 4294967295)::oid`,
    [pipeline_id],
  );
  const name = rows[0]?.application_name;
  return name ? Number(name.split(":").pop()) : null;
}

beforeAll(async () => {
  my = await mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root" });
  await my.query(`CREATE DATABASE ${scratch}`);
  cluster = await startCluster({ processes: [["api", "auth", "config", "pipelines"]], env: { ...RAW_READINGS_ONLY, MQTT_PORT: "0" } });
  db = new Client({ connectionString: cluster.db!.url });
  await db.connect();
  h = await hierarchy(cluster as unknown as TestNode, "CollF");
}, 180_000);

afterAll(async () => {
  await db?.end();
  await cluster?.stop();
  await my?.query(`DROP DATABASE IF EXISTS ${scratch}`);
  await my?.end();
});

describe("collectors under faults", () => {
  let first: ServiceProcess;
  let both: ServiceProcess[] = [];

  it("stores every row once when the collector is killed in the middle of the table and started again", async () => {
    const expected = await fill("killed");
    first = cluster.addProcess(["collectors"], ENV);
    const id = await startSqlPipeline(cluster, h, { port: 3306, database: scratch, table: "killed", columns: { a: "Pressure" } });
    await pollUntil(async () => (await count(id)) >= 300, 60_000, "a part of the table collected", [first]);
    await first.stop("SIGKILL");
    const atKill = await count(id);
    expect(atKill).toBeLessThan(ROWS);
    first.start();
    await pollUntil(async () => (await count(id)) >= ROWS, 120_000, "the rest of the table collected", [first]);
    expect(sorted(await stored(db, id, "pressure"))).toEqual(sorted(expected));
    expect((await listed(cluster, h, id)).collected).toBe(ROWS);
  }, 240_000);

  it("continues on the other replica within 10 s when the one collecting is killed, every row once", async () => {
    const expected = await fill("replicas");
    const second = cluster.addProcess(["collectors"], ENV);
    const replicas = [first, second];
    await pollUntil(
      async () => {
        const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name LIKE 'leases:collector:%' AND datname = current_database()`);
        return Number(rows[0]!.n) === 2;
      },
      90_000,
      "two collectors replicas",
      replicas,
    );
    const id = await startSqlPipeline(cluster, h, { port: 3306, database: scratch, table: "replicas", columns: { a: "Pressure" } });
    await pollUntil(async () => (await count(id)) >= 300, 60_000, "a part of the table collected", replicas);
    const holder = await holderPid(id);
    const killed = replicas.find((r) => r.pid === holder)!;
    const other = replicas.find((r) => r !== killed)!;
    expect(killed).toBeDefined();
    await killed.stop("SIGKILL");
    const atKill = await count(id);
    expect(atKill).toBeLessThan(ROWS);
    // The other replica holds it within 10 s, and stores more.
    await pollUntil(async () => (await holderPid(id)) === other.pid && (await count(id)) > atKill, 10_000, "the other replica to continue", [other]);
    await pollUntil(async () => (await count(id)) >= ROWS, 120_000, "the rest of the table collected", [other]);
    expect(sorted(await stored(db, id, "pressure"))).toEqual(sorted(expected));
    killed.start();
    both = replicas;
  }, 240_000);

  it("shares the pipelines between the replicas", async () => {
    // The two tables' pipelines still run; two more make four: two a replica.
    await my.query(`CREATE TABLE ${scratch}.small (ts datetime, a double)`);
    for (let i = 0; i < 2; i++) await startSqlPipeline(cluster, h, { port: 3306, database: scratch, table: "small", columns: { a: "Pressure" } });
    const perReplica = async () => {
      const { rows } = await db.query<{ application_name: string; n: number }>(
        `SELECT a.application_name, count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database() AND l.classid = (hashtext('collector')::bigint & 4294967295)::oid
          GROUP BY a.application_name ORDER BY a.application_name`,
      );
      return rows.map((r) => r.n);
    };
    await pollUntil(async () => JSON.stringify(await perReplica()) === "[2,2]", 30_000, "two pipelines a replica", both);
  }, 90_000);
});
