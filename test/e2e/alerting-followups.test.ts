/**
 * An alert's follow-ups (docs/api-tour.md, "Alarm management") with the real PostgreSQL and SMTP
 * receiver: an escalation tier that fires once, one that does not because the alert was
 * acknowledged in time, re-notifications that stop on acknowledge, a shelf that ends while the
 * alert is active; each in the alert's history, and a follow-up handed to the notifier again sends
 * nothing twice. Alerts are opened by the live evaluation (`alerting.evaluate`, as the readings
 * stream calls it).
 */
import { randomUUID } from "node:crypto";
import { Client } from "pg";
import { startTestNode, type TestNode } from "../helpers/node";
import { startSmtp, type TestSmtp } from "../helpers/smtp";
import { idFrom, makePlace, makeUser, watcherBody, type Place } from "./alerting-fixtures";

let t: TestNode;
let smtp: TestSmtp;

interface Alert {
  _id: string;
  ack_state: string;
  history: { at: string; by: string | null; action: string; detail: string | null }[];
}

async function sql<T>(text: string, params: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: t.db.url });
  await c.connect();
  try {
    await c.query(`SET search_path TO alerting`);
    return (await c.query(text, params)).rows as T[];
  } finally {
    await c.end();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mailsTo = (to: string) => smtp.received.filter((m) => m.to.includes(to));
const subjectOf = (raw: string) => /^Subject: (.*)$/m.exec(raw)?.[1] ?? "";

beforeAll(async () => {
  smtp = await startSmtp();
  t = await startTestNode({ services: ["api", "auth", "config", "alerting", "notifier"], env: { SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await t?.stop();
  await smtp?.stop();
});

/** A place, its operator (notified) and shift lead (an escalation tier), a watcher with `trigger`, and the alert it opens now. */
async function opened(name: string, trigger: Record<string, unknown>): Promise<{ place: Place; op: string; lead: string; alert_id: string }> {
  const place = await makePlace(t.http, name);
  const op = `op-${name}@example.com`;
  const lead = `lead-${name}@example.com`;
  await makeUser(t.http, { username: op, user_type: "general-user", site_id: place.site_id, plant_id: place.plant_id, modules: ["Alerting"] });
  await makeUser(t.http, { username: lead, user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id });
  const body = watcherBody(place, randomUUID(), { watcher_name: `Watch ${name}` }, {
    minimum_duration: "0s",
    notifyTo: { email: true, sms: false, whatsapp: false, users: [op] },
    ...trigger,
  });
  const created = await t.http("POST", "/_alerting/watchers", { body: JSON.parse(JSON.stringify(body).replaceAll("LEAD", lead)) });
  expect(created.status).toBe(200);
  idFrom(created.body);
  const out = await t.node.broker.call<{ opened: number }, object>("alerting.evaluate", {
    readings: [{ monitor_id: place.monitor_id, tag_id: "temp", ts: Date.now(), value: 90 }],
  });
  expect(out.opened).toBe(1);
  const [alert] = (await t.http<{ _id: string }[]>("GET", `/_alerting/alerts/_list?function_id=${place.function_id}&is_hidden=0&from=2000-01-01T00:00:00Z`)).body;
  await smtp.waitFor(1, { to: op });
  return { place, op, lead, alert_id: alert._id };
}

const fetchAlert = async (id: string) => (await t.http<Alert>("GET", `/_alerting/alerts/${id}`)).body;

describe("trigger fields", () => {
  it("are echoed by the watcher fetch as stored, and refused in the trigger checks' words", async () => {
    const place = await makePlace(t.http, "fu0");
    const trigger = { renotify_every: "30m", escalation: [{ after: "15m", users: ["lead@example.com"], email: true }] };
    const created = await t.http("POST", "/_alerting/watchers", { body: watcherBody(place, randomUUID(), {}, trigger) });
    expect(created.status).toBe(200);
    const w = await t.http<{ triggers: unknown[] }>("GET", `/_alerting/watchers/${idFrom(created.body)}`);
    expect(w.body.triggers[0]).toMatchObject({
      renotify_every: "30m",
      escalation: [{ after: "15m", users: ["lead@example.com"], email: true, sms: false, whatsapp: false }],
    });
    const cases: [Record<string, unknown>, string][] = [
      [{ renotify_every: "often" }, "Invalid input: triggers[0].renotify_every"],
      [{ renotify_every: "0s" }, "Invalid input: triggers[0].renotify_every"],
      [{ escalation: [{ after: "soon", users: ["x"], email: true }] }, "Invalid input: triggers[0].escalation[0].after"],
      [{ escalation: [{ after: "5m", users: [], email: true }] }, "Invalid input: triggers[0].escalation[0].users"],
      [{ escalation: [{ after: "5m", users: ["x"] }] }, "Invalid input: triggers[0].escalation[0]"],
    ];
    for (const [over, message] of cases) {
      const res = await t.http<{ error: { message: string } }>("POST", "/_alerting/watchers", { body: watcherBody(place, randomUUID(), {}, over) });
      expect({ over, status: res.status, message: res.body.error?.message }).toEqual({ over, status: 400, message });
    }
  });
});

describe("escalation", () => {
  it("tells the tier once when the alert is still unacknowledged `after` its opening, `escalated` in its history", async () => {
    const { op, lead, alert_id } = await opened("fu1", { escalation: [{ after: "2s", users: ["LEAD"], email: true }] });
    const [mail] = await smtp.waitFor(1, { to: lead, timeoutMs: 15_000 });
    expect(subjectOf(mail.text)).toMatch(/^Escalation: \[High\] Bearing hot/);
    expect(mail.text).toContain(`Alert ID: ${alert_id}`);
    await sleep(3000);
    expect(mailsTo(lead)).toHaveLength(1);
    expect(mailsTo(op)).toHaveLength(1);
    const escalated = (await fetchAlert(alert_id)).history.filter((h) => h.action === "escalated");
    expect(escalated).toEqual([{ at: expect.any(String), by: null, action: "escalated", detail: `tier 1: ${lead}` }]);

    // The same follow-up handed to the notifier again (a redelivery) sends nothing twice.
    const [{ notice }] = await sql<{ notice: Record<string, unknown> }>(`SELECT notice FROM alert_notices WHERE alert_id = $1`, [alert_id]);
    const again = { ...notice, notifyTo: { email: true, sms: false, whatsapp: false, users: [lead] }, followup: "escalation:1" };
    await t.node.broker.call("notifier.alerts.notify", again);
    await sleep(1000);
    expect(mailsTo(lead)).toHaveLength(1);
  });

  it("does not tell the tier when the alert was acknowledged in time", async () => {
    const { lead, alert_id } = await opened("fu2", { escalation: [{ after: "3s", users: ["LEAD"], email: true }] });
    expect((await t.http("POST", `/_alerting/alerts/${alert_id}/_ack`, { body: {} })).status).toBe(200);
    await sleep(5000);
    expect(mailsTo(lead)).toHaveLength(0);
    expect((await fetchAlert(alert_id)).history.map((h) => h.action)).toEqual(["opened", "notified", "acknowledged"]);
    expect(await sql(`SELECT done, sent FROM alert_followups WHERE alert_id = $1`, [alert_id])).toEqual([{ done: true, sent: 0 }]);
  });
});

describe("renotify_every", () => {
  it("notifies again every period until the alert is acknowledged, `notified` in its history each time", async () => {
    const { op, alert_id } = await opened("fu3", { renotify_every: "2s" });
    const mails = await smtp.waitFor(3, { to: op, timeoutMs: 15_000 });
    expect(mails.slice(1).map((m) => subjectOf(m.text))).toEqual([expect.stringMatching(/^Reminder: /), expect.stringMatching(/^Reminder: /)]);
    expect((await t.http("POST", `/_alerting/alerts/${alert_id}/_ack`, { body: {} })).status).toBe(200);
    // One may have been staged just before the acknowledgement; none after it.
    await sleep(1500);
    const sent = mailsTo(op).length;
    await sleep(4500);
    expect(mailsTo(op)).toHaveLength(sent);
    const history = (await fetchAlert(alert_id)).history;
    // The opening notice, then each re-notification.
    expect(history.filter((h) => h.action === "notified").map((h) => h.detail)).toEqual([
      "opening: 1 recipient by email",
      ...Array.from({ length: sent - 1 }, (_, i) => `re-notification ${i + 1}`),
    ]);
  });
});

describe("a shelf that ends while the alert is active", () => {
  it("notifies the alert again, once", async () => {
    const { op, alert_id } = await opened("fu4", {});
    expect((await t.http("POST", `/_alerting/alerts/${alert_id}/_shelve`, { body: { minutes: 1, reason: "Known fault" } })).status).toBe(200);
    // A minute is the shortest shelf: brought forward to end in 1.5 s, as it would end by itself.
    const end = Date.now() + 1500;
    await sql(`UPDATE alerts SET shelved_until = $2 WHERE alert_id = $1`, [alert_id, end]);
    await sql(`UPDATE alert_followups SET due_at = $2 WHERE alert_id = $1 AND kind = 'shelf'`, [alert_id, end]);
    const mails = await smtp.waitFor(2, { to: op, timeoutMs: 15_000 });
    expect(subjectOf(mails[1].text)).toMatch(/^Shelf ended: /);
    await sleep(3000);
    expect(mailsTo(op)).toHaveLength(2);
    expect((await fetchAlert(alert_id)).history.map((h) => [h.action, h.detail])).toEqual([
      ["opened", null],
      ["notified", "opening: 1 recipient by email"],
      ["shelved", "Known fault"],
      ["notified", "shelf ended while active"],
    ]);
  });

  it("notifies nothing when the alert has closed before its shelf ends", async () => {
    const { op, place, alert_id } = await opened("fu5", {});
    await t.http("POST", `/_alerting/alerts/${alert_id}/_shelve`, { body: { minutes: 1, reason: "r" } });
    await sql(`UPDATE alert_followups SET due_at = $2 WHERE alert_id = $1 AND kind = 'shelf'`, [alert_id, Date.now() + 1500]);
    await t.node.broker.call("alerting.evaluate", { readings: [{ monitor_id: place.monitor_id, tag_id: "temp", ts: Date.now(), value: 20 }] });
    await sleep(3500);
    expect(mailsTo(op)).toHaveLength(1);
    expect(await sql(`SELECT done, sent FROM alert_followups WHERE alert_id = $1`, [alert_id])).toEqual([{ done: true, sent: 0 }]);
  });
});
