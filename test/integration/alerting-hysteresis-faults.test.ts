/**
 * deadband and clear_delay under faults, as separate processes over the machine's NATS, like
 * minimum_duration in alerting-faults.test.ts:
 * - two alerting replicas, every batch of a chattering signal sent to both at once: one alert;
 * - the alerting process killed (SIGKILL) in the middle of a clear_delay and started again: the
 *   alert closes once, when the delay is complete (the clearing start was in PostgreSQL), and no
 *   other opens.
 */
import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { ADMIN, type TestNode } from "../helpers/node";
import { NATS_URL, pollUntil, REDIS_URL, ServiceProcess, startCluster, type Cluster } from "../helpers/cluster";
import { makePlace, watcherBody, type Place, gatewayBody } from "../e2e/alerting-fixtures";
import { createEdge, ingest } from "../e2e/pipelines-fixtures";

let cluster: Cluster;
let second: ServiceProcess;
let pg: Client;
let place: Place;
let gw: { id: string; ingest_key: string };

const procs = () => [cluster.process("api"), cluster.process("alerting"), ...(second.running ? [second] : [])];

async function send(readings: { ts: number; value: number }[]) {
  const res = await ingest<{ accepted: number }>({ http: cluster.http } as TestNode, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, {
    readings: readings.map((r) => ({ monitor_id: place.monitor_id, tag_id: "temp", ...r })),
  });
  expect(res.status).toBe(200);
}

const alerts = async () => (await pg.query(`SELECT start_ts, end_ts, state FROM alerting.alerts WHERE is_hidden = 0 ORDER BY start_ts`)).rows;

beforeAll(async () => {
  cluster = await startCluster({ processes: [["api", "auth", "config", "pipelines", "notifier"], ["alerting"]] });
  second = new ServiceProcess("alerting-2", {
    TRANSPORTER: NATS_URL,
    REDIS_URL,
    NAMESPACE: cluster.namespace,
    DATABASE_URL: cluster.db!.url,
    DATA_DIR: `/tmp/ims-alerting-${randomBytes(4).toString("hex")}`,
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
    NODE_ENV: "test",
    SERVICES: "alerting",
    NODE_ID: `${cluster.namespace}-alerting-2`,
  });
  second.start();
  pg = new Client({ connectionString: cluster.db!.url });
  await pg.connect();

  place = await makePlace(cluster.http, "h1");
  gw = await createEdge({ http: cluster.http } as TestNode, gatewayBody(place, "Hysteresis gateway"));
  const body = watcherBody(place, gw.id, { watcher_name: "Hysteresis watch" }, { id: "hys", minimum_duration: "0s", deadband: "5", clear_delay: "5s" });
  let created = await cluster.http("POST", "/_alerting/watchers", { body });
  for (let i = 0; created.status === 503 && i < 100; i++) {
    await new Promise((r) => setTimeout(r, 200));
    created = await cluster.http("POST", "/_alerting/watchers", { body });
  }
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
  await pollUntil(async () => second.running && (await pg.query(`SELECT 1 FROM alerting.watchers`)).rowCount === 1, 60_000, "the second alerting replica", procs());
  await new Promise((r) => setTimeout(r, 3000));
}, 180_000);

afterAll(async () => {
  await pg?.end();
  await second?.stop();
  await cluster?.stop();
}, 60_000);

const t0 = Date.now() - 600_000;

describe("two alerting replicas over NATS", () => {
  it("open one alert for a chattering signal with a deadband, every batch sent twice at once", async () => {
    for (let part = 0; part < 6; part++) {
      const batch = Array.from({ length: 10 }, (_, j) => {
        const i = part * 10 + j;
        return { ts: t0 + i * 1000, value: Math.round((79 + 3 * Math.sin((2 * Math.PI * i) / 10)) * 1000) / 1000 };
      });
      await Promise.all([send(batch), send(batch)]);
    }
    await pollUntil(
      // The series' clock (a state is written only when what it keeps changes).
      async () => Number((await pg.query(`SELECT ts FROM alerting.series_clock WHERE monitor_id = $1 AND tag_id = 'temp'`, [place.monitor_id])).rows[0]?.ts) === t0 + 59_000,
      30_000,
      "the signal evaluated",
      procs(),
    );
    expect(await alerts()).toEqual([{ start_ts: String(t0 + 1000), end_ts: null, state: "active" }]);
  }, 120_000);
});

describe("an alerting process killed in the middle of a clear_delay", () => {
  it("closes the alert once, when the delay is complete, after the restart", async () => {
    await second.stop("SIGTERM");
    const alerting = cluster.process("alerting");
    const low = t0 + 60_000;
    await send([{ ts: low, value: 60 }]);
    await pollUntil(
      async () => (await pg.query(`SELECT state FROM alerting.triggers WHERE trigger_id = 'hys'`)).rows[0]?.state?.clearingSince === low,
      30_000,
      "the clear_delay to start",
      [alerting],
    );
    await alerting.stop("SIGKILL");
    await send([{ ts: low + 3000, value: 60 }]);
    await send([{ ts: low + 5000, value: 61 }]);
    await send([{ ts: low + 6000, value: 62 }]);
    alerting.start();
    await pollUntil(async () => (await alerts()).every((a: { state: string }) => a.state === "closed"), 90_000, "the alert closed after the restart", [alerting]);
    await new Promise((r) => setTimeout(r, 2000));
    expect(await alerts()).toEqual([{ start_ts: String(t0 + 1000), end_ts: String(low + 5000), state: "closed" }]);
  }, 180_000);
});
