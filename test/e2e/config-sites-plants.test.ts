/** Sites and plants (ops 28-37) and server time (op 78), over HTTP, as the SaaS admin. */
import { randomUUID } from "node:crypto";
import { startTestNode, type TestNode } from "../helpers/node";
import { envelope } from "../helpers/envelope";
import { pipelinesEvents } from "../../services/pipelines/contract";

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config"] });
});
afterAll(async () => {
  await t?.stop();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const err = envelope;

function siteBody(name: string, extra: Record<string, unknown> = {}) {
  return {
    site_name: name,
    location: "Pune",
    timezone: "Asia/Kolkata",
    latitude: "18.52",
    edge_firmware: { current_version: "1.2.0", previous_version: "1.1.0" },
    ...extra,
  };
}

async function createSite(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await t.http<{ id: string }>("POST", "/_config/sites", { body: siteBody(name, extra) });
  expect(res.status).toBe(200);
  return res.body.id;
}

async function createPlant(site_id: string, plant_name: string): Promise<string> {
  const res = await t.http<{ id: string }>("POST", "/_config/plants", { body: { plant_name, site_id } });
  expect(res.status).toBe(200);
  return res.body.id;
}

describe("sites", () => {
  it("creates a site (op 28) and fetches it (op 31) with the spec's fields", async () => {
    const res = await t.http<{ id: string }>("POST", "/_config/sites/", { body: siteBody("North Works") });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.stringMatching(UUID) });
    const got = await t.http("GET", `/_config/sites/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      site_id: res.body.id,
      site_name: "North Works",
      location: "Pune",
      latitude: "18.52",
      longitude: "",
      timezone: "Asia/Kolkata",
      retention_period: 180,
      edge_firmware: { current_version: "1.2.0", previous_version: "1.1.0" },
    });
  });

  it("refuses a second site of the same name, whatever its case", async () => {
    await createSite("Dup Site");
    const res = await t.http("POST", "/_config/sites", { body: siteBody("dup site") });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(err(400, "Site with name dup site already exists. Please choose a different name."));
  });

  it("gives one success and one name-exists message for two parallel creates of one name", async () => {
    const [a, b] = await Promise.all([
      t.http("POST", "/_config/sites", { body: siteBody("Race Site") }),
      t.http("POST", "/_config/sites", { body: siteBody("Race Site") }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 400]);
    const failed = a.status === 400 ? a : b;
    expect(failed.body).toEqual(err(400, "Site with name Race Site already exists. Please choose a different name."));
  });

  it("needs a latitude or a longitude", async () => {
    const res = await t.http("POST", "/_config/sites", { body: siteBody("No Place", { latitude: undefined }) });
    expect(res.body).toEqual(err(400, "Either of latitude or longitude has to be specified"));
    const longOnly = await t.http("POST", "/_config/sites", { body: siteBody("Long Only", { latitude: undefined, longitude: "73.85" }) });
    expect(longOnly.status).toBe(200);
  });

  it("reads a null coordinate as not given, on create and on update", async () => {
    const bothNull = await t.http("POST", "/_config/sites", { body: siteBody("Null Place", { latitude: null, longitude: null }) });
    expect(bothNull.body).toEqual(err(400, "Either of latitude or longitude has to be specified"));
    const res = await t.http<{ id: string }>("POST", "/_config/sites", { body: siteBody("Null Lat", { latitude: null, longitude: "73.85" }) });
    expect(res.status).toBe(200);
    const clear = await t.http("PUT", `/_config/sites/${res.body.id}`, { body: { location: "Pune", retention_period: 30, longitude: null } });
    expect(clear.body).toEqual(err(400, "Either of latitude or longitude has to be specified"));
    const move = await t.http("PUT", `/_config/sites/${res.body.id}`, {
      body: { location: "Pune", retention_period: 30, latitude: "18.5", longitude: null },
    });
    expect(move.status).toBe(200);
    const got = await t.http("GET", `/_config/sites/${res.body.id}`);
    expect(got.body).toMatchObject({ latitude: "18.5", longitude: "" });
  });

  it("answers Insufficient inputs for a missing field and names a bad or unknown one", async () => {
    const missing = await t.http("POST", "/_config/sites", { body: { site_name: "x", location: "y" } });
    expect(missing.body).toEqual(err(400, "Insufficient inputs"));
    const zone = await t.http("POST", "/_config/sites", { body: siteBody("Bad Zone", { timezone: "Mars/Olympus" }) });
    expect(zone.body).toEqual(err(400, "Invalid input: timezone"));
    const unknown = await t.http("POST", "/_config/sites", { body: siteBody("Extra", { colour: "red" }) });
    expect(unknown.body).toEqual(err(400, "Invalid input: colour"));
    const retention = await t.http("POST", "/_config/sites", { body: siteBody("Neg", { retention_period: -5 }) });
    expect(retention.body).toEqual(err(400, "Invalid input: retention_period"));
    const huge = await t.http("POST", "/_config/sites", { body: siteBody("x".repeat(100_000)) });
    expect(huge.status).toBe(400);
  });

  it("lists sites with edge_firmware.latest_version and X-Total-Count (op 32), paged by limit and offset", async () => {
    const id = await createSite("Listed Site", { retention_period: 365 });
    const res = await t.http<Record<string, unknown>[]>("GET", "/_config/sites/_list");
    expect(res.status).toBe(200);
    const row = res.body.find((s) => s.site_id === id);
    expect(row).toEqual({
      site_id: id,
      site_name: "Listed Site",
      location: "Pune",
      latitude: "18.52",
      longitude: "",
      timezone: "Asia/Kolkata",
      retention_period: 365,
      edge_firmware: { current_version: "1.2.0", previous_version: "1.1.0", latest_version: "1.0.0" },
    });
    const total = Number(res.headers.get("x-total-count"));
    expect(total).toBe(res.body.length);
    const page = await t.http<Record<string, unknown>[]>("GET", "/_config/sites/_list?limit=1&offset=1");
    expect(page.body).toEqual([res.body[1]]);
    expect(page.headers.get("x-total-count")).toBe(String(total));
    const excess = await t.http("GET", "/_config/sites/_list?colour=red");
    expect(excess.body).toEqual(err(400, "Excess inputs"));
    const badLimit = await t.http("GET", "/_config/sites/_list?limit=0");
    expect(badLimit.body).toEqual(err(400, "Invalid input: limit"));
  });

  it("updates a site (op 30), moving the old firmware down and renaming when the name is free", async () => {
    const id = await createSite("Before Rename");
    await createSite("Taken Name");
    const res = await t.http("PUT", `/_config/sites/${id}`, {
      body: { location: "Mumbai", retention_period: 90, edge_firmware: { current_version: "2.0.0" }, site_name: "After Rename" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toBe("Site updated successfully");
    const got = await t.http<Record<string, unknown>>("GET", `/_config/sites/${id}`);
    expect(got.body).toMatchObject({
      site_name: "After Rename",
      location: "Mumbai",
      retention_period: 90,
      timezone: "Asia/Kolkata",
      edge_firmware: { current_version: "2.0.0", previous_version: "1.2.0" },
    });
    const list = await t.http<{ site_id: string; site_name: string }[]>("GET", "/_config/sites/_list");
    expect(list.body.find((s) => s.site_id === id)?.site_name).toBe("After Rename");
    const taken = await t.http("PUT", `/_config/sites/${id}`, { body: { location: "x", retention_period: 1, site_name: "TAKEN NAME" } });
    expect(taken.body).toEqual(err(400, "Site with name TAKEN NAME already exists. Please choose a different name."));
    // A listed site sent back as it came (latest_version included) is accepted; latest_version stays the service's.
    const listed = list.body.find((s) => s.site_id === id) as unknown as Record<string, unknown>;
    const again = await t.http("PUT", `/_config/sites/${id}`, { body: { ...listed, location: "Thane" } });
    expect(again.body).toBe("Site updated successfully");
    expect((await t.http<Record<string, unknown>>("GET", `/_config/sites/${id}`)).body).toMatchObject({
      location: "Thane",
      edge_firmware: { current_version: "2.0.0", previous_version: "1.2.0" },
    });
    const missing = await t.http("PUT", `/_config/sites/${id}`, { body: { location: "x" } });
    expect(missing.body).toEqual(err(400, "Insufficient inputs"));
  });

  it("answers Invalid Site for an update of a site that does not exist", async () => {
    const body = { location: "x", retention_period: 30 };
    const unknown = await t.http("PUT", "/_config/sites/7b0e4a52-8f0e-4c55-9a53-2f1c3e0b9d11", { body });
    expect(unknown.body).toEqual(err(400, "Invalid Site"));
    const malformed = await t.http("PUT", "/_config/sites/not-an-id", { body });
    expect(malformed.body).toEqual(err(400, "Invalid Site"));
  });

  it("answers Invalid Site ID for a fetch or delete of a site that does not exist", async () => {
    const got = await t.http("GET", "/_config/sites/7b0e4a52-8f0e-4c55-9a53-2f1c3e0b9d11");
    expect(got.body).toEqual(err(400, "Invalid Site ID: 7b0e4a52-8f0e-4c55-9a53-2f1c3e0b9d11"));
    const malformed = await t.http("GET", "/_config/sites/abc");
    expect(malformed.body).toEqual(err(400, "Invalid Site ID: abc"));
    const del = await t.http("DELETE", "/_config/sites/abc");
    expect(del.body).toEqual(err(400, "Invalid Site ID: abc"));
  });

  it("refuses to delete a site with plants (op 29), then deletes it once they are gone", async () => {
    const site = await createSite("Doomed Site");
    const plant = await createPlant(site, "Doomed Plant");
    const refused = await t.http("DELETE", `/_config/sites/${site}`);
    expect(refused.body).toEqual(err(400, "Cannot delete Site as Plants exist on it"));
    expect((await t.http("DELETE", `/_config/plants/${plant}`)).body).toBe("Plant deleted successfully");
    const res = await t.http("DELETE", `/_config/sites/${site}`);
    expect(res.status).toBe(200);
    expect(res.body).toBe("Site deleted successfully");
    expect((await t.http("GET", `/_config/sites/${site}`)).body).toEqual(err(400, `Invalid Site ID: ${site}`));
  });

  it("answers 405 for a method a fetch path does not serve", async () => {
    const res = await t.http("POST", "/_config/sites/7b0e4a52-8f0e-4c55-9a53-2f1c3e0b9d11", { body: {} });
    expect(res.body).toEqual(err(405, "This method is not allowed"));
  });

  it("resolves a site for other services with its time zone and retention (internal action)", async () => {
    const id = await createSite("Resolved Site", { timezone: "Europe/Berlin", retention_period: 30 });
    const resolved = await t.node.broker.call("config.sites.resolve", { site_id: id });
    expect(resolved).toEqual({ site_id: id, site_name: "Resolved Site", timezone: "Europe/Berlin", retention_period: 30 });
    expect(await t.node.broker.call("config.sites.resolve", { site_id: "nope" })).toBeNull();
  });
});

describe("plants", () => {
  let site: string;
  let otherSite: string;
  beforeAll(async () => {
    site = await createSite("Plant Site");
    otherSite = await createSite("Other Plant Site");
  });

  it("creates a plant (op 33) and fetches it with its site's name (op 36)", async () => {
    const res = await t.http<{ id: string }>("POST", "/_config/plants/", { body: { plant_name: "Press Shop", site_id: site } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.stringMatching(UUID) });
    const got = await t.http("GET", `/_config/plants/${res.body.id}`);
    expect(got.body).toEqual({ plant_id: res.body.id, plant_name: "Press Shop", site_id: site, site_name: "Plant Site" });
  });

  it("refuses a duplicate name within a site but not across sites", async () => {
    await createPlant(site, "Paint Shop");
    const dup = await t.http("POST", "/_config/plants", { body: { plant_name: "PAINT SHOP", site_id: site } });
    expect(dup.body).toEqual(err(400, "Plant with name PAINT SHOP already exists."));
    const elsewhere = await t.http("POST", "/_config/plants", { body: { plant_name: "Paint Shop", site_id: otherSite } });
    expect(elsewhere.status).toBe(200);
  });

  it("answers Invalid Site ID for a plant on a site that does not exist", async () => {
    const res = await t.http("POST", "/_config/plants", { body: { plant_name: "Nowhere", site_id: "x-1" } });
    expect(res.body).toEqual(err(400, "Invalid Site ID: x-1"));
    const missing = await t.http("POST", "/_config/plants", { body: { plant_name: "Nowhere" } });
    expect(missing.body).toEqual(err(400, "Insufficient inputs"));
  });

  it("lists a site's plants with function_count and pipeline_count (op 37)", async () => {
    const s = await createSite("Counting Site");
    const a = await createPlant(s, "Plant A");
    const b = await createPlant(s, "Plant B");
    for (const name of ["F1", "F2"]) {
      expect((await t.http("POST", "/_config/functions", { body: { function_name: name, plant_id: a } })).status).toBe(200);
    }
    const res = await t.http("GET", `/_config/plants/_list?site_id=${s}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { plant_id: a, plant_name: "Plant A", site_id: s, site_name: "Counting Site", function_count: 2, pipeline_count: 0 },
      { plant_id: b, plant_name: "Plant B", site_id: s, site_name: "Counting Site", function_count: 0, pipeline_count: 0 },
    ]);
    expect(res.headers.get("x-total-count")).toBe("2");
    expect((await t.http("GET", "/_config/plants/_list")).body).toEqual(err(400, "Insufficient inputs"));
    expect((await t.http("GET", `/_config/plants/_list?site_id=${s}&x=1`)).body).toEqual(err(400, "Excess inputs"));
    expect((await t.http("GET", "/_config/plants/_list?site_id=zzz")).body).toEqual(err(400, "Invalid Site ID: zzz"));
  });

  it("renames a plant (op 35) and refuses a taken name, an unknown plant and a change of site", async () => {
    const id = await createPlant(site, "Old Name");
    await createPlant(site, "Busy Name");
    const ok = await t.http("PUT", `/_config/plants/${id}`, { body: { plant_name: "New Name", site_id: site } });
    expect(ok.body).toBe("Plant updated successfully");
    expect((await t.http<{ plant_name: string }>("GET", `/_config/plants/${id}`)).body.plant_name).toBe("New Name");
    const taken = await t.http("PUT", `/_config/plants/${id}`, { body: { plant_name: "busy name", site_id: site } });
    expect(taken.body).toEqual(err(400, "Plant with name busy name already exists."));
    const unknown = await t.http("PUT", "/_config/plants/qq", { body: { plant_name: "Z", site_id: site } });
    expect(unknown.body).toEqual(err(400, "Invalid Plant ID: qq"));
    const moved = await t.http("PUT", `/_config/plants/${id}`, { body: { plant_name: "New Name", site_id: otherSite } });
    expect(moved.body).toEqual(err(400, `Invalid Site ID: ${otherSite}`));
  });

  it("answers Invalid Plant ID for a fetch of a plant that does not exist", async () => {
    const res = await t.http("GET", "/_config/plants/3a1f0c9e-1111-4222-8333-944455556666");
    expect(res.body).toEqual(err(400, "Invalid Plant ID: 3a1f0c9e-1111-4222-8333-944455556666"));
  });

  it("refuses to delete a plant with assets, then with functions, then deletes it (op 34)", async () => {
    const plant = await createPlant(site, "Full Plant");
    const fn = await t.http<{ id: string }>("POST", "/_config/functions", { body: { function_name: "Cooling", plant_id: plant } });
    const asset = await t.http<{ id: string }>("POST", "/_config/assets", {
      body: { asset_name: "Pump 1", function_id: fn.body.id, asset_category: "Rotating" },
    });
    expect(asset.status).toBe(200);
    expect((await t.http("DELETE", `/_config/plants/${plant}`)).body).toEqual(err(400, "Cannot delete Plant as Assets exist on it"));
    expect((await t.http("DELETE", `/_config/assets/${asset.body.id}`)).body).toBe("Asset deleted successfully");
    expect((await t.http("DELETE", `/_config/plants/${plant}`)).body).toEqual(err(400, "Cannot delete Plant as Functions exist on it"));
    expect((await t.http("DELETE", `/_config/functions/${fn.body.id}`)).body).toBe("Function deleted successfully");
    const res = await t.http("DELETE", `/_config/plants/${plant}`);
    expect(res.status).toBe(200);
    expect(res.body).toBe("Plant deleted successfully");
    expect((await t.http("DELETE", `/_config/plants/${plant}`)).body).toEqual(err(400, `Invalid Plant ID: ${plant}`));
  });
});

