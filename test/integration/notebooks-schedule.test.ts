/**
 * Schedules with two `notebooks` replicas: two Node processes over the machine's NATS (a
 * namespace of their own), one PostgreSQL database and one NOTEBOOKS_DIR. A slot due in the
 * next minute runs exactly once; a slot missed while both replicas were down runs once when
 * they are back, and the slot that already ran is not run again.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { freePort, NATS_URL, pollUntil, REDIS_URL, ServiceProcess } from "../helpers/cluster";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { ADMIN, httpClient, type HttpClient } from "../helpers/node";

interface Notebook {
  notebook_id: string;
  no_of_runs: number;
  status: string;
  attributes: { last_run_status: string | null };
}

let db: TestDatabase;
let dataDir: string;
let http: HttpClient;
let replicaA: ServiceProcess;
let replicaB: ServiceProcess;

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "ims-notebooks-"));
  const port = await freePort();
  const namespace = `test-nb-${randomBytes(4).toString("hex")}`;
  const common = {
    TRANSPORTER: NATS_URL,
    REDIS_URL,
    NAMESPACE: namespace,
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    // info: each replica's "Service 'notebooks' started." line tells the test it is ticking.
    LOG_LEVEL: "info",
    NODE_ENV: "test",
    NOTEBOOK_RUN_TIMEOUT_S: "120",
  };
  replicaA = new ServiceProcess("api+auth+notebooks", {
    ...common,
    SERVICES: "api,auth,notebooks",
    NODE_ID: `${namespace}-a`,
    PORT: String(port),
  });
  replicaB = new ServiceProcess("notebooks", { ...common, SERVICES: "notebooks", NODE_ID: `${namespace}-b` });
  http = httpClient(`http://127.0.0.1:${port}`);
  await startBoth();
}, 180_000);

afterAll(async () => {
  await Promise.all([replicaA?.stop(), replicaB?.stop()]);
  await db?.drop().catch(() => undefined);
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

const STARTED = "Service 'notebooks' started.";
const startedCount = (p: ServiceProcess) => p.output().split(STARTED).length - 1;

/** Starts both replicas and waits until the notebooks service of each one has started. */
async function startBoth(): Promise<void> {
  const before = [startedCount(replicaA), startedCount(replicaB)];
  replicaA.start();
  replicaB.start();
  await pollUntil(
    async () => startedCount(replicaA) > before[0]! && startedCount(replicaB) > before[1]!,
    120_000,
    "both notebooks replicas to start",
    [replicaA, replicaB],
  );
  await pollUntil(async () => (await http("GET", "/_notebooks/notebooks/_count")).status === 200, 60_000, "the gateway to answer", [
    replicaA,
    replicaB,
  ]);
}

async function query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: db.url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}

const pad = (n: number) => String(n).padStart(2, "0");
const hhmm = (ms: number) => `${pad(new Date(ms).getUTCHours())}:${pad(new Date(ms).getUTCMinutes())}`;
const minuteStart = (ms: number) => Math.floor(ms / 60_000) * 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A notebook whose one cell appends a line to a file of its own: each real execution leaves one line. */
async function notebookThatCounts(tag: string): Promise<string> {
  const created = await http<{ notebook_id: string }>("POST", "/_notebooks/notebooks");
  expect(created.status).toBe(200);
  const id = created.body.notebook_id;
  const put = await http("PUT", `/_notebooks/notebooks/${id}/_content`, {
    body: { cells: [{ cell_type: "code", source: `with open('${tag}.log', 'a') as f:\n    f.write('ran\\n')` }] },
  });
  expect(put.status).toBe(200);
  return id;
}

async function schedule(id: string, slot: number): Promise<void> {
  const until = new Date(slot + 24 * 3600_000).toISOString().slice(0, 16).replace("T", " ");
  const res = await http("POST", "/_notebooks/notebooks/_schedule", { body: { nbk_ids: [id], until, time: hhmm(slot) } });
  expect(res).toMatchObject({ status: 200, body: "Success" });
}

async function notebook(id: string): Promise<Notebook> {
  const res = await http<Notebook>("GET", `/_notebooks/notebooks/${id}`);
  expect(res.status).toBe(200);
  return res.body;
}

const executions = (tag: string): number => {
  const file = path.join(dataDir, "notebooks", ADMIN.username, `${tag}.log`);
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;
};

describe("schedules with two notebooks replicas", () => {
  it("runs a slot once, and a slot missed while both were down once when they are back", async () => {
    // Slot 1 at least 20 s away, so the schedule is set before it; slot 2 one minute later.
    const now = Date.now();
    const slot1 = minuteStart(now) + (now % 60_000 > 40_000 ? 120_000 : 60_000);
    const slot2 = slot1 + 60_000;
    const first = await notebookThatCounts("first");
    const second = await notebookThatCounts("second");
    await schedule(first, slot1);
    await schedule(second, slot2);
    expect((await notebook(first)).status).toBe("Scheduled");

    // Both replicas tick every 5 s; the slot's run is claimed by one of them only.
    await pollUntil(async () => (await notebook(first)).no_of_runs === 1, slot1 - Date.now() + 90_000, "the first slot's run", [
      replicaA,
      replicaB,
    ]);
    expect((await notebook(first)).attributes.last_run_status).toBe("succeeded");
    expect(executions("first")).toBe(1);

    // Both replicas go down before slot 2 and come back after it.
    await Promise.all([replicaA.stop(), replicaB.stop()]);
    expect(Date.now()).toBeLessThan(slot2);
    await sleep(slot2 - Date.now() + 3000);
    await startBoth();

    await pollUntil(async () => (await notebook(second)).no_of_runs === 1, 90_000, "the missed slot's run", [replicaA, replicaB]);
    // Several more ticks of both replicas: nothing runs again.
    await sleep(15_000);
    expect((await notebook(first)).no_of_runs).toBe(1);
    expect((await notebook(second)).no_of_runs).toBe(1);
    expect(executions("first")).toBe(1);
    expect(executions("second")).toBe(1);

    const runs = await query<{ notebook_id: string; slot_time: string; node_id: string }>(
      `SELECT notebook_id, slot_time, node_id FROM notebooks.runs ORDER BY slot_time`,
    );
    expect(runs.map((r) => [r.notebook_id, Number(r.slot_time)])).toEqual([
      [first, slot1],
      [second, slot2],
    ]);
  }, 300_000);

  it("makes a notebook Not Scheduled once until has passed", async () => {
    const id = await notebookThatCounts("expiring");
    // until is the next minute: no slot runs (the time, 00:00 by default, is not within it).
    const until = minuteStart(Date.now()) + 60_000;
    const res = await http("POST", "/_notebooks/notebooks/_schedule", {
      body: { nbk_ids: [id], until: new Date(until).toISOString().slice(0, 16).replace("T", " "), time: hhmm(until + 3600_000) },
    });
    expect(res.status).toBe(200);
    expect((await notebook(id)).status).toBe("Scheduled");
    await pollUntil(async () => (await notebook(id)).status === "Not Scheduled", until - Date.now() + 30_000, "the schedule to end");
    // Cleared in the table by a replica's tick, not only shown so.
    await pollUntil(
      async () => (await query<{ until_at: string | null }>(`SELECT until_at FROM notebooks.notebooks WHERE notebook_id = $1`, [id]))[0]?.until_at === null,
      20_000,
      "a replica to clear the schedule",
    );
  }, 120_000);
});
