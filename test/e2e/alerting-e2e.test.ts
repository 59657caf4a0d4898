/**
 * End to end, as a plant would live it: a condition gateway's readings through the ingestion API
 * open an alert the alerts list shows; the on-call user gets the email at a real SMTP server on
 * loopback and the SMS and WhatsApp message at a local stand-in for Twilio's API; readings back
 * below the threshold close it. The gateway's hidden system watcher follows its registrations.
 */
import { startTestNode, type TestNode } from "../helpers/node";
import { startSmtp, type TestSmtp } from "../helpers/smtp";
import { idFrom, makePlace, makeUser, watcherBody, type Place, gatewayBody } from "./alerting-fixtures";
import { startTwilio, type TwilioStandIn } from "./alerting-twilio";
import { createEdge, eventually, ingest } from "./pipelines-fixtures";

const SID = "AC00000000000000000000000000000002";
let t: TestNode;
let smtp: TestSmtp;
let twilio: TwilioStandIn;
let place: Place;
let gw: { id: string; ingest_key: string };

interface Alert {
  _id: string;
  state: string;
  severity: string;
  trigger_id: string;
  trigger_name: string;
  end_time: string | null;
  duration: number;
  watcher_name: string;
}

beforeAll(async () => {
  smtp = await startSmtp();
  twilio = await startTwilio();
  t = await startTestNode({
    services: ["api", "auth", "config", "pipelines", "alerting", "notifier"],
    env: {
      SMTP_URL: smtp.url,
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: "token-2",
      TWILIO_SMS_FROM: "+15550003333",
      TWILIO_WHATSAPP_FROM: "+15550004444",
      TWILIO_API_BASE: twilio.base,
    },
  });
  place = await makePlace(t.http, "e1");
  gw = await createEdge(t, gatewayBody(place, "Cooling gateway", "Condition"));
});
afterAll(async () => {
  await t?.stop();
  await smtp?.stop();
  await twilio?.stop();
});

const list = async (hidden: 0 | 1) =>
  (await t.http<Alert[]>("GET", `/_alerting/alerts/_list?function_id=${place.function_id}&is_hidden=${hidden}`)).body;

async function send(readings: { tag_id: string; ts: number; value: number }[]) {
  const res = await ingest<{ accepted: number }>(t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, {
    readings: readings.map((r) => ({ monitor_id: place.monitor_id, ...r })),
  });
  expect(res.status).toBe(200);
  expect(res.body.accepted).toBe(readings.length);
}

