/**
 * `no_data` (docs/api-tour.md, "Alarm management") with the real servers: a gateway's tag that goes
 * quiet while the pipeline runs opens one `no_data` alert, emailed once; its next reading closes
 * it. A stopped pipeline is not expected to send: its silence opens nothing. The field is stored,
 * echoed by the watcher fetch and validated.
 */
import { startTestNode, type TestNode } from "../helpers/node";
import { startSmtp, type TestSmtp } from "../helpers/smtp";
import { idFrom, makePlace, makeUser, watcherBody, type Place, gatewayBody } from "./alerting-fixtures";
import { createEdge, ingest } from "./pipelines-fixtures";

let t: TestNode;
let smtp: TestSmtp;

interface Alert {
  _id: string;
  state: string;
  reason: string;
  trigger_id: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`condition not reached; last value ${JSON.stringify(v)}`);
    await sleep(100);
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

const userAlerts = async (place: Place) =>
  (await t.http<Alert[]>("GET", `/_alerting/alerts/_list?function_id=${place.function_id}&is_hidden=0&from=2000-01-01T00:00:00Z`)).body;

describe("no_data on a gateway that goes quiet", () => {
  let place: Place;
  let gw: { id: string; ingest_key: string };
  let watcher_id: string;
  const user = "quiet-oncall@example.com";

  const send = async (value: number) => {
    const res = await ingest(t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, {
      readings: [{ monitor_id: place.monitor_id, tag_id: "temp", ts: Date.now(), value }],
    });
    expect(res.status).toBe(200);
  };

  beforeAll(async () => {
    place = await makePlace(t.http, "quiet");
    await makeUser(t.http, { username: user, user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id });
    gw = await createEdge(t, gatewayBody(place, "Gateway quiet", "Condition"));
    const body = watcherBody(place, gw.id, { watcher_name: "Quiet watch" }, {
      minimum_duration: "0s",
      no_data: "3s",
      notifyTo: { email: true, sms: false, whatsapp: false, users: [user] },
    });
    const created = await t.http("POST", "/_alerting/watchers", { body });
    expect({ status: created.status, body: created.body }).toMatchObject({ status: 200 });
    watcher_id = idFrom(created.body);
  });

  it("is stored and echoed by the watcher fetch", async () => {
    const w = await t.http<{ triggers: Record<string, unknown>[] }>("GET", `/_alerting/watchers/${watcher_id}`);
    expect(w.body.triggers[0]).toMatchObject({ no_data: "3s" });
  });

  it("opens nothing while the pipeline is stopped", async () => {
    await send(50);
    await sleep(5000);
    expect(await userAlerts(place)).toEqual([]);
  });

  it("opens one no_data alert, emailed once, when a running pipeline's tag goes quiet; the next reading closes it", async () => {
    await t.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: "start" } });
    const pending = await ingest<{ action_id: string }[]>(t, "GET", `/_ingest/pipelines/${gw.id}/actions`, gw.ingest_key);
    const ack = await ingest(t, "POST", `/_ingest/pipelines/${gw.id}/actions/${pending.body[0].action_id}`, gw.ingest_key, { status: "completed" });
    expect(ack.body).toBe("Action acknowledged");
    const quietSince = Date.now();
    await send(50);

    const [alert] = await until(() => userAlerts(place), (l) => l.length > 0);
    // Not before the silence reached no_data (3 s), measured from the last reading.
    expect(Date.now() - quietSince).toBeGreaterThanOrEqual(3000);
    expect(alert).toMatchObject({ state: "active", reason: "no_data", trigger_id: "t1", ack_state: "unacknowledged", suppressed: false });
    const [mail] = await smtp.waitFor(1, { to: user });
    expect(mail.text).toContain("No data: no reading for 3s while the gateway runs");
    expect(mail.text).toContain("Tag: Temperature");
    expect(mail.text).toContain(`#/alerts/${alert._id}`);

    // Still quiet: nothing opens or is sent again.
    await sleep(4000);
    expect(await userAlerts(place)).toHaveLength(1);
    expect(smtp.received.filter((m) => m.to.includes(user))).toHaveLength(1);

    await send(50);
    const closed = await until(() => userAlerts(place), (l) => l[0]?.state === "closed");
    expect(closed).toHaveLength(1);
    const fetched = await t.http<{ history: { action: string; by: string | null }[] }>("GET", `/_alerting/alerts/${alert._id}`);
    expect(fetched.body.history.map((h) => h.action)).toEqual(["opened", "notified", "closed"]);
  });

  it("is refused when not a duration of more than 0", async () => {
    for (const no_data of ["soon", "0s", 5]) {
      const body = watcherBody(place, gw.id, {}, { no_data });
      const res = await t.http("POST", "/_alerting/watchers", { body });
      expect({ status: res.status, body: res.body }).toMatchObject({ status: 400, body: { error: { status: 400, message: "Invalid input: triggers[0].no_data" } } });
    }
  });
});
