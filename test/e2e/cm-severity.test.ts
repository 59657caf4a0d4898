/**
 * ISO 20816-3 severity (docs/api-tour.md, "Severity"): the machine class from the asset's
 * attributes, `GET /_cm/assets/<id>/_severity`, and `zone` in ops 68, 73 and 74; readings and a
 * capture through cm's ingestion actions, as the streams feed them.
 */
import { randomUUID } from "node:crypto";
import { envelope } from "../helpers/envelope";
import { startTestNode, type TestNode } from "../helpers/node";

let t: TestNode;
const ids = { site: "", plant: "", fn: "", large: "", medium: "", bare: "", m1: "", m2: "", m3: "", plain: "" };
const TS = 1_767_225_600_000;

async function create(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.http<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

const asset = (asset_name: string, attributes: Record<string, unknown>) =>
  t.http<{ id: string }>("POST", "/_config/assets", { body: { asset_name, function_id: ids.fn, asset_category: "Rotating", attributes } });

async function monitor(asset_id: string, monitor_name: string, tags: { tag_id: string; tag_name: string; tag_unit: string }[], monitor_type = "condition-monitor") {
  const id = await create("/_config/monitors", { monitor_name, monitor_type, asset_id });
  const put = await t.http("PUT", `/_config/monitors/${id}`, {
    body: { monitor_name, monitor_type, tags: tags.map((tag) => ({ ...tag, tag_desc: "", thresholds: {} })), specs: {}, attributes: {} },
  });
  expect(put.status).toBe(200);
  return id;
}

const readings = (monitor_id: string, values: Record<string, number>, ts: number) =>
  t.node.broker.call("cm.ingest.readings", { readings: Object.entries(values).map(([tag_id, value]) => ({ monitor_id, tag_id, ts, value })) });

const severity = (asset_id: string) => t.http<Record<string, unknown>>("GET", `/_cm/assets/${asset_id}/_severity`);

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "cm"] });
  ids.site = await create("/_config/sites", {
    site_name: "Lyon",
    location: "Lyon, FR",
    timezone: "Europe/Paris",
    latitude: "45.76",
    longitude: "4.84",
    edge_firmware: { current_version: "1.0.0", previous_version: "" },
  });
  ids.plant = await create("/_config/plants", { plant_name: "Blowers", site_id: ids.site });
  ids.fn = await create("/_config/functions", { function_name: "Aeration", plant_id: ids.plant });
  ids.large = (await asset("Blower B-1", { kw: 450, rotating_speed: 1490 })).body.id;
  ids.medium = (await asset("Pump P-2", { kw: 450, machine_group: 2, foundation: "flexible" })).body.id;
  ids.bare = (await asset("Fan F-3", {})).body.id;
  const velocity = { tag_id: "vrms", tag_name: "velocity_rms", tag_unit: "mm/s" };
  ids.m1 = await monitor(ids.large, "B-1 DE", [velocity, { tag_id: "temp", tag_name: "temperature", tag_unit: "C" }]);
  ids.m2 = await monitor(ids.large, "B-1 NDE", [{ ...velocity, tag_id: "v2", tag_name: "velocity_nde" }]);
  ids.m3 = await monitor(ids.medium, "P-2 DE", [velocity]);
  ids.plain = await monitor(ids.bare, "F-3 temp", [{ tag_id: "temp", tag_name: "temperature", tag_unit: "C" }]);
});

afterAll(async () => {
  await t?.stop();
});

describe("asset attributes", () => {
  it.each([
    ["machine_group 3", { machine_group: 3 }],
    ["machine_group as text", { machine_group: "1" }],
    ["foundation soft", { foundation: "soft" }],
  ])("refuses %s with Invalid Asset data", async (_, attributes) => {
    expect((await asset(`Bad ${randomUUID()}`, attributes)).body).toEqual(envelope(400, "Invalid Asset data"));
  });

  it("keeps machine_group and foundation as given", async () => {
    const res = await t.http<{ attributes: Record<string, unknown> }>("GET", `/_config/assets/${ids.medium}`);
    expect(res.body.attributes).toMatchObject({ machine_group: 2, foundation: "flexible", kw: 450 });
  });
});

