/** Functions (ops 23-27) and assets (ops 11-16), over HTTP, as the SaaS admin. */
import { startTestNode, type TestNode } from "../helpers/node";
import { envelope } from "../helpers/envelope";

let t: TestNode;
let site: string;
let plant: string;
let otherPlant: string;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MISSING = "5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const err = envelope;

async function post(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.http<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config"] });
  site = await post("/_config/sites", {
    site_name: "Asset Site",
    location: "Lyon",
    timezone: "Europe/Paris",
    latitude: "45.76",
    edge_firmware: {},
  });
  plant = await post("/_config/plants", { plant_name: "Asset Plant", site_id: site });
  otherPlant = await post("/_config/plants", { plant_name: "Other Asset Plant", site_id: site });
});
afterAll(async () => {
  await t?.stop();
});

describe("functions", () => {
  it("creates a function (op 23), site_id derived or checked, and fetches it (op 26)", async () => {
    const res = await t.http<{ id: string }>("POST", "/_config/functions/", { body: { function_name: "Utilities", plant_id: plant } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.stringMatching(UUID) });
    const got = await t.http("GET", `/_config/functions/${res.body.id}`);
    expect(got.body).toEqual({
      function_id: res.body.id,
      function_name: "Utilities",
      plant_name: "Asset Plant",
      site_name: "Asset Site",
    });
    const withSite = await t.http("POST", "/_config/functions", { body: { function_name: "HVAC", plant_id: plant, site_id: site } });
    expect(withSite.status).toBe(200);
    const wrongSite = await t.http("POST", "/_config/functions", { body: { function_name: "X", plant_id: plant, site_id: MISSING } });
    expect(wrongSite.body).toEqual(err(400, `Invalid Plant ID: ${plant}`));
    const nullSite = await t.http("POST", "/_config/functions", { body: { function_name: "Null Site", plant_id: plant, site_id: null } });
    expect(nullSite.status).toBe(200);
  });

  it("answers Invalid Plant ID for an unknown plant and the name-exists message for a taken name", async () => {
    const unknown = await t.http("POST", "/_config/functions", { body: { function_name: "Y", plant_id: "p-1" } });
    expect(unknown.body).toEqual(err(400, "Invalid Plant ID: p-1"));
    await post("/_config/functions", { function_name: "Boilers", plant_id: plant });
    const dup = await t.http("POST", "/_config/functions", { body: { function_name: "boilers", plant_id: plant } });
    expect(dup.body).toEqual(err(400, "Function with name boilers already exists"));
    const elsewhere = await t.http("POST", "/_config/functions", { body: { function_name: "Boilers", plant_id: otherPlant } });
    expect(elsewhere.status).toBe(200);
    const missing = await t.http("POST", "/_config/functions", { body: { function_name: "Z" } });
    expect(missing.body).toEqual(err(400, "Insufficient inputs"));
  });

  it("gives one success and one name-exists message for two parallel creates of one name", async () => {
    const [a, b] = await Promise.all(
      [1, 2].map(() => t.http("POST", "/_config/functions", { body: { function_name: "Twin", plant_id: plant } })),
    );
    expect([a.status, b.status].sort()).toEqual([200, 400]);
    expect((a.status === 400 ? a : b).body).toEqual(err(400, "Function with name Twin already exists"));
  });

  it("answers 404 Data not found for a fetch of a function that does not exist", async () => {
    expect((await t.http("GET", `/_config/functions/${MISSING}`)).body).toEqual(err(404, "Data not found"));
    const res = await t.http("GET", "/_config/functions/garbage");
    expect(res.status).toBe(404);
    expect(res.body).toEqual(err(404, "Data not found"));
  });

  it("lists a plant's functions with monitor_count, asset monitors included (op 27)", async () => {
    const p = await post("/_config/plants", { plant_name: "Listing Plant", site_id: site });
    const f1 = await post("/_config/functions", { function_name: "Line 1", plant_id: p });
    const f2 = await post("/_config/functions", { function_name: "Line 2", plant_id: p });
    const asset = await post("/_config/assets", { asset_name: "Motor", function_id: f1, asset_category: "Rotating" });
    await post("/_config/monitors", { monitor_name: "M1", monitor_type: "energy-monitor", function_id: f1 });
    await post("/_config/monitors", { monitor_name: "M2", monitor_type: "condition-monitor", asset_id: asset });
    const res = await t.http("GET", `/_config/functions/_list?plant_id=${p}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { function_id: f1, function_name: "Line 1", plant_name: "Listing Plant", site_name: "Asset Site", monitor_count: 2 },
      { function_id: f2, function_name: "Line 2", plant_name: "Listing Plant", site_name: "Asset Site", monitor_count: 0 },
    ]);
    expect(res.headers.get("x-total-count")).toBe("2");
    expect((await t.http("GET", `/_config/functions/_list?plant_id=${p}&limit=1&offset=1`)).body).toEqual([
      expect.objectContaining({ function_id: f2 }),
    ]);
    expect((await t.http("GET", "/_config/functions/_list")).body).toEqual(err(400, "Insufficient inputs"));
    expect((await t.http("GET", `/_config/functions/_list?plant_id=${MISSING}`)).body).toEqual(err(400, `Invalid Plant ID: ${MISSING}`));
    expect((await t.http("GET", `/_config/functions/_list?plant_id=${p}&site_id=${site}`)).body).toEqual(err(400, "Excess inputs"));
  });

  it("renames a function (op 25): 404 Invalid Function when unknown, the name-exists message when taken", async () => {
    const f = await post("/_config/functions", { function_name: "Old Fn", plant_id: plant });
    await post("/_config/functions", { function_name: "Taken Fn", plant_id: plant });
    const ok = await t.http("PUT", `/_config/functions/${f}`, { body: { function_name: "New Fn", plant_id: plant } });
    expect(ok.body).toBe("Function updated successfully");
    expect((await t.http<{ function_name: string }>("GET", `/_config/functions/${f}`)).body.function_name).toBe("New Fn");
    const unknown = await t.http("PUT", `/_config/functions/${MISSING}`, { body: { function_name: "Q", plant_id: plant } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(err(404, "Invalid Function"));
    const taken = await t.http("PUT", `/_config/functions/${f}`, { body: { function_name: "TAKEN FN", plant_id: plant } });
    expect(taken.body).toEqual(err(400, "Function with name TAKEN FN already exists"));
    const moved = await t.http("PUT", `/_config/functions/${f}`, { body: { function_name: "New Fn", plant_id: otherPlant } });
    expect(moved.body).toEqual(err(400, `Invalid Plant ID: ${otherPlant}`));
    // The create body, site_id included, serves for an update too; a site_id not the function's is refused.
    const withSite = await t.http("PUT", `/_config/functions/${f}`, { body: { function_name: "Newer Fn", plant_id: plant, site_id: site } });
    expect(withSite.body).toBe("Function updated successfully");
    const wrongSite = await t.http("PUT", `/_config/functions/${f}`, { body: { function_name: "Q", plant_id: plant, site_id: MISSING } });
    expect(wrongSite.body).toEqual(err(400, `Invalid Plant ID: ${plant}`));
    expect((await t.http<{ function_name: string }>("GET", `/_config/functions/${f}`)).body.function_name).toBe("Newer Fn");
    const missing = await t.http("PUT", `/_config/functions/${f}`, { body: { function_name: "New Fn" } });
    expect(missing.body).toEqual(err(400, "Insufficient inputs"));
  });

  it("refuses to delete a function with monitors, assets or both (op 24), then deletes it", async () => {
    const f = await post("/_config/functions", { function_name: "Busy Fn", plant_id: plant });
    const monitor = await post("/_config/monitors", { monitor_name: "Fn Monitor", monitor_type: "process-monitor", function_id: f });
    expect((await t.http("DELETE", `/_config/functions/${f}`)).body).toEqual(err(400, "Cannot delete Function as Monitors are attached"));
    const asset = await post("/_config/assets", { asset_name: "Fn Asset", function_id: f, asset_category: "Static" });
    expect((await t.http("DELETE", `/_config/functions/${f}`)).body).toEqual(
      err(400, "Cannot delete Function as Monitors and Assets are attached"),
    );
    expect((await t.http("DELETE", `/_config/monitors/${monitor}`)).body).toBe("Monitor deleted successfully");
    expect((await t.http("DELETE", `/_config/functions/${f}`)).body).toEqual(err(400, "Cannot delete Function as Assets are attached"));
    expect((await t.http("DELETE", `/_config/assets/${asset}`)).body).toBe("Asset deleted successfully");
    const res = await t.http("DELETE", `/_config/functions/${f}`);
    expect(res.status).toBe(200);
    expect(res.body).toBe("Function deleted successfully");
    expect((await t.http("DELETE", `/_config/functions/${f}`)).body).toEqual(err(400, `Invalid Function ID: ${f}`));
  });

  it("resolves a function for other services (internal action)", async () => {
    const f = await post("/_config/functions", { function_name: "Resolved Fn", plant_id: plant });
    expect(await t.node.broker.call("config.functions.resolve", { function_id: f })).toEqual({
      function_id: f,
      function_name: "Resolved Fn",
      plant_id: plant,
      plant_name: "Asset Plant",
      site_id: site,
      site_name: "Asset Site",
      timezone: "Europe/Paris",
    });
    expect(await t.node.broker.call("config.functions.resolve", { function_id: MISSING })).toBeNull();
  });
});

describe("assets", () => {
  let fn: string;
  let otherFn: string;
  beforeAll(async () => {
    fn = await post("/_config/functions", { function_name: "Asset Fn", plant_id: plant });
    otherFn = await post("/_config/functions", { function_name: "Other Asset Fn", plant_id: plant });
  });

  const attributes = {
    machine_type: "pump",
    rotating_speed: 1480,
    manufacturer: "KSB",
    machine_model: "Etanorm",
    serial_no: "SN-1",
    phases: "3",
    kw: 15,
    frequency: 50,
    volts: 415,
    amp: 28.5,
  };

  it("creates an asset (op 11) and fetches it with derived names and Yes/No (op 14)", async () => {
    const res = await t.http<{ id: string }>("POST", "/_config/assets/", {
      body: { asset_name: "Pump A", function_id: fn, asset_category: "Rotating", is_critical: "yes", attributes },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.stringMatching(UUID) });
    const got = await t.http("GET", `/_config/assets/${res.body.id}`);
    expect(got.body).toEqual({
      asset_id: res.body.id,
      asset_name: "Pump A",
      function_name: "Asset Fn",
      plant_name: "Asset Plant",
      site_name: "Asset Site",
      attributes,
      asset_category: "Rotating",
      is_critical: "Yes",
    });
  });

  it("defaults is_critical to No and accepts the plant and site of its function", async () => {
    const id = await post("/_config/assets", { asset_name: "Tank", function_id: fn, plant_id: plant, site_id: site, asset_category: "Static" });
    expect((await t.http("GET", `/_config/assets/${id}`)).body).toMatchObject({ is_critical: "No", attributes: {} });
    // null reads as left out (docs/architecture.md, Decisions): the default, not a fault.
    const nullCritical = await post("/_config/assets", { asset_name: "Null Critical", function_id: fn, asset_category: "Static", is_critical: null });
    expect((await t.http("GET", `/_config/assets/${nullCritical}`)).body).toMatchObject({ is_critical: "No" });
  });

  it("answers Invalid Asset data for a bad value, an unknown attribute, a foreign function or plant", async () => {
    const base = { asset_name: "Bad", function_id: fn, asset_category: "Rotating" };
    const bad = [
      { ...base, is_critical: "maybe" },
      { ...base, attributes: { rotating_speed: "fast" } },
      { ...base, attributes: { colour: "red" } },
      { ...base, function_id: MISSING },
      { ...base, function_id: "nope" },
      { ...base, plant_id: otherPlant },
      { ...base, site_id: MISSING },
      { ...base, shape: "round" },
    ];
    for (const body of bad) {
      const res = await t.http("POST", "/_config/assets", { body });
      expect({ body, answer: res.body }).toEqual({ body, answer: err(400, "Invalid Asset data") });
    }
    const missing = await t.http("POST", "/_config/assets", { body: { asset_name: "Bad", function_id: fn } });
    expect(missing.body).toEqual(err(400, "Insufficient inputs"));
  });

  it("refuses text holding U+0000 (PostgreSQL cannot store it) as invalid input, not with a 500", async () => {
    const asset = await t.http("POST", "/_config/assets", { body: { asset_name: "Nul\u0000Pump", function_id: fn, asset_category: "Rotating" } });
    expect(asset.body).toEqual(err(400, "Invalid Asset data"));
    const fnName = await t.http("POST", "/_config/functions", { body: { function_name: "Nul\u0000Fn", plant_id: plant } });
    expect(fnName.body).toEqual(err(400, "Invalid input: function_name"));
    const monitor = await t.http("POST", "/_config/monitors", {
      body: { monitor_name: "Nul Monitor", monitor_type: "energy-monitor", function_id: fn, attributes: { notes: ["\u0000"] } },
    });
    expect(monitor.body).toEqual(err(400, "Invalid input: attributes.notes[0]"));
    const filter = await t.http("GET", "/_config/assets/_list?asset_category=a%00b");
    expect(filter.body).toEqual(err(400, "Invalid input: asset_category"));
  });

  it("refuses a taken name within the function, also for two parallel creates", async () => {
    await post("/_config/assets", { asset_name: "Fan 1", function_id: fn, asset_category: "Rotating" });
    const dup = await t.http("POST", "/_config/assets", { body: { asset_name: "FAN 1", function_id: fn, asset_category: "Rotating" } });
    expect(dup.body).toEqual(err(400, "Asset with name FAN 1 already exists"));
    const elsewhere = await t.http("POST", "/_config/assets", { body: { asset_name: "Fan 1", function_id: otherFn, asset_category: "Rotating" } });
    expect(elsewhere.status).toBe(200);
    const both = await Promise.all(
      [1, 2].map(() => t.http("POST", "/_config/assets", { body: { asset_name: "Twin Asset", function_id: fn, asset_category: "Rotating" } })),
    );
    expect(both.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(both.find((r) => r.status === 400)?.body).toEqual(err(400, "Asset with name Twin Asset already exists"));
  });

  it("updates an asset (op 13): is_critical required, attributes replaced, the name-exists and Invalid Asset ID messages", async () => {
    const id = await post("/_config/assets", { asset_name: "Compressor", function_id: fn, asset_category: "Rotating", attributes: { kw: 30 } });
    await post("/_config/assets", { asset_name: "Blocked", function_id: fn, asset_category: "Rotating" });
    const body = { asset_name: "Compressor 2", function_id: fn, asset_category: "Stationary", is_critical: "YES", attributes: { volts: 400 } };
    const ok = await t.http("PUT", `/_config/assets/${id}`, { body });
    expect(ok.status).toBe(200);
    expect(ok.body).toBe("Asset updated successfully");
    expect((await t.http("GET", `/_config/assets/${id}`)).body).toMatchObject({
      asset_name: "Compressor 2",
      asset_category: "Stationary",
      is_critical: "Yes",
      attributes: { volts: 400 },
    });
    const { is_critical: _omit, ...noCritical } = body;
    expect((await t.http("PUT", `/_config/assets/${id}`, { body: noCritical })).body).toEqual(err(400, "Insufficient inputs"));
    expect((await t.http("PUT", `/_config/assets/${id}`, { body: { ...body, asset_name: "blocked" } })).body).toEqual(
      err(400, "Asset with name blocked already exists"),
    );
    expect((await t.http("PUT", `/_config/assets/${MISSING}`, { body })).body).toEqual(err(400, `Invalid Asset ID: ${MISSING}`));
    expect((await t.http("PUT", `/_config/assets/${id}`, { body: { ...body, function_id: otherFn } })).body).toEqual(
      err(400, "Invalid Asset data"),
    );
  });

  it("answers Invalid Asset ID for a fetch of an asset that does not exist", async () => {
    expect((await t.http("GET", `/_config/assets/${MISSING}`)).body).toEqual(err(400, `Invalid Asset ID: ${MISSING}`));
    expect((await t.http("GET", "/_config/assets/x")).body).toEqual(err(400, "Invalid Asset ID: x"));
  });

  it("lists and counts assets by function, category and criticality, with monitor_count (ops 15, 16)", async () => {
    const f = await post("/_config/functions", { function_name: "Filter Fn", plant_id: plant });
    const a1 = await post("/_config/assets", { asset_name: "R1", function_id: f, asset_category: "Rotating", is_critical: "yes" });
    const a2 = await post("/_config/assets", { asset_name: "R2", function_id: f, asset_category: "Rotating" });
    const a3 = await post("/_config/assets", { asset_name: "S1", function_id: f, asset_category: "Static", is_critical: "yes" });
    await post("/_config/monitors", { monitor_name: "On R1 a", monitor_type: "condition-monitor", asset_id: a1 });
    await post("/_config/monitors", { monitor_name: "On R1 b", monitor_type: "condition-monitor", asset_id: a1 });
    const row = (asset_id: string, asset_name: string, asset_category: string, is_critical: string, monitor_count: number) => ({
      asset_id,
      asset_name,
      is_critical,
      asset_category,
      function_name: "Filter Fn",
      plant_name: "Asset Plant",
      site_name: "Asset Site",
      monitor_count,
    });
    const all = await t.http("GET", `/_config/assets/_list?function_id=${f}`);
    expect(all.body).toEqual([row(a1, "R1", "Rotating", "Yes", 2), row(a2, "R2", "Rotating", "No", 0), row(a3, "S1", "Static", "Yes", 0)]);
    expect(all.headers.get("x-total-count")).toBe("3");
    const q = async (query: string) => (await t.http("GET", `/_config/assets/_list?function_id=${f}&${query}`)).body;
    expect(await q("asset_category=Rotating")).toEqual([row(a1, "R1", "Rotating", "Yes", 2), row(a2, "R2", "Rotating", "No", 0)]);
    expect(await q("asset_category=All")).toHaveLength(3);
    expect(await q("is_critical=Yes")).toEqual([row(a1, "R1", "Rotating", "Yes", 2), row(a3, "S1", "Static", "Yes", 0)]);
    expect(await q("is_critical=No&asset_category=Rotating")).toEqual([row(a2, "R2", "Rotating", "No", 0)]);
    expect(await q("limit=1&offset=2")).toEqual([row(a3, "S1", "Static", "Yes", 0)]);
    expect(await q("is_critical=sometimes")).toEqual(err(400, "Invalid input: is_critical"));
    expect(await q("colour=red")).toEqual(err(400, "Excess inputs"));

    const count = async (query: string) => (await t.http("GET", `/_config/assets/_count?function_id=${f}&${query}`)).body;
    expect(await count("")).toBe(3);
    expect(await count("asset_category=Static")).toBe(1);
    expect(await count("is_critical=Yes")).toBe(2);
    expect(await count("is_critical=No&asset_category=Static")).toBe(0);
    expect(await count("limit=1")).toEqual(err(400, "Excess inputs"));
    expect((await t.http<number>("GET", "/_config/assets/_count")).body).toBeGreaterThanOrEqual(3);
    expect((await t.http("GET", `/_config/assets/_list?function_id=${MISSING}`)).body).toEqual([]);
  });

  it("refuses to delete an asset with monitors (op 12), then deletes it", async () => {
    const a = await post("/_config/assets", { asset_name: "Watched", function_id: fn, asset_category: "Rotating" });
    const m = await post("/_config/monitors", { monitor_name: "Watcher of Watched", monitor_type: "condition-monitor", asset_id: a });
    expect((await t.http("DELETE", `/_config/assets/${a}`)).body).toEqual(err(400, "Cannot delete the Asset as Monitors are attached"));
    await t.http("DELETE", `/_config/monitors/${m}`);
    const res = await t.http("DELETE", `/_config/assets/${a}`);
    expect(res.status).toBe(200);
    expect(res.body).toBe("Asset deleted successfully");
    expect((await t.http("DELETE", `/_config/assets/${a}`)).body).toEqual(err(400, `Invalid Asset ID: ${a}`));
  });

  it("resolves an asset for other services (internal action)", async () => {
    const a = await post("/_config/assets", { asset_name: "Resolved", function_id: fn, asset_category: "Rotating", attributes: { rotating_speed: 1500 } });
    expect(await t.node.broker.call("config.assets.resolve", { asset_id: a })).toEqual({
      asset_id: a,
      asset_name: "Resolved",
      asset_category: "Rotating",
      is_critical: "No",
      attributes: { rotating_speed: 1500 },
      function_id: fn,
      function_name: "Asset Fn",
      plant_id: plant,
      site_id: site,
    });
  });
});
