/**
 * Follow-ups (renotify_every, escalation tiers) under faults, as separate processes over the
 * machine's NATS, with the real SMTP receiver and the Twilio stand-in:
 * - two alerting replicas; the one that has claimed an escalation tier is killed (SIGKILL) with
 *   the claim's transaction still open, and started again: each tier and each re-notification
 *   reaches each of its people exactly once, and the history has each `escalated` once;
 * - an alert acknowledged before its second tier: that tier never sends.
 *
 * Which replica claimed the tier is made visible, not guessed: the test holds the alert's row
 * (FOR UPDATE), so the claiming transaction waits on it at its history entry (the entry's foreign
 * key), with the claim held; PostgreSQL's `application_name` (PGAPPNAME) says whose it is.
 */
import { Client } from "pg";
import { ADMIN, type TestNode } from "../helpers/node";
import { NATS_URL, pollUntil, REDIS_URL, ServiceProcess, startCluster, type Cluster } from "../helpers/cluster";
import { startSmtp, type ReceivedMail, type TestSmtp } from "../helpers/smtp";
import { makePlace, makeUser, watcherBody, type Place, gatewayBody } from "../e2e/alerting-fixtures";
import { startTwilio, type TwilioStandIn } from "../e2e/alerting-twilio";
import { createEdge, ingest } from "../e2e/pipelines-fixtures";

let cluster: Cluster;
let smtp: TestSmtp;
let twilio: TwilioStandIn;
let replicas: ServiceProcess[];
let pg: Client;
let place: Place;
let gw: { id: string; ingest_key: string };

const OP = "op-esc@example.com";
const LEAD = "lead-esc@example.com";
const MANAGER = "manager-esc@example.com";
/** Tier 1 after 4 s, tier 2 after 9 s, a re-notification every 6 s: no two follow-ups due within a second of each other. */
const TIER1_MS = 4000;
const FOLLOWUPS = {
  escalation: [
    { after: "4s", users: [LEAD], email: true },
    { after: "9s", users: [MANAGER], email: true, sms: true },
  ],
};

const running = () => [cluster.process("api"), ...replicas.filter((r) => r.running)];

/** An alerting replica with a PostgreSQL application_name of its own, to tell its sessions apart. */
function replica(name: string): ServiceProcess {
  return new ServiceProcess(name, {
    TRANSPORTER: NATS_URL,
    REDIS_URL,
    NAMESPACE: cluster.namespace,
    DATABASE_URL: cluster.db!.url,
    DATA_DIR: cluster.dataDir,
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
    NODE_ENV: "test",
    SERVICES: "alerting",
    // A stable node id: the restarted replica takes its own place on the bus at once.
    NODE_ID: `${cluster.namespace}-${name}`,
    PGAPPNAME: `ims-${name}`,
  });
}

/** The replicas whose sessions are connected to the test's database. */
async function connected(): Promise<string[]> {
  const found = await pg.query(`SELECT DISTINCT application_name FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'ims-alerting-%'`);
  return found.rows.map((r: { application_name: string }) => r.application_name.replace(/^ims-/, "")).sort();
}

/** A call to alerting through the gateway; a replica that is on the bus but not yet started answers 503, so it is tried again. */
async function alertingCall<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  let res = await cluster.http<T>(method, path, { body });
  for (let i = 0; res.status === 503 && i < 100; i++) {
    await new Promise((r) => setTimeout(r, 200));
    res = await cluster.http<T>(method, path, { body });
  }
  return res;
}

async function send(tag_id: string, ts: number, value: number) {
  const res = await ingest<{ accepted: number }>({ http: cluster.http } as TestNode, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, {
    readings: [{ monitor_id: place.monitor_id, tag_id, ts, value }],
  });
  expect(res.status).toBe(200);
}

async function openedAlert(trigger_id: string): Promise<{ alert_id: string; start: number }> {
  let found: { alert_id: string; start_ts: string } | undefined;
  await pollUntil(
    async () => {
      found = (await pg.query(`SELECT alert_id, start_ts FROM alerting.alerts WHERE trigger_id = $1 AND is_hidden = 0`, [trigger_id])).rows[0];
      return !!found;
    },
    30_000,
    `the ${trigger_id} alert to open`,
    running(),
  );
  return { alert_id: found!.alert_id, start: Number(found!.start_ts) };
}

async function history(alert_id: string): Promise<{ action: string; detail: string | null }[]> {
  return (await pg.query(`SELECT action, detail FROM alerting.alert_history WHERE alert_id = $1 ORDER BY at, seq`, [alert_id])).rows;
}

const details = async (alert_id: string, action: string) => (await history(alert_id)).filter((h) => h.action === action).map((h) => h.detail);

async function followups(alert_id: string): Promise<{ kind: string; tier: number; done: boolean; sent: number }[]> {
  return (await pg.query(`SELECT kind, tier, done, sent FROM alerting.alert_followups WHERE alert_id = $1 ORDER BY kind, tier`, [alert_id])).rows;
}