describe("plants and the pipelines service", () => {
  // The pipelines service tells config where its pipelines are and when one first received events
  // (`pipelines.pipeline.*`, services/pipelines/contract.ts). A stand-in on the real broker sends
  // them; `counts.set` makes a plant's pipelines and events what it names.
  const placed = new Map<string, { site_id: string; ids: string[] }>();
  const counts = {
    async set(plant_id: string, want: { pipelines: number; events: number }) {
      const before = placed.get(plant_id);
      const site_id = before?.site_id ?? (await t.http<{ site_id: string }>("GET", `/_config/plants/${plant_id}`)).body.site_id;
      for (const pipeline_id of before?.ids ?? []) {
        await pipelinesEvents.emit(t.node.broker, "pipelines.pipeline.deleted", { pipeline_id, site_id, plant_id, at: Date.now() });
      }
      const ids = Array.from({ length: want.pipelines }, () => randomUUID());
      for (const pipeline_id of ids) await pipelinesEvents.emit(t.node.broker, "pipelines.pipeline.created", { pipeline_id, site_id, plant_id, at: Date.now() });
      if (want.events > 0) await pipelinesEvents.emit(t.node.broker, "pipelines.pipeline.received", { pipeline_id: ids[0]! });
      placed.set(plant_id, { site_id, ids });
    },
  };
  beforeAll(async () => {
    await t.node.broker.createService({ name: "pipelines" });
    await t.node.broker.waitForServices(["pipelines"]);
  });
  afterAll(async () => {
    const svc = t.node.broker.getLocalService("pipelines");
    if (svc) await t.node.broker.destroyService(svc);
  });

  it("shows pipeline_count and refuses to delete a plant with events or pipelines", async () => {
    const s = await createSite("Pipeline Site");
    const busy = await createPlant(s, "Busy Plant");
    const quiet = await createPlant(s, "Quiet Plant");
    await counts.set(busy, { pipelines: 3, events: 7 });
    const list = await t.http<{ plant_id: string; pipeline_count: number }[]>("GET", `/_config/plants/_list?site_id=${s}`);
    expect(list.body.map((p) => [p.plant_id, p.pipeline_count])).toEqual([
      [busy, 3],
      [quiet, 0],
    ]);
    expect((await t.http("DELETE", `/_config/plants/${busy}`)).body).toEqual(err(400, "Cannot delete Plant as Events exist on it"));
    await counts.set(busy, { pipelines: 3, events: 0 });
    expect((await t.http("DELETE", `/_config/plants/${busy}`)).body).toEqual(err(400, "Cannot delete Plant as Pipelines exist on it"));
    await counts.set(busy, { pipelines: 0, events: 0 });
    expect((await t.http("DELETE", `/_config/plants/${busy}`)).body).toBe("Plant deleted successfully");
  });
});

describe("server time (op 78)", () => {
  it("answers UTC seconds with a fraction", async () => {
    const before = Date.now() / 1000;
    const res = await t.http<number>("GET", "/_config/server-time");
    expect(res.status).toBe(200);
    expect(res.body).toBeGreaterThanOrEqual(before - 1);
    expect(res.body).toBeLessThanOrEqual(Date.now() / 1000 + 1);
  });
});
