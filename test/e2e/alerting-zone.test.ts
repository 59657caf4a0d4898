/**
 * A watcher on an ISO 20816-3 zone (docs/api-tour.md, "Severity"): `zone >= C` on a velocity tag
 * opens an alert when a reading ingested through the gateway's API crosses into zone C of the
 * asset's machine class, and closes when it is back below; a zone on another tag or with another
 * comparison is refused.
 */
import { startTestNode, type TestNode } from "../helpers/node";
import { envelope } from "../helpers/envelope";
import { gatewayBody, idFrom, makePlace, watcherBody, type Place } from "./alerting-fixtures";
import { createEdge, eventually, ingest } from "./pipelines-fixtures";

let t: TestNode;
let place: Place;
let gw: { id: string; ingest_key: string };

interface Alert {
  state: string;
  trigger_id: string;
  watcher_name: string;
}

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "pipelines", "alerting"] });
  place = await makePlace(t.http, "z1");
  // Group 1, rigid (kw ≥ 300): zone C from 4.5 mm/s; an asset without attributes (group 2) would be in C from 2.8.
  const put = await t.http("PUT", `/_config/assets/${place.asset_id}`, {
    body: { asset_name: "Pump z1", function_id: place.function_id, asset_category: "Rotating", is_critical: "no", attributes: { kw: 400 } },
  });
  expect(put.status).toBe(200);
  gw = await createEdge(t, gatewayBody(place, "Vibration gateway", "Condition"));
});
afterAll(async () => {
  await t?.stop();
});

const zoneTrigger = (condition: Record<string, unknown> = {}) => ({
  minimum_duration: "0s",
  condition: [{ comparison: ">=", monitor_id: place.monitor_id, tag_id: "vib", threshold: "zone:C", ...condition }],
});

async function send(readings: { ts: number; value: number }[]) {
  const res = await ingest<{ accepted: number }>(t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, {
    readings: readings.map((r) => ({ monitor_id: place.monitor_id, tag_id: "vib", ...r })),
  });
  expect(res.status).toBe(200);
}

const alerts = async () => (await t.http<Alert[]>("GET", `/_alerting/alerts/_list?function_id=${place.function_id}&is_hidden=0`)).body;

describe("a watcher on zone >= C", () => {
  it("refuses a zone on a tag that is not a velocity tag, or with another comparison", async () => {
    const threshold = envelope(400, "Invalid input: triggers[0].condition[0].threshold");
    const onTemp = await t.http("POST", "/_alerting/watchers", { body: watcherBody(place, gw.id, {}, zoneTrigger({ tag_id: "temp" })) });
    expect(onTemp.body).toEqual(threshold);
    const above = await t.http("POST", "/_alerting/watchers", { body: watcherBody(place, gw.id, {}, zoneTrigger({ comparison: ">" })) });
    expect(above.body).toEqual(threshold);
  });

  it("opens an alert when an ingested velocity reading crosses into zone C, and closes it back in B", async () => {
    const created = await t.http("POST", "/_alerting/watchers", { body: watcherBody(place, gw.id, { watcher_name: "Zone watch" }, zoneTrigger()) });
    expect(created.status).toBe(200);
    const watcher = await t.http<{ triggers: { condition: { threshold: string }[] }[] }>("GET", `/_alerting/watchers/${idFrom(created.body)}`);
    expect(watcher.body.triggers[0].condition[0].threshold).toBe("zone:C");

    const t0 = Date.now() - 60_000;
    // 4.4 mm/s is zone B of group 1 (it would be D of group 2): no alert.
    await send([{ ts: t0, value: 3.0 }, { ts: t0 + 1000, value: 4.4 }]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await alerts()).toEqual([]);

    await send([{ ts: t0 + 2000, value: 4.5 }]);
    const open = await eventually(alerts, (l) => l.length === 1);
    expect(open[0]).toMatchObject({ state: "active", trigger_id: "t1", watcher_name: "Zone watch" });

    await send([{ ts: t0 + 3000, value: 4.49 }]);
    const closed = await eventually(alerts, (l) => l[0]?.state === "closed");
    expect(closed).toHaveLength(1);
  });
});
