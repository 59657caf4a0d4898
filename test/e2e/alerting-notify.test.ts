/**
 * An opened alert notifies the trigger's users: email at a real SMTP server on loopback, SMS and
 * WhatsApp at a local stand-in for Twilio's API behind the real `twilio` client. Each message
 * once, however often the alert is handed over.
 */
import { randomUUID } from "node:crypto";
import { Client } from "pg";
import { startTestNode, type TestNode } from "../helpers/node";
import { startSmtp, type TestSmtp } from "../helpers/smtp";
import { idFrom, makePlace, makeUser, watcherBody, type Place } from "./alerting-fixtures";
import { startTwilio, type TwilioStandIn } from "./alerting-twilio";

const SID = "AC00000000000000000000000000000001";
let t: TestNode;
let smtp: TestSmtp;
let twilio: TwilioStandIn;
let place: Place;

async function query<T>(sql: string, args: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: t.db.url });
  await c.connect();
  try {
    return (await c.query(sql, args)).rows as T[];
  } finally {
    await c.end();
  }
}

async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`condition not reached; last value ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  smtp = await startSmtp();
  // The first SMS request is refused with a 503: the notifier must try again, once.
  twilio = await startTwilio({ refuse: (n) => (n === 1 ? 503 : null) });
  t = await startTestNode({
    services: ["api", "auth", "config", "alerting", "notifier"],
    env: {
      SMTP_URL: smtp.url,
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: "secret-token",
      TWILIO_SMS_FROM: "+15550001111",
      TWILIO_WHATSAPP_FROM: "+15550002222",
      TWILIO_API_BASE: twilio.base,
      // The links in notifications start with it; a trailing slash is dropped.
      PUBLIC_URL: "https://ims.example.com/",
    },
  });
  place = await makePlace(t.http, "n1");
});
afterAll(async () => {
  await t?.stop();
  await smtp?.stop();
  await twilio?.stop();
});

describe("alert notifications", () => {
  it("emails, texts and WhatsApps each user once when an alert opens, in the site's time zone, with the link to acknowledge", async () => {
    await makeUser(t.http, {
      username: "oncall-n1@example.com",
      user_type: "plant-admin",
      site_id: place.site_id,
      plant_id: place.plant_id,
      country_code: "+91",
      mobile_number: "98765 43210",
    });
    const body = watcherBody(place, randomUUID(), { watcher_name: "Night watch" }, {
      minimum_duration: "0s",
      notifyTo: { email: true, sms: true, whatsapp: true, users: ["oncall-n1@example.com"] },
    });
    const created = await t.http("POST", "/_alerting/watchers", { body });
    expect(created.status).toBe(200);
    idFrom(created.body);

    const ts = Date.now() - 60_000;
    const out = await t.node.broker.call<{ opened: number }, object>("alerting.evaluate", {
      readings: [{ monitor_id: place.monitor_id, tag_id: "temp", ts, value: 93.5 }],
    });
    expect(out.opened).toBe(1);

    const [mail] = await smtp.waitFor(1, { to: "oncall-n1@example.com" });
    // The site is in Asia/Kolkata: times read at +05:30 there, whatever the server's zone.
    const start = new Date(Math.floor(ts / 1000) * 1000 + 330 * 60_000).toISOString().replace(/\.\d{3}Z$/, "+05:30");
    const [{ alert_id }] = await query<{ alert_id: string }>(`SELECT alert_id FROM alerting.alerts`);
    const link = `https://ims.example.com/#/alerts/${alert_id}`;
    expect(mail.raw).toMatch(/Subject: \[High\] Bearing hot: Pump n1 at Plant n1, Site n1/);
    for (const line of [
      "Severity: High",
      "Site: Site n1",
      "Plant: Plant n1",
      "Asset: Pump n1",
      "Monitor: Bearing n1",
      "Tag: Temperature",
      "Value: 93.5 C (threshold >= 80 C)",
      `Started: ${start} (Asia/Kolkata)`,
      "What to do: check the asset now, then acknowledge the alert",
      `Acknowledge: ${link}`,
    ]) {
      expect(mail.text).toContain(line);
    }

    const messages = await twilio.waitFor(2);
    const sms = messages.find((m) => !m.To.startsWith("whatsapp:"));
    const whatsapp = messages.find((m) => m.To.startsWith("whatsapp:"));
    expect(sms).toMatchObject({ path: `/2010-04-01/Accounts/${SID}/Messages.json`, credentials: `${SID}:secret-token`, From: "+15550001111", To: "+919876543210" });
    expect(whatsapp).toMatchObject({ From: "whatsapp:+15550002222", To: "whatsapp:+919876543210" });
    const expected = `High alert: Bearing hot. Site n1 / Plant n1 / Pump n1 / Bearing n1: Temperature 93.5 C (threshold >= 80 C) since ${start}. Acknowledge: ${link}`;
    expect(sms?.Body).toBe(expected);
    expect(whatsapp?.Body).toBe(expected);

    const rows = await until(
      () => query<{ medium: string; status: string; attempts: number; recipient: string }>(`SELECT medium, status, attempts, recipient FROM notifier.notifications ORDER BY medium`),
      (r) => r.length === 3 && r.every((x) => x.status === "sent"),
    );
    expect(rows.map((r) => [r.medium, r.recipient])).toEqual([
      ["email", "oncall-n1@example.com"],
      ["sms", "+919876543210"],
      ["whatsapp", "+919876543210"],
    ]);
    // One of the two Twilio requests was refused once (503) and retried.
    expect(rows.reduce((n, r) => n + r.attempts, 0)).toBe(4);
    expect(twilio.requests()).toBe(3);
    // Alerting's outbox is empty once the notice is on the alerts stream.
    await until(() => query(`SELECT * FROM alerting.stream_outbox`), (r) => r.length === 0);
  });

  it("a repeated hand-over of the same alert sends nothing again", async () => {
    const [alert] = await query<{ alert_id: string }>(`SELECT alert_id FROM alerting.alerts`);
    const keys = await query<{ idempotency_key: string }>(`SELECT idempotency_key FROM notifier.notifications ORDER BY idempotency_key`);
    expect(keys.map((x) => x.idempotency_key)).toEqual(
      ["email", "sms", "whatsapp"].map((m) => `alert:${alert.alert_id}:oncall-n1@example.com:${m}`),
    );
    // As a crash of the notifier between recording the alert and acking its message would leave it:
    // the alert comes again on the stream (under another message id, which the stream stores anew).
    const payload = {
      alert_id: alert.alert_id,
      watcher_id: randomUUID(),
      watcher_name: "Night watch",
      trigger_id: "t1",
      trigger_name: "Bearing hot",
      severity: "High",
      start_time: "2025-01-01T00:00:00+00:00",
      start_ts: 0,
      site: "Site n1",
      plant: "Plant n1",
      function: "Cooling n1",
      asset: "Pump n1",
      monitor: "Bearing n1",
      tag: "Temperature",
      value: 93.5,
      threshold: 80,
      comparison: ">=",
      unit: "C",
      conditions: [],
      notifyTo: { email: true, sms: true, whatsapp: true, users: ["oncall-n1@example.com"] },
    };
    await query(`INSERT INTO alerting.stream_outbox (stream, msg_id, msg_key, payload, created_at) VALUES ('alerts', $1, $2, $3, $4)`, [
      `${alert.alert_id}:again`,
      payload.watcher_id,
      JSON.stringify(payload),
      Date.now(),
    ]);
    // Published, then handled: the notifier's group has passed the stream's last message.
    await until(() => query(`SELECT * FROM alerting.stream_outbox`), (r) => r.length === 0);
    await until(
      () => query<{ done: boolean }>(`SELECT g.position >= h.seq AS done FROM streams.groups g JOIN streams.heads h USING (stream) WHERE g.grp = 'notifier' AND g.stream LIKE '%.alerts'`),
      (r) => r.length === 1 && r[0].done,
    );
    // Handled, not given up on: the notifier recognised the alert it already had.
    expect(await query(`SELECT * FROM streams.dead_letters`)).toEqual([]);
    await new Promise((r) => setTimeout(r, 1000));
    expect(smtp.received).toHaveLength(1);
    expect(twilio.messages).toHaveLength(2);
    const [after] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM notifier.notifications`);
    expect(after.n).toBe(3);
  });

  it("records a user it does not know as a failed notification, not a silent drop", async () => {
    const body = watcherBody(place, randomUUID(), { watcher_name: "Ghost watch" }, {
      id: "ghost",
      minimum_duration: "0s",
      condition: [{ comparison: ">", monitor_id: place.monitor_id, tag_id: "vib", threshold: "20" }],
      notifyTo: { email: true, sms: false, whatsapp: false, users: ["nobody@example.com"] },
    });
    expect((await t.http("POST", "/_alerting/watchers", { body })).status).toBe(200);
    await t.node.broker.call("alerting.evaluate", { readings: [{ monitor_id: place.monitor_id, tag_id: "vib", ts: Date.now(), value: 25 }] });
    const [row] = await until(
      () => query<{ status: string; last_error: string }>(`SELECT status, last_error FROM notifier.notifications WHERE idempotency_key LIKE '%nobody@example.com%'`),
      (r) => r.length === 1 && r[0].status !== "queued",
    );
    expect(row).toEqual({ status: "failed", last_error: "unknown user nobody@example.com" });
  });

  it("tells no user of another site the alert: recorded as failed, while the plant's own user gets it", async () => {
    const elsewhere = await makePlace(t.http, "n3");
    await makeUser(t.http, { username: "admin-n3@example.com", user_type: "site-admin", site_id: elsewhere.site_id });
    const body = watcherBody(place, randomUUID(), { watcher_name: "Tenant watch" }, {
      id: "tenant",
      minimum_duration: "0s",
      condition: [{ comparison: "<", monitor_id: place.monitor_id, tag_id: "temp", threshold: "-40" }],
      notifyTo: { email: true, sms: false, whatsapp: false, users: ["admin-n3@example.com", "oncall-n1@example.com"] },
    });
    expect((await t.http("POST", "/_alerting/watchers", { body })).status).toBe(200);
    await t.node.broker.call("alerting.evaluate", { readings: [{ monitor_id: place.monitor_id, tag_id: "temp", ts: Date.now(), value: -41 }] });
    const rows = await until(
      () => query<{ recipient: string; status: string; last_error: string | null }>(
        `SELECT recipient, status, last_error FROM notifier.notifications WHERE idempotency_key LIKE 'alert:%:email' AND body LIKE '%Tenant watch%' ORDER BY idempotency_key`,
      ),
      (r) => r.length === 2 && r.every((x) => x.status !== "queued"),
    );
    expect(rows).toEqual([
      { recipient: "", status: "failed", last_error: "user admin-n3@example.com is outside the alert's site or plant" },
      { recipient: "oncall-n1@example.com", status: "sent", last_error: null },
    ]);
    expect(smtp.received.filter((m) => m.raw.includes("admin-n3@example.com"))).toHaveLength(0);
  });
});

describe("without Twilio credentials", () => {
  let bare: TestNode;
  afterAll(async () => {
    await bare?.stop();
  });

  it("records SMS and WhatsApp as skipped and still sends the email", async () => {
    bare = await startTestNode({ services: ["api", "auth", "config", "alerting", "notifier"], env: { SMTP_URL: smtp.url } });
    const p = await makePlace(bare.http, "n2");
    await makeUser(bare.http, { username: "oncall-n2@example.com", user_type: "plant-admin", site_id: p.site_id, plant_id: p.plant_id });
    const body = watcherBody(p, randomUUID(), {}, {
      minimum_duration: "0s",
      notifyTo: { email: true, sms: true, whatsapp: true, users: ["oncall-n2@example.com"] },
    });
    expect((await bare.http("POST", "/_alerting/watchers", { body })).status).toBe(200);
    await bare.node.broker.call("alerting.evaluate", { readings: [{ monitor_id: p.monitor_id, tag_id: "temp", ts: Date.now(), value: 81 }] });
    await smtp.waitFor(1, { to: "oncall-n2@example.com" });
    const c = new Client({ connectionString: bare.db.url });
    await c.connect();
    try {
      const rows = await until(
        async () => (await c.query(`SELECT medium, status, last_error FROM notifier.notifications ORDER BY medium`)).rows as {
            medium: string;
            status: string;
            last_error: string | null;
          }[],
        (r) => r.length === 3 && r.every((x) => x.status !== "queued"),
      );
      expect(rows).toEqual([
        { medium: "email", status: "sent", last_error: null },
        { medium: "sms", status: "skipped", last_error: "not configured" },
        { medium: "whatsapp", status: "skipped", last_error: "not configured" },
      ]);
    } finally {
      await c.end();
    }
  });
});
