/**
 * The domain counters at /metrics move with what the services really do: readings through the
 * ingestion API, an alert that a watcher opens and closes, and the notifications it sends (one
 * delivered at a real SMTP server on loopback, one failed for a user who does not exist, and an
 * SMS skipped because no Twilio account is configured).
 * Counted by exactly what happened, not at the countDomain helper.
 */
import { startTestNode, type TestNode } from "../helpers/node";
import { startSmtp, type TestSmtp } from "../helpers/smtp";
import { makePlace, watcherBody, type Place } from "../e2e/alerting-fixtures";
import { createEdge, eventually, ingest, MISSING, modbusSettings, modbusTag } from "../e2e/pipelines-fixtures";

let t: TestNode;
let smtp: TestSmtp;
let place: Place;
let gw: { id: string; ingest_key: string };

beforeAll(async () => {
  smtp = await startSmtp();
  t = await startTestNode({
    services: ["api", "auth", "config", "pipelines", "alerting", "notifier"],
    env: { HEALTH_PORT: "0", SMTP_URL: smtp.url },
  });
  place = await makePlace(t.http, "metrics");
  // A process gateway: no hidden system watcher, so the one watcher below is the only one that opens alerts.
  gw = await createEdge(t, {
    pipeline_name: "Metrics gateway",
    function_id: place.function_id,
    data_type: "Process",
    data_source: "Edge IOT Gateway",
    data_source_subtype: "Modbus RTU",
    settings: modbusSettings(),
    gateway_firmware: { current_version: "2.1.0", previous_version: "2.0.0" },
    tags: [modbusTag],
    registration: [{ monitor_id: place.monitor_id, slave_id: "1", registered_by_asset: false }],
  });
});
afterAll(async () => {
  await t?.stop();
  await smtp?.stop();
});

async function scrape(): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${t.node.health!.port}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** The sum of a counter's series whose labels include `labels`. */
function counter(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    const m = new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`).exec(line);
    if (!m) continue;
    const has = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => has[k] === v)) sum += Number(m[2]);
  }
  return sum;
}

async function send(readings: { monitor_id: string; tag_id: string; ts: number; value: number }[]): Promise<{ accepted: number; rejected: unknown[] }> {
  const res = await ingest<{ accepted: number; rejected: unknown[] }>(t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, { readings });
  expect(res.status).toBe(200);
  return res.body;
}

describe("domain metrics", () => {
  it("count accepted and rejected readings, opened and closed alerts, sent, failed and skipped notifications", async () => {
    const created = await t.http("POST", "/_alerting/watchers", {
      body: watcherBody(place, gw.id, { watcher_name: "Metrics watch" }, {
        notifyTo: { email: true, sms: true, whatsapp: false, users: [t.node.config.adminUsername, "ghost-metrics@example.com"] },
      }),
    });
    expect(created.status).toBe(200);

    const series = [
      ["ims_readings_ingested_total", { pipeline_id: gw.id }],
      ["ims_readings_rejected_total", { pipeline_id: gw.id }],
      ["ims_alerts_opened_total", { severity: "High" }],
      ["ims_alerts_closed_total", { severity: "High" }],
      ["ims_notifications_sent_total", { medium: "email" }],
      ["ims_notifications_failed_total", { medium: "email" }],
      ["ims_notifications_skipped_total", { medium: "sms" }],
    ] as const;
    const before = await scrape();
    const delta = (text: string) => Object.fromEntries(series.map(([name, labels]) => [name, counter(text, name, labels) - counter(before, name, labels)]));

    const m = place.monitor_id;
    const t0 = Date.now() - 30_000;
    // Held 2 s: nothing opens yet. The reading of a monitor the gateway does not feed is refused.
    expect(
      await send([
        { monitor_id: m, tag_id: "temp", ts: t0, value: 84 },
        { monitor_id: m, tag_id: "temp", ts: t0 + 1000, value: 85 },
        { monitor_id: m, tag_id: "temp", ts: t0 + 2000, value: 86 },
        { monitor_id: MISSING, tag_id: "temp", ts: t0 + 2000, value: 86 },
      ]),
    ).toMatchObject({ accepted: 3, rejected: [expect.anything()] });
    // Held past the trigger's minimum duration: the alert opens and notifies both users.
    expect(await send([{ monitor_id: m, tag_id: "temp", ts: t0 + 3000, value: 87 }])).toMatchObject({ accepted: 1 });
    await smtp.waitFor(1, { to: t.node.config.adminUsername });
    const opened = await eventually(
      async () => delta(await scrape()),
      (d) =>
        d.ims_alerts_opened_total === 1 &&
        d.ims_notifications_sent_total === 1 &&
        d.ims_notifications_failed_total === 1 &&
        d.ims_notifications_skipped_total === 1,
      200,
    );
    expect(opened).toMatchObject({ ims_readings_ingested_total: 4, ims_readings_rejected_total: 1, ims_alerts_closed_total: 0 });

    // Back below the threshold: the alert closes.
    expect(await send([{ monitor_id: m, tag_id: "temp", ts: t0 + 9000, value: 41 }])).toMatchObject({ accepted: 1 });
    await eventually(async () => delta(await scrape()), (d) => d.ims_alerts_closed_total === 1, 200);

    // Nothing counted twice, however the stream and the notifier's sweep went.
    await new Promise((r) => setTimeout(r, 1500));
    expect(delta(await scrape())).toEqual({
      ims_readings_ingested_total: 5,
      ims_readings_rejected_total: 1,
      ims_alerts_opened_total: 1,
      ims_alerts_closed_total: 1,
      ims_notifications_sent_total: 1,
      ims_notifications_failed_total: 1,
      ims_notifications_skipped_total: 1,
    });
  });
});
