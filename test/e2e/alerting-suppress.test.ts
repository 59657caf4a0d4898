/**
 * Trigger fields and maintenance windows (docs/api-tour.md, "Alarm management"), through the public
 * API with the real servers: a chattering signal ingested by a gateway opens several alerts, one
 * with `deadband` or `clear_delay`; a watcher's maintenance window suppresses the alerts that open
 * inside it (recorded, not emailed); the suppress routes' answers and errors.
 */
import { Client } from "pg";
import { startTestNode, type TestNode } from "../helpers/node";
import { startSmtp, type TestSmtp } from "../helpers/smtp";
import { idFrom, makePlace, makeUser, watcherBody, type Place, gatewayBody } from "./alerting-fixtures";
import { createEdge, eventually, ingest } from "./pipelines-fixtures";

let t: TestNode;
let smtp: TestSmtp;

interface Alert {
  _id: string;
  state: string;
  trigger_id: string;
}

async function query<T>(sql: string, args: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: t.db.url });
  await c.connect();
  try {
    return (await c.query(sql, args)).rows as T[];
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  smtp = await startSmtp();
  t = await startTestNode({ services: ["api", "auth", "config", "pipelines", "alerting", "notifier"], env: { SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await t?.stop();
  await smtp?.stop();
});

/** A place with a condition gateway registering its monitor, and a user watcher on it. */
async function watched(name: string, trigger: Record<string, unknown>, users = ["nobody@example.com"]) {
  const place = await makePlace(t.http, name);
  const gw = await createEdge(t, gatewayBody(place, `Gateway ${name}`, "Condition"));
  const body = watcherBody(place, gw.id, { watcher_name: `Watch ${name}` }, {
    minimum_duration: "0s",
    notifyTo: { email: true, sms: false, whatsapp: false, users },
    ...trigger,
  });
  const created = await t.http("POST", "/_alerting/watchers", { body });
  expect({ status: created.status, body: created.body }).toMatchObject({ status: 200 });
  return { place, gw, watcher_id: idFrom(created.body) };
}

async function send(place: Place, gw: { id: string; ingest_key: string }, readings: { ts: number; value: number }[]) {
  const res = await ingest<{ accepted: number }>(t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, {
    readings: readings.map((r) => ({ monitor_id: place.monitor_id, tag_id: "temp", ...r })),
  });
  expect(res.status).toBe(200);
}

const userAlerts = async (place: Place) =>
  (await t.http<Alert[]>("GET", `/_alerting/alerts/_list?function_id=${place.function_id}&is_hidden=0&from=2000-01-01T00:00:00Z`)).body;

/** 79 + 3·sin(2πi/10) a second apart for a minute (76..82 around the threshold 80), then 20 s at 60. */
function chattering(t0: number) {
  return [
    ...Array.from({ length: 60 }, (_, i) => ({ ts: t0 + i * 1000, value: Math.round((79 + 3 * Math.sin((2 * Math.PI * i) / 10)) * 1000) / 1000 })),
    ...Array.from({ length: 20 }, (_, i) => ({ ts: t0 + 60_000 + i * 1000, value: 60 })),
  ];
}

describe("deadband and clear_delay on a chattering signal through the ingestion API", () => {
  const t0 = Date.now() - 600_000;

  it("opens an alert each period without them", async () => {
    const { place, gw } = await watched("chat", {});
    await send(place, gw, chattering(t0));
    const alerts = await eventually(() => userAlerts(place), (l) => l.length === 6 && l.every((a) => a.state === "closed"), 200);
    expect(alerts).toHaveLength(6);
  });

  it("opens one with a deadband, and the watcher fetch echoes it", async () => {
    const { place, gw, watcher_id } = await watched("dead", { deadband: "5" });
    const w = await t.http<{ triggers: Record<string, unknown>[] }>("GET", `/_alerting/watchers/${watcher_id}`);
    expect(w.body.triggers[0]).toMatchObject({ deadband: "5" });
    expect(w.body.triggers[0]).not.toHaveProperty("clear_delay");
    await send(place, gw, chattering(t0));
    const alerts = await eventually(() => userAlerts(place), (l) => l.length >= 1 && l.every((a) => a.state === "closed"), 200);
    expect(alerts).toHaveLength(1);
  });

  it("opens one with a clear_delay, closed once the signal has stayed low long enough", async () => {
    const { place, gw, watcher_id } = await watched("delay", { clear_delay: "8s" });
    const w = await t.http<{ triggers: Record<string, unknown>[] }>("GET", `/_alerting/watchers/${watcher_id}`);
    expect(w.body.triggers[0]).toMatchObject({ clear_delay: "8s" });
    await send(place, gw, chattering(t0));
    const alerts = await eventually(() => userAlerts(place), (l) => l.length >= 1 && l.every((a) => a.state === "closed"), 200);
    expect(alerts).toHaveLength(1);
    // The signal last held at t0 + 54 s and stopped at t0 + 55 s: closed at the reading 8 s later.
    const [row] = await query<{ start_ts: string; end_ts: string }>(`SELECT start_ts, end_ts FROM alerting.alerts WHERE alert_id = $1`, [alerts[0]._id]);
    expect([Number(row.start_ts), Number(row.end_ts)]).toEqual([t0 + 1000, t0 + 63_000]);
  });

  it("refuses values that are not a deadband or a duration, in the trigger checks' words", async () => {
    const place = await makePlace(t.http, "bad");
    for (const [over, message] of [
      [{ deadband: "-1" }, "Invalid input: triggers[0].deadband"],
      [{ deadband: "wide" }, "Invalid input: triggers[0].deadband"],
      [{ clear_delay: "soon" }, "Invalid input: triggers[0].clear_delay"],
      [{ clear_delay: 5 }, "Invalid input: triggers[0].clear_delay"],
    ] as const) {
      const res = await t.http("POST", "/_alerting/watchers", { body: watcherBody(place, place.asset_id, {}, over) });
      expect({ status: res.status, body: res.body }).toMatchObject({ status: 400, body: { error: { status: 400, message } } });
    }
  });
});

describe("maintenance windows", () => {
  it("answers the suppress routes and their errors; the fetch lists the windows, the list does not", async () => {
    const { place, watcher_id } = await watched("routes", {});
    const path = `/_alerting/watchers/${watcher_id}/_suppress`;
    const window = { from: "2026-02-01T07:30:00+05:30", to: "2026-02-01T11:30:00+05:30", reason: "Bearing replacement" };

    const created = await t.http<{ id: string }>("POST", path, { body: window });
    expect(created.status).toBe(200);
    expect(Object.keys(created.body)).toEqual(["id"]);
    const id = created.body.id;

    const fetched = await t.http<{ suppressions: unknown[] }>("GET", `/_alerting/watchers/${watcher_id}`);
    expect(fetched.body.suppressions).toEqual([
      { id, from: "2026-02-01T02:00:00+00:00", to: "2026-02-01T06:00:00+00:00", reason: "Bearing replacement", created_by: "admin@localhost" },
    ]);
    const listed = await t.http<Record<string, unknown>[]>("GET", `/_alerting/watchers/_list?function_id=${place.function_id}`);
    expect(listed.body[0]).not.toHaveProperty("suppressions");

    const errors: [string, string, Record<string, unknown> | undefined, number, string][] = [
      ["POST", path, { from: window.from, to: window.to }, 400, "Insufficient inputs"],
      ["POST", path, { ...window, from: "yesterday" }, 400, "Invalid date format"],
      ["POST", path, { ...window, to: "2026-13-45" }, 400, "Invalid date format"],
      ["POST", path, { ...window, to: window.from }, 400, "Invalid input: to"],
      ["POST", path, { ...window, reason: "" }, 400, "Invalid input: reason"],
      ["POST", path, { ...window, extra: 1 }, 400, "Invalid input: extra"],
      ["POST", `/_alerting/watchers/00000000-0000-4000-8000-000000000001/_suppress`, window, 400, "Invalid Watcher ID"],
      ["DELETE", `${path}/00000000-0000-4000-8000-000000000001`, undefined, 400, "Invalid Suppression ID: 00000000-0000-4000-8000-000000000001"],
      ["DELETE", `${path}/not-an-id`, undefined, 400, "Invalid Suppression ID: not-an-id"],
    ];
    for (const [method, url, body, status, message] of errors) {
      const res = await t.http(method, url, body ? { body } : {});
      expect({ url, status: res.status, body: res.body }).toMatchObject({ url, status, body: { error: { status, message } } });
    }

    // Who may: as for a watcher update; a user outside the watcher's scope does not see it.
    const analyst = await makeUser(t.http, { username: "analyst-s1@example.com", user_type: "support-analyst", site_id: place.site_id });
    const other = await makePlace(t.http, "elsewhere");
    const stranger = await makeUser(t.http, { username: "admin-s2@example.com", user_type: "site-admin", site_id: other.site_id });
    const as = (auth: { username: string; password: string }) => ({ auth });
    const denied = await t.http("POST", path, { body: window, ...as(analyst) });
    expect({ status: denied.status, body: denied.body }).toEqual({ status: 403, body: { error: { status: 403, message: "Unauthorized operation" } } });
    const deniedDelete = await t.http("DELETE", `${path}/${id}`, as(analyst));
    expect(deniedDelete.status).toBe(403);
    const hidden = await t.http("DELETE", `${path}/${id}`, as(stranger));
    expect({ status: hidden.status, body: hidden.body }).toMatchObject({ status: 400, body: { error: { message: "Invalid Watcher ID" } } });

    const removed = await t.http("DELETE", `${path}/${id}`);
    expect({ status: removed.status, body: removed.body }).toEqual({ status: 200, body: "Suppression removed" });
    const again = await t.http("DELETE", `${path}/${id}`);
    expect(again.body).toEqual({ error: { status: 400, message: `Invalid Suppression ID: ${id}` } });
    expect((await t.http<{ suppressions: unknown[] }>("GET", `/_alerting/watchers/${watcher_id}`)).body.suppressions).toEqual([]);
  });

  it("opens an alert inside a window suppressed and emails nobody; after the window's removal the next one is emailed", async () => {
    const { place, gw, watcher_id } = await watched("mw", {}, ["oncall-s2@example.com"]);
    await makeUser(t.http, { username: "oncall-s2@example.com", user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id });

    const now = Date.now();
    const created = await t.http<{ id: string }>("POST", `/_alerting/watchers/${watcher_id}/_suppress`, {
      body: { from: new Date(now - 3_600_000).toISOString(), to: new Date(now + 3_600_000).toISOString(), reason: "Planned shutdown" },
    });
    expect(created.status).toBe(200);

    await send(place, gw, [{ ts: now - 60_000, value: 90 }]);
    const [first] = await eventually(() => userAlerts(place), (l) => l.length === 1, 200);
    const [stored] = await query<{ suppressed: boolean }>(`SELECT suppressed FROM alerting.alerts WHERE alert_id = $1`, [first._id]);
    expect(stored.suppressed).toBe(true);
    // Nothing staged for the notifier: no notification recorded, no email.
    expect(await query(`SELECT * FROM notifier.notifications WHERE idempotency_key LIKE $1`, [`alert:${first._id}:%`])).toEqual([]);

    await send(place, gw, [{ ts: now - 50_000, value: 60 }]);
    await eventually(() => userAlerts(place), (l) => l.length === 1 && l[0].state === "closed", 200);
    const removed = await t.http("DELETE", `/_alerting/watchers/${watcher_id}/_suppress/${created.body.id}`);
    expect(removed.status).toBe(200);

    await send(place, gw, [{ ts: now - 40_000, value: 91 }]);
    const alerts = await eventually(() => userAlerts(place), (l) => l.length === 2, 200);
    const second = alerts.find((a) => a._id !== first._id);
    const [notSuppressed] = await query<{ suppressed: boolean }>(`SELECT suppressed FROM alerting.alerts WHERE alert_id = $1`, [second?._id]);
    expect(notSuppressed.suppressed).toBe(false);
    // Only the notified alert says so in its history.
    const actions = async (id: string | undefined) =>
      (await query<{ action: string }>(`SELECT action FROM alerting.alert_history WHERE alert_id = $1 ORDER BY at, seq`, [id])).map((h) => h.action);
    expect(await actions(first._id)).toEqual(["opened", "closed"]);
    expect(await actions(second?._id)).toEqual(["opened", "notified"]);
    const mails = await smtp.waitFor(1, { to: "oncall-s2@example.com" });
    await new Promise((r) => setTimeout(r, 1000));
    expect(smtp.received.filter((m) => m.to.includes("oncall-s2@example.com"))).toHaveLength(1);
    expect(mails[0].raw).toContain("Bearing hot");
    const notified = await query<{ idempotency_key: string }>(`SELECT idempotency_key FROM notifier.notifications WHERE idempotency_key LIKE '%oncall-s2%'`);
    expect(notified.map((n) => n.idempotency_key)).toEqual([`alert:${second?._id}:oncall-s2@example.com:email`]);
  });
});