describe("from readings to the on-call phone", () => {
  it("gives the condition gateway a hidden system watcher from its monitors' thresholds", async () => {
    const hidden = await eventually(
      async () => (await t.http<{ gateway_id: string; gateway_name: string; is_hidden: number; triggers: { id: string; severity: number }[] }[]>(
        "GET",
        `/_alerting/watchers/_list?function_id=${place.function_id}&is_hidden=1`,
      )).body,
      (b) => Array.isArray(b) && b.length === 1,
    );
    expect(hidden[0]).toMatchObject({ gateway_id: gw.id, gateway_name: "Cooling gateway", is_hidden: 1 });
    expect(hidden[0].triggers.map((x) => [x.id, x.severity])).toEqual([
      [`${place.monitor_id}:temp:operational`, 3],
      [`${place.monitor_id}:temp:caution`, 2],
      [`${place.monitor_id}:temp:warning`, 1],
      [`${place.monitor_id}:vib:operational`, 3],
      [`${place.monitor_id}:vib:caution`, 2],
      [`${place.monitor_id}:vib:warning`, 1],
    ]);
    // The plain list is the users' watchers only.
    expect((await t.http("GET", `/_alerting/watchers/_list?function_id=${place.function_id}`)).body).toEqual([]);
  });

  it("answers the spec's no-body variants for the condition gateway's system watcher (ops 1 and 3)", async () => {
    const hidden = await eventually(
      async () => (await t.http<{ watcher_id: string }[]>("GET", `/_alerting/watchers/_list?function_id=${place.function_id}&is_hidden=1`)).body,
      (b) => Array.isArray(b) && b.length === 1,
    );
    const id = hidden[0].watcher_id;
    // Made already when the gateway was created: the call the spec makes then answers its id, every time.
    for (const path of [`/_alerting/watchers?is_hidden=1&pipeline_id=${gw.id}`, `/_alerting/watchers/?is_hidden=1&pipeline_id=${gw.id}`]) {
      const res = await t.http("POST", path, { headers: { "content-type": "application/json" } });
      expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: `Successfully created watcher with ID ${id}.` });
    }
    const update = await t.http("PUT", `/_alerting/watchers/${id}?is_hidden=1&pipeline_id=${gw.id}&monitor_id=${place.monitor_id}`);
    expect({ status: update.status, body: update.body }).toEqual({ status: 200, body: `Successfully updated watcher with ID ${id}.` });
    const after = await t.http<{ watcher_id: string; triggers: unknown[] }[]>("GET", `/_alerting/watchers/_list?function_id=${place.function_id}&is_hidden=1`);
    expect(after.body.map((w) => [w.watcher_id, w.triggers.length])).toEqual([[id, 6]]);
  });

  it("opens an alert from ingested readings, notifies by email, SMS and WhatsApp, and closes it", async () => {
    await makeUser(t.http, {
      username: "oncall-e1@example.com",
      user_type: "plant-admin",
      site_id: place.site_id,
      plant_id: place.plant_id,
      country_code: "44",
      mobile_number: "7700 900123",
    });
    const body = watcherBody(place, gw.id, { watcher_name: "Bearing night watch" }, {
      notifyTo: { email: true, sms: true, whatsapp: true, users: ["oncall-e1@example.com"] },
    });
    const created = await t.http("POST", "/_alerting/watchers", { body });
    expect(created.status).toBe(200);
    const watcherId = idFrom(created.body);
    const w = await t.http<{ gateway_name: string }>("GET", `/_alerting/watchers/${watcherId}`);
    expect(w.body.gateway_name).toBe("Cooling gateway");

    const t0 = Date.now() - 30_000;
    // Held exactly 2 s: nothing yet.
    await send([
      { tag_id: "temp", ts: t0, value: 84 },
      { tag_id: "temp", ts: t0 + 1000, value: 85 },
      { tag_id: "temp", ts: t0 + 2000, value: 86 },
    ]);
    // The hidden watcher's red band (>= 80) opens at once; the user's trigger must wait.
    await eventually(() => list(1), (l) => l.length === 1);
    expect((await list(1))[0]).toMatchObject({ severity: "High", state: "active", trigger_name: "Bearing e1 Temperature warning" });
    expect(await list(0)).toEqual([]);

    await send([{ tag_id: "temp", ts: t0 + 3000, value: 87.25 }]);
    const open = await eventually(() => list(0), (l) => l.length === 1);
    expect(open[0]).toMatchObject({ state: "active", severity: "High", trigger_id: "t1", watcher_name: "Bearing night watch", end_time: null });

    const [mail] = await smtp.waitFor(1, { to: "oncall-e1@example.com" });
    expect(mail.text).toContain("Value: 87.25 C (threshold >= 80 C)");
    expect(mail.text).toContain("Monitor: Bearing e1");
    const messages = await twilio.waitFor(2);
    expect(messages.map((m) => m.To).sort()).toEqual(["+447700900123", "whatsapp:+447700900123"]);
    expect(messages.every((m) => m.Body.includes("Temperature 87.25 C (threshold >= 80 C)"))).toBe(true);

    await send([{ tag_id: "temp", ts: t0 + 9000, value: 41 }]);
    const closed = await eventually(() => list(0), (l) => l[0]?.state === "closed");
    expect(closed[0]).toMatchObject({ state: "closed", duration: 9 });
    expect((await list(1))[0].state).toBe("closed");

    // Exactly one of each message, however the stream delivered the batches.
    await new Promise((r) => setTimeout(r, 1000));
    expect(smtp.received.filter((m) => m.to.includes("oncall-e1@example.com"))).toHaveLength(1);
    expect(twilio.messages).toHaveLength(2);
    const w2 = await t.http<{ total_alerts: number; latest_alert_date: number }>("GET", `/_alerting/watchers/${watcherId}`);
    expect(w2.body).toMatchObject({ total_alerts: 1, latest_alert_date: t0 });
  });
});
