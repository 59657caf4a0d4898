/**
 * The hand-off from alerting to the notifier is the durable `alerts` stream (JetStream here, over
 * the machine's NATS): an alert opened while no notifier runs waits in the stream, and the
 * notifier, once it starts, tells the trigger's user once. Nothing is killed: the notifier has
 * not started yet, then it is stopped the ordinary way (SIGTERM) and started again.
 */
import { Client } from "pg";
import type { TestNode } from "../helpers/node";
import { pollUntil, startCluster, type Cluster, type ServiceProcess } from "../helpers/cluster";
import { startSmtp, type TestSmtp } from "../helpers/smtp";
import { makePlace, makeUser, watcherBody, type Place, gatewayBody } from "../e2e/alerting-fixtures";
import { createEdge, ingest } from "../e2e/pipelines-fixtures";

const USER = "oncall-catchup@example.com";
let cluster: Cluster;
let smtp: TestSmtp;
let pg: Client;
let place: Place;
let gw: { id: string; ingest_key: string };
let notifier: ServiceProcess | undefined;
const t0 = Date.now() - 600_000;

async function send(ts: number, value: number) {
  const res = await ingest<{ accepted: number }>({ http: cluster.http } as TestNode, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, {
    readings: [{ monitor_id: place.monitor_id, tag_id: "temp", ts, value }],
  });
  expect(res.status).toBe(200);
}

const alertIds = async (): Promise<string[]> =>
  (await pg.query(`SELECT alert_id FROM alerting.alerts WHERE is_hidden = 0 ORDER BY start_ts`)).rows.map((r: { alert_id: string }) => r.alert_id);

/** Notifications recorded per alert: the idempotency key is alert:<id>:<user>:<medium>. */
async function notificationsPerAlert(): Promise<Record<string, number>> {
  const rows = (await pg.query(`SELECT split_part(idempotency_key, ':', 2) AS alert_id, count(*)::int AS n FROM notifier.notifications GROUP BY 1`))
    .rows as { alert_id: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.alert_id, r.n]));
}

/** The alert is open and its notice has left alerting's outbox for the stream. */
async function openedAndPublished(count: number): Promise<void> {
  await pollUntil(
    async () =>
      (await alertIds()).length === count && (await pg.query(`SELECT 1 FROM alerting.stream_outbox`)).rowCount === 0,
    30_000,
    `alert ${count} opened and published`,
    [cluster.process("alerting")],
  );
}

beforeAll(async () => {
  smtp = await startSmtp();
  // No notifier yet: alerting publishes to a stream no consumer has read.
  cluster = await startCluster({ processes: [["api", "auth", "config", "pipelines", "alerting"]], env: { SMTP_URL: smtp.url } });
  pg = new Client({ connectionString: cluster.db!.url });
  await pg.connect();
  place = await makePlace(cluster.http, "c1");
  await makeUser(cluster.http, { username: USER, user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id });
  gw = await createEdge({ http: cluster.http } as TestNode, gatewayBody(place, "Catch-up gateway"));
  const body = watcherBody(place, gw.id, { watcher_name: "Catch-up watch" }, {
    minimum_duration: "0s",
    notifyTo: { email: true, sms: false, whatsapp: false, users: [USER] },
  });
  const created = await cluster.http("POST", "/_alerting/watchers", { body });
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
}, 180_000);

afterAll(async () => {
  await pg?.end();
  await cluster?.stop();
  await smtp?.stop();
}, 60_000);

describe("an alert opened while the notifier is not running", () => {
  it("is notified once when the notifier starts for the first time", async () => {
    await send(t0, 95);
    await openedAndPublished(1);
    await new Promise((r) => setTimeout(r, 1000));
    expect(smtp.received).toHaveLength(0);

    notifier = cluster.addProcess(["notifier"]);
    const mails = await smtp.waitFor(1, { to: USER, timeoutMs: 90_000 });
    const [first] = await alertIds();
    expect(mails[0].raw).toContain(`Alert ID: ${first}`);
    await new Promise((r) => setTimeout(r, 2000));
    expect(smtp.received).toHaveLength(1);
    expect(await notificationsPerAlert()).toEqual({ [first]: 1 });
  }, 180_000);

  it("is notified once when a stopped notifier starts again", async () => {
    await notifier!.stop("SIGTERM");
    expect(notifier!.running).toBe(false);
    // The first alert closes and the trigger opens a second one, with no notifier on the bus.
    await send(t0 + 60_000, 20);
    await send(t0 + 120_000, 96);
    await openedAndPublished(2);
    await new Promise((r) => setTimeout(r, 1000));
    expect(smtp.received).toHaveLength(1);

    notifier!.start();
    const mails = await smtp.waitFor(2, { to: USER, timeoutMs: 90_000 });
    const [first, second] = await alertIds();
    expect(mails[1].raw).toContain(`Alert ID: ${second}`);
    await new Promise((r) => setTimeout(r, 2000));
    expect(smtp.received).toHaveLength(2);
    expect(await notificationsPerAlert()).toEqual({ [first]: 1, [second]: 1 });
  }, 180_000);
});
