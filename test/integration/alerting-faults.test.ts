/**
 * Alerting under faults, as separate processes over the machine's NATS (JetStream streams):
 * - two alerting replicas share the readings stream: each alert opens exactly once, even for a
 *   batch that reaches both of them;
 * - the alerting process killed (SIGKILL) in the middle of a duration window and started again:
 *   the alert still opens once, from the window's start (the state was in PostgreSQL);
 * - the SMTP server refuses the first message, then accepts: each email goes out once.
 */
import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { ADMIN, type TestNode } from "../helpers/node";
import { NATS_URL, pollUntil, REDIS_URL, ServiceProcess, startCluster, type Cluster } from "../helpers/cluster";
import { startSmtp, type TestSmtp } from "../helpers/smtp";
import { makePlace, makeUser, watcherBody, type Place, gatewayBody } from "../e2e/alerting-fixtures";
import { createEdge, ingest } from "../e2e/pipelines-fixtures";

let cluster: Cluster;
let smtp: TestSmtp;
let second: ServiceProcess;
let pg: Client;
let place: Place;
let gw: { id: string; ingest_key: string };
const TRIGGERS = 10;

async function alertsPerTrigger(): Promise<Map<string, number>> {
  const rows = (await pg.query(`SELECT trigger_id, count(*)::int AS n FROM alerting.alerts WHERE is_hidden = 0 GROUP BY trigger_id`)).rows as {
    trigger_id: string;
    n: number;
  }[];
  return new Map(rows.map((r) => [r.trigger_id, r.n]));
}

async function send(readings: { tag_id: string; ts: number; value: number }[]) {
  const res = await ingest<{ accepted: number }>({ http: cluster.http } as TestNode, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, {
    readings: readings.map((r) => ({ monitor_id: place.monitor_id, ...r })),
  });
  expect(res.status).toBe(200);
  expect(res.body.accepted).toBe(readings.length);
}

const procs = () => [cluster.process("api"), cluster.process("alerting"), ...(second.running ? [second] : [])];

beforeAll(async () => {
  smtp = await startSmtp({ refuse: (n) => (n === 1 ? 451 : null) });
  cluster = await startCluster({
    processes: [["api", "auth", "config", "pipelines", "notifier"], ["alerting"]],
    env: { SMTP_URL: smtp.url },
  });
  const env = {
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
  };
  second = new ServiceProcess("alerting-2", env);
  second.start();
  pg = new Client({ connectionString: cluster.db!.url });
  await pg.connect();

  place = await makePlace(cluster.http, "f1");
  await makeUser(cluster.http, { username: "oncall-f1@example.com", user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id });
  gw = await createEdge({ http: cluster.http } as TestNode, gatewayBody(place, "Faults gateway"));
  const body = watcherBody(place, gw.id, { watcher_name: "Faults watch" });
  const base = body.triggers[0];
  body.triggers = Array.from({ length: TRIGGERS }, (_, i) => ({
    ...base,
    id: `t${i}`,
    name: `Hot ${i}`,
    minimum_duration: "1s",
    notifyTo: { email: i === 0, sms: i !== 0, whatsapp: false, users: ["oncall-f1@example.com"] },
  }));
  body.triggers.push({ ...base, id: "vib", name: "Vibration window", minimum_duration: "2s", condition: [{ comparison: ">", monitor_id: place.monitor_id, tag_id: "vib", threshold: "7" }], notifyTo: { email: false, sms: true, whatsapp: false, users: ["oncall-f1@example.com"] } });
  // The second replica may be on the bus before its service has started (a loaded machine): the
  // balancer can hand it the create, answered 503 with nothing done. A caller tries again.
  let created = await cluster.http("POST", "/_alerting/watchers", { body });
  for (let i = 0; created.status === 503 && i < 100; i++) {
    await new Promise((r) => setTimeout(r, 200));
    created = await cluster.http("POST", "/_alerting/watchers", { body });
  }
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
  // Both replicas have joined the stream's group once the second one answers on the bus.
  await pollUntil(async () => second.running && (await pg.query(`SELECT 1 FROM alerting.watchers`)).rowCount === 1, 60_000, "the second alerting replica", procs());
  await new Promise((r) => setTimeout(r, 3000));
}, 180_000);

afterAll(async () => {
  await pg?.end();
  await second?.stop();
  await cluster?.stop();
  await smtp?.stop();
}, 60_000);

describe("two alerting replicas over NATS", () => {
  it("opens each alert exactly once over three hot/cold cycles, every batch sent twice at once", async () => {
    const t0 = Date.now() - 600_000;
    for (let cycle = 0; cycle < 3; cycle++) {
      const start = t0 + cycle * 60_000;
      for (const part of [0, 1, 2]) {
        const batch = [{ tag_id: "temp", ts: start + part * 600, value: 90 }];
        await Promise.all([send(batch), send(batch)]);
      }
      await pollUntil(async () => [...(await alertsPerTrigger()).values()].filter((n) => n === cycle + 1).length === TRIGGERS, 30_000, `cycle ${cycle} open`, procs());
      const cold = [{ tag_id: "temp", ts: start + 30_000, value: 20 }];
      await Promise.all([send(cold), send(cold)]);
      await pollUntil(
        async () => (await pg.query(`SELECT 1 FROM alerting.alerts WHERE state = 'active' AND is_hidden = 0`)).rowCount === 0,
        30_000,
        `cycle ${cycle} closed`,
        procs(),
      );
    }
    const counts = await alertsPerTrigger();
    expect([...counts.entries()].sort()).toEqual(Array.from({ length: TRIGGERS }, (_, i) => [`t${i}`, 3]).sort());
  }, 180_000);

  it("delivers each alert's email once although the SMTP server refused the first attempt", async () => {
    const mails = await smtp.waitFor(3, { to: "oncall-f1@example.com", timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 2000));
    expect(mails).toHaveLength(3);
    expect(smtp.dataCommands()).toBe(4);
    const rows = (await pg.query(`SELECT status, attempts FROM notifier.notifications WHERE medium = 'email' AND idempotency_key LIKE 'alert:%' ORDER BY attempts DESC`))
      .rows;
    expect(rows).toEqual([
      { status: "sent", attempts: 2 },
      { status: "sent", attempts: 1 },
      { status: "sent", attempts: 1 },
    ]);
  }, 60_000);
});

describe("an alerting process killed in the middle of a duration window", () => {
  it("opens the alert once, from the window's start, after the restart", async () => {
    await second.stop("SIGTERM");
    const alerting = cluster.process("alerting");
    const t0 = Date.now() - 120_000;
    await send([{ tag_id: "vib", ts: t0, value: 9 }]);
    await pollUntil(
      async () => {
        const r = await pg.query(`SELECT state FROM alerting.triggers WHERE trigger_id = 'vib'`);
        return r.rows[0]?.state?.holdingSince === t0;
      },
      30_000,
      "the window to open",
      [alerting],
    );
    await alerting.stop("SIGKILL");
    await send([{ tag_id: "vib", ts: t0 + 1500, value: 9.5 }]);
    await send([{ tag_id: "vib", ts: t0 + 2500, value: 10 }]);
    alerting.start();
    await pollUntil(async () => (await alertsPerTrigger()).get("vib") === 1, 90_000, "the alert after the restart", [alerting]);
    await new Promise((r) => setTimeout(r, 2000));
    const rows = (await pg.query(`SELECT start_ts, state FROM alerting.alerts WHERE trigger_id = 'vib'`)).rows;
    expect(rows).toEqual([{ start_ts: String(t0), state: "active" }]);
  }, 180_000);
});