/** An alert's notifications as the notifier recorded them: key (without the alert's prefix) → status. */
async function notifications(alert_id: string): Promise<Record<string, string>> {
  const found = await pg.query(`SELECT idempotency_key, status FROM notifier.notifications WHERE idempotency_key LIKE $1`, [`alert:${alert_id}:%`]);
  return Object.fromEntries(found.rows.map((r: { idempotency_key: string; status: string }) => [r.idempotency_key.slice(`alert:${alert_id}:`.length), r.status]));
}

const subjectOf = (m: ReceivedMail) => /^Subject: (.*)$/m.exec(m.text)?.[1] ?? "";
/** What reached each recipient about an alert: the kind of each mail (its subject's prefix) and each text message. */
function received(alert_id: string) {
  const kind = (s: string) => /^(Reminder|Escalation|Shelf ended): /.exec(s)?.[1] ?? "Opened";
  const mails: Record<string, string[]> = {};
  for (const m of smtp.received.filter((x) => x.text.includes(`Alert ID: ${alert_id}`))) {
    for (const to of m.to) (mails[to] ??= []).push(kind(subjectOf(m)));
  }
  for (const list of Object.values(mails)) list.sort();
  const sms = twilio.messages.filter((x) => x.Body.includes(`#/alerts/${alert_id}`)).map((x) => x.To);
  return { mails, sms };
}

/**
 * Everything about the alert handed over and delivered: alerting's outbox empty, the notifier's
 * rows those expected and all sent, the mails and texts in. Then a quiet second and a half, for
 * a duplicate (which would come from a redelivery) to show; an absence cannot be polled for.
 */
async function delivered(alert_id: string, keys: string[]): Promise<void> {
  await pollUntil(
    async () => {
      const outbox = (await pg.query(`SELECT count(*)::int AS n FROM alerting.stream_outbox`)).rows[0].n as number;
      const rows = await notifications(alert_id);
      const got = received(alert_id);
      const mails = Object.values(got.mails).flat().length;
      return (
        outbox === 0 &&
        Object.keys(rows).sort().join() === [...keys].sort().join() &&
        Object.values(rows).every((s) => s === "sent") &&
        mails + got.sms.length === keys.length
      );
    },
    30_000,
    "the notifications delivered",
    running(),
  );
  await new Promise((r) => setTimeout(r, 1500));
}

beforeAll(async () => {
  smtp = await startSmtp();
  twilio = await startTwilio();
  cluster = await startCluster({
    processes: [["api", "auth", "config", "pipelines", "notifier"]],
    env: {
      SMTP_URL: smtp.url,
      TWILIO_ACCOUNT_SID: "AC00000000000000000000000000000000",
      TWILIO_AUTH_TOKEN: "secret-token",
      TWILIO_SMS_FROM: "+15550001111",
      TWILIO_API_BASE: twilio.base,
    },
  });
  pg = new Client({ connectionString: cluster.db!.url });
  await pg.connect();
  replicas = [replica("alerting-1"), replica("alerting-2")];
  for (const r of replicas) r.start();
  // On the bus (the gateway knows alerting's routes) and started (each has its sessions open: its periodic jobs query every second).
  await pollUntil(
    async () => ![404, 503].includes((await cluster.http("GET", "/_alerting/watchers/_list", { auth: null })).status) && (await connected()).join() === "alerting-1,alerting-2",
    60_000,
    "both alerting replicas",
    running(),
  );
  place = await makePlace(cluster.http, "esc");
  for (const username of [OP, LEAD, MANAGER]) {
    await makeUser(cluster.http, { username, user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id, country_code: "+91", mobile_number: "98765 43210" });
  }
  gw = await createEdge({ http: cluster.http } as TestNode, gatewayBody(place, "Escalation gateway"));
  const notifyTo = { email: true, sms: false, whatsapp: false, users: [OP] };
  const body = watcherBody(place, gw.id, { watcher_name: "Escalation watch" }, { id: "hot", minimum_duration: "0s", notifyTo, renotify_every: "6s", ...FOLLOWUPS });
  // A second trigger, on vibration, without re-notifications: acknowledged before its second tier.
  const [rough] = watcherBody(place, gw.id, {}, {
    id: "rough",
    name: "Running rough",
    minimum_duration: "0s",
    condition: [{ comparison: ">", monitor_id: place.monitor_id, tag_id: "vib", threshold: "7.1" }],
    notifyTo,
    ...FOLLOWUPS,
  }).triggers;
  body.triggers.push(rough);
  const created = await alertingCall("POST", "/_alerting/watchers", body);
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
}, 180_000);

afterAll(async () => {
  await pg?.end();
  for (const r of replicas ?? []) await r.stop();
  await cluster?.stop();
  await smtp?.stop();
  await twilio?.stop();
}, 60_000);