describe("GET /_cm/assets/<id>/_severity", () => {
  it("lists each velocity tag with a null zone before any reading", async () => {
    const res = await severity(ids.large);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      standard: "ISO 20816-3",
      machine_group: 1,
      foundation: "rigid",
      boundaries: { ab: 2.3, bc: 4.5, cd: 7.1 },
      tags: expect.arrayContaining([
        { monitor_id: ids.m1, tag: "velocity_rms", value: null, zone: null, timestamp: null },
        { monitor_id: ids.m2, tag: "velocity_nde", value: null, zone: null, timestamp: null },
      ]),
      zone: null,
    });
    // The temperature tag is not a velocity tag.
    expect(res.body.tags).toHaveLength(2);
  });

  it("derives group 1 from kw and reads each tag's zone, a boundary in the upper zone, the worst overall", async () => {
    await readings(ids.m1, { vrms: 4.5, temp: 80 }, TS);
    await readings(ids.m2, { v2: 2.29 }, TS + 1000);
    const res = await severity(ids.large);
    const tags = res.body.tags as Record<string, unknown>[];
    expect(tags.find((x) => x.monitor_id === ids.m1)).toEqual({ monitor_id: ids.m1, tag: "velocity_rms", value: 4.5, zone: "C", timestamp: TS });
    expect(tags.find((x) => x.monitor_id === ids.m2)).toEqual({ monitor_id: ids.m2, tag: "velocity_nde", value: 2.29, zone: "A", timestamp: TS + 1000 });
    expect(res.body.zone).toBe("C");
    await readings(ids.m2, { v2: 7.1 }, TS + 2000);
    expect((await severity(ids.large)).body.zone).toBe("D");
  });

  it("takes machine_group and foundation from the attributes over kw", async () => {
    await readings(ids.m3, { vrms: 4.4 }, TS);
    const res = await severity(ids.medium);
    expect(res.body).toMatchObject({ machine_group: 2, foundation: "flexible", boundaries: { ab: 2.3, bc: 4.5, cd: 7.1 }, zone: "B" });
  });

  it("answers tags [] and zone null without a velocity tag", async () => {
    await readings(ids.plain, { temp: 30 }, TS);
    expect((await severity(ids.bare)).body).toEqual({
      standard: "ISO 20816-3",
      machine_group: 2,
      foundation: "rigid",
      boundaries: { ab: 1.4, bc: 2.8, cd: 4.5 },
      tags: [],
      zone: null,
    });
  });

  it("answers Invalid Asset Id for an unknown asset and Excess Inputs for another key", async () => {
    expect((await severity(randomUUID())).body).toEqual(envelope(400, "Invalid Asset Id"));
    expect((await severity("nope")).body).toEqual(envelope(400, "Invalid Asset Id"));
    expect((await t.http("GET", `/_cm/assets/${ids.large}/_severity?x=1`)).body).toEqual(envelope(400, "Excess Inputs"));
  });
});

describe("zone in ops 68, 73 and 74", () => {
  it("adds the worst zone to the asset and its list item, the other fields as before", async () => {
    const one = await t.http<Record<string, unknown>>("GET", `/_cm/assets/${ids.large}`);
    expect(one.body).toMatchObject({ asset_id: ids.large, asset_name: "Blower B-1", asset_faults: [], zone: "D" });
    const list = await t.http<Record<string, unknown>[]>("GET", `/_cm/assets/_list?function_id=${ids.fn}`);
    const byId = new Map(list.body.map((a) => [a.asset_id, a]));
    expect(byId.get(ids.large)).toEqual(one.body);
    expect(byId.get(ids.medium)).toMatchObject({ zone: "B" });
    expect(byId.get(ids.bare)).toMatchObject({ zone: null });
  });

  it("adds each monitor's zone to the fault summary", async () => {
    const samples = Array.from({ length: 2048 }, (_, i) => Math.sin(2 * Math.PI * 25 * (i / 2048)));
    await t.node.broker.call("cm.ingest.waveform", { monitor_id: ids.m1, tag: "vibration", axis: "x", ts: TS, sample_rate_hz: 2048, samples });
    const res = await t.http<Record<string, unknown>[]>("GET", `/_cm/fft/_summary?asset_id=${ids.large}`);
    expect(res.body).toEqual([{ monitor_name: "B-1 DE", summary: expect.any(String), Timestamp: new Date(TS).toISOString(), zone: "C", evidence: null }]);
  });
});
