/**
 * A pipeline's readings batches evaluated in order across two alerting replicas (separate
 * processes over NATS, JetStream partitions): batches alternate an excursion and a recovery,
 * minimum_duration 0s, so an excursion lives in one batch only. Were batch N+1 (the recovery)
 * evaluated before batch N on the other replica, N's reading would be older than the series'
 * clock and ignored, and that excursion's alert never opened. Every excursion must open one.
 */
import { Client } from "pg";
import type { TestNode } from "../helpers/node";
import { pollUntil, startCluster, type Cluster } from "../helpers/cluster";
import { makePlace, makeUser, watcherBody, type Place, gatewayBody } from "../e2e/alerting-fixtures";
import { createEdge, ingest } from "../e2e/pipelines-fixtures";

const EXCURSIONS = 30;

let cluster: Cluster;
let pg: Client;
let place: Place;
let gw: { id: string; ingest_key: string };

beforeAll(async () => {
  cluster = await startCluster({ processes: [["api", "auth", "config", "pipelines"], ["alerting"], ["alerting"]] });
  pg = new Client({ connectionString: cluster.db!.url });
  await pg.connect();
  place = await makePlace(cluster.http, "f1");
  await makeUser(cluster.http, { username: "oncall-order@example.com", user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id });
  gw = await createEdge({ http: cluster.http } as TestNode, gatewayBody(place, "Order gateway"));
  const body = watcherBody(
    place,
    gw.id,
    { watcher_name: "Order watch" },
    { minimum_duration: "0s", notifyTo: { email: false, sms: true, whatsapp: false, users: ["oncall-order@example.com"] } },
  );
  // The cluster answers once config does; the alerting processes may still be starting.
  let created = { status: 0, body: undefined as unknown };
  await pollUntil(
    async () => (created = await cluster.http("POST", "/_alerting/watchers", { body })).status !== 503,
    60_000,
    "alerting to answer",
    [cluster.process("alerting")],
  );
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
  // Both replicas have joined the group's partitions.
  await new Promise((r) => setTimeout(r, 3000));
}, 180_000);

afterAll(async () => {
  await pg?.end();
  await cluster?.stop();
}, 60_000);

it("opens one alert per excursion when one pipeline's batches alternate excursion and recovery", async () => {
  const t0 = Date.now() - 600_000;
  for (let i = 0; i < EXCURSIONS; i++) {
    for (const [dt, value] of [
      [0, 95],
      [1000, 20],
    ]) {
      const res = await ingest<{ accepted: number }>({ http: cluster.http } as TestNode, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, {
        readings: [{ monitor_id: place.monitor_id, tag_id: "temp", ts: t0 + i * 10_000 + dt, value }],
      });
      expect(res.status).toBe(200);
    }
  }
  const procs = [cluster.process("api"), cluster.process("alerting")];
  const count = async () => (await pg.query(`SELECT count(*)::int AS n FROM alerting.alerts WHERE is_hidden = 0`)).rows[0].n as number;
  // Every batch evaluated: the series clock reached the last reading.
  await pollUntil(
    async () => (await pg.query(`SELECT 1 FROM alerting.alerts WHERE is_hidden = 0 AND state = 'active'`)).rowCount === 0 && (await count()) >= EXCURSIONS,
    60_000,
    `${EXCURSIONS} alerts, all closed`,
    procs,
  ).catch(async (err) => {
    throw new Error(`${await count()} alerts of ${EXCURSIONS}: ${String(err).slice(0, 500)}`);
  });
  await new Promise((r) => setTimeout(r, 1000));
  expect(await count()).toBe(EXCURSIONS);
}, 180_000);