describe("two alerting replicas, the one that claimed an escalation tier killed", () => {
  it("sends each tier and each re-notification exactly once per recipient, each `escalated` once in the history", async () => {
    const lock = new Client({ connectionString: cluster.db!.url });
    await lock.connect();
    try {
      await send("temp", Date.now(), 90);
      const { alert_id, start } = await openedAlert("hot");
      await lock.query("BEGIN");
      await lock.query(`SELECT 1 FROM alerting.alerts WHERE alert_id = $1 FOR UPDATE`, [alert_id]);
      // Held before tier 1 is due, so its claim cannot have been committed already.
      expect(Date.now()).toBeLessThan(start + TIER1_MS);

      // The replica whose follow-up transaction waits at the history entry holds tier 1's claim.
      let claimer: ServiceProcess | undefined;
      await pollUntil(
        async () => {
          const found = await pg.query(
            `SELECT application_name FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO alert_history%'`,
          );
          claimer = replicas.find((r) => found.rows.some((x: { application_name: string }) => x.application_name === `ims-${r.name}`));
          return !!claimer;
        },
        15_000,
        "a replica to claim tier 1",
        running(),
      );
      const survivor = replicas.find((r) => r !== claimer)!;
      await claimer!.stop("SIGKILL");
      // Its claim is still held (by its session, blocked), nothing sent: the crash is mid-escalation.
      const held = await pg.query(`SELECT 1 FROM alerting.alert_followups WHERE alert_id = $1 AND tier = 1 FOR UPDATE SKIP LOCKED`, [alert_id]);
      expect(held.rowCount).toBe(0);
      expect(await details(alert_id, "escalated")).toEqual([]);
      await lock.query("COMMIT");

      // The dead session's transaction rolls back; the survivor claims the tier and sends it.
      await pollUntil(async () => (await details(alert_id, "escalated")).length === 1, 20_000, "tier 1 sent by the survivor", [cluster.process("api"), survivor]);
      claimer!.start();
      await pollUntil(
        async () => (await details(alert_id, "escalated")).length === 2 && (await details(alert_id, "notified")).includes("re-notification 2"),
        30_000,
        "tier 2 and the second re-notification",
        running(),
      );
      // Acknowledged: the re-notifications stop (the third is due 18 s after the opening).
      expect((await alertingCall("POST", `/_alerting/alerts/${alert_id}/_ack`, {})).status).toBe(200);
      await pollUntil(async () => (await followups(alert_id)).every((f) => f.done), 15_000, "the follow-ups done", running());

      const op = OP.toLowerCase();
      await delivered(alert_id, [
        `${op}:email`,
        `${op}:email:renotify:1`,
        `${op}:email:renotify:2`,
        `${LEAD}:email:escalation:1`,
        `${MANAGER}:email:escalation:2`,
        `${MANAGER}:sms:escalation:2`,
      ]);
      expect(received(alert_id)).toEqual({
        mails: { [OP]: ["Opened", "Reminder", "Reminder"], [LEAD]: ["Escalation"], [MANAGER]: ["Escalation"] },
        sms: ["+919876543210"],
      });
      expect(await details(alert_id, "escalated")).toEqual([`tier 1: ${LEAD}`, `tier 2: ${MANAGER}`]);
      expect(await details(alert_id, "notified")).toEqual(["opening: 1 recipient by email", "re-notification 1", "re-notification 2"]);
      expect(await followups(alert_id)).toEqual([
        { kind: "escalation", tier: 1, done: true, sent: 1 },
        { kind: "escalation", tier: 2, done: true, sent: 1 },
        { kind: "renotify", tier: 0, done: true, sent: 2 },
      ]);
    } finally {
      await lock.end();
    }
  }, 90_000);
});

describe("an alert acknowledged before its second tier", () => {
  it("never sends that tier", async () => {
    await send("vib", Date.now(), 9);
    const { alert_id } = await openedAlert("rough");
    await pollUntil(async () => (await details(alert_id, "escalated")).length === 1, 20_000, "tier 1", running());
    expect((await alertingCall("POST", `/_alerting/alerts/${alert_id}/_ack`, {})).status).toBe(200);
    // Tier 2 comes due 9 s after the opening and is found acknowledged: done, never sent.
    await pollUntil(async () => (await followups(alert_id)).every((f) => f.done), 20_000, "tier 2 due and dropped", running());

    await delivered(alert_id, [`${OP}:email`, `${LEAD}:email:escalation:1`]);
    expect(received(alert_id)).toEqual({ mails: { [OP]: ["Opened"], [LEAD]: ["Escalation"] }, sms: [] });
    expect((await history(alert_id)).map((h) => h.action)).toEqual(["opened", "notified", "escalated", "acknowledged"]);
    expect(await followups(alert_id)).toEqual([
      { kind: "escalation", tier: 1, done: true, sent: 1 },
      { kind: "escalation", tier: 2, done: true, sent: 0 },
    ]);
  }, 60_000);
});
