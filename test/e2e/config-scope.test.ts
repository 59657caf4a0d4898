/**
 * The cross-tenant matrix of the configuration (ops 11-37): a plant-admin of plant A1, a
 * site-admin of site B, a general-user without the Configuration module and one with it.
 * Out of scope answers exactly like missing; lists and counts never include it; no name of
 * the other tenant appears in any response.
 */
import { httpClient, startTestNode, type HttpClient, type TestNode } from "../helpers/node";
import { insertUsers } from "../helpers/users";
import { envelope } from "../helpers/envelope";

let t: TestNode;
const err = envelope;

interface Tenant {
  site: string;
  plant: string;
  fn: string;
  asset: string;
  monitor: string;
}

async function post(path: string, body: Record<string, unknown>, client: HttpClient = t.http): Promise<string> {
  const res = await client<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

async function tenant(site: string, plantName: string, prefix: string): Promise<Tenant> {
  const plant = await post("/_config/plants", { plant_name: plantName, site_id: site });
  const fn = await post("/_config/functions", { function_name: `${prefix} Function`, plant_id: plant });
  const asset = await post("/_config/assets", { asset_name: `${prefix} Asset`, function_id: fn, asset_category: "Rotating" });
  const monitor = await post("/_config/monitors", { monitor_name: `${prefix} Monitor`, monitor_type: "energy-monitor", asset_id: asset });
  return { site, plant, fn, asset, monitor };
}

const siteBody = (site_name: string) => ({
  site_name,
  location: "x",
  timezone: "UTC",
  latitude: "1",
  edge_firmware: {},
});

let A1: Tenant;
let A2: Tenant;
let B1: Tenant;
const PASSWORD = "TenantPass123";
const users = {
  plantAdminA: "plant.admin.a@example.com",
  siteAdminB: "site.admin.b@example.com",
  noConfig: "viewer.noconfig@example.com",
  reader: "viewer.config@example.com",
};
const as = (username: string) => httpClient(t.baseUrl, { username, password: PASSWORD });

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config"] });
  const siteA = await post("/_config/sites", siteBody("Alpha Site"));
  const siteB = await post("/_config/sites", siteBody("Bravo Site"));
  A1 = await tenant(siteA, "Alpha One", "Alpha1");
  A2 = await tenant(siteA, "Alpha Two", "Alpha2");
  B1 = await tenant(siteB, "Bravo One", "Bravo1");
  await insertUsers(t.db.url, [
    { username: users.plantAdminA, password: PASSWORD, user_type: "plant-admin", site_id: siteA, plant_id: A1.plant },
    { username: users.siteAdminB, password: PASSWORD, user_type: "site-admin", site_id: siteB },
    { username: users.noConfig, password: PASSWORD, user_type: "general-user", site_id: siteA, plant_id: A1.plant, modules: ["Alerting"] },
    { username: users.reader, password: PASSWORD, user_type: "general-user", site_id: siteA, plant_id: A1.plant, modules: ["Configuration"] },
  ]);
  // The admin reads every list first, so a cache shared across scopes would show here.
  for (const path of ["/_config/sites/_list", `/_config/plants/_list?site_id=${siteA}`, "/_config/assets/_list", "/_config/monitors/_list", "/_config/assets/_count", "/_config/monitors/_count"]) {
    expect((await t.http("GET", path)).status).toBe(200);
  }
});
afterAll(async () => {
  await t?.stop();
});

/** Every answer a tenant-bound caller gets about another tenant's records (its site's own too, unless shared). */
function outOfScope(x: Tenant, opts: { sameSite?: boolean; readsOnly?: boolean } = {}) {
  const cases = [
    { method: "GET", path: `/_config/sites/${x.site}`, answer: err(400, `Invalid Site ID: ${x.site}`) },
    { method: "GET", path: `/_config/plants/${x.plant}`, answer: err(400, `Invalid Plant ID: ${x.plant}`) },
    { method: "GET", path: `/_config/plants/_list?site_id=${x.site}`, answer: err(400, `Invalid Site ID: ${x.site}`) },
    { method: "GET", path: `/_config/functions/${x.fn}`, answer: err(404, "Data not found") },
    { method: "GET", path: `/_config/functions/_list?plant_id=${x.plant}`, answer: err(400, `Invalid Plant ID: ${x.plant}`) },
    { method: "PUT", path: `/_config/functions/${x.fn}`, body: { function_name: "Hijack", plant_id: x.plant }, answer: err(404, "Invalid Function") },
    { method: "DELETE", path: `/_config/functions/${x.fn}`, answer: err(400, `Invalid Function ID: ${x.fn}`) },
    { method: "POST", path: "/_config/functions", body: { function_name: "Intruder", plant_id: x.plant }, answer: err(400, `Invalid Plant ID: ${x.plant}`) },
    { method: "GET", path: `/_config/assets/${x.asset}`, answer: err(400, `Invalid Asset ID: ${x.asset}`) },
    {
      method: "PUT",
      path: `/_config/assets/${x.asset}`,
      body: { asset_name: "Hijack", function_id: x.fn, asset_category: "Rotating", is_critical: "no" },
      answer: err(400, `Invalid Asset ID: ${x.asset}`),
    },
    { method: "DELETE", path: `/_config/assets/${x.asset}`, answer: err(400, `Invalid Asset ID: ${x.asset}`) },
    { method: "POST", path: "/_config/assets", body: { asset_name: "Intruder", function_id: x.fn, asset_category: "Rotating" }, answer: err(400, "Invalid Asset data") },
    { method: "GET", path: `/_config/assets/_list?function_id=${x.fn}`, answer: [] },
    { method: "GET", path: `/_config/assets/_count?function_id=${x.fn}`, answer: 0 },
    { method: "GET", path: `/_config/monitors/${x.monitor}`, answer: err(400, `Invalid Monitor ID: ${x.monitor}`) },
    {
      method: "PUT",
      path: `/_config/monitors/${x.monitor}`,
      body: { monitor_name: "Hijack", monitor_type: "energy-monitor", tags: [], specs: {}, attributes: {} },
      answer: err(400, `Invalid Monitor ID: ${x.monitor}`),
    },
    { method: "DELETE", path: `/_config/monitors/${x.monitor}`, answer: err(400, `Invalid Monitor ID: ${x.monitor}`) },
    { method: "POST", path: "/_config/monitors", body: { monitor_name: "Intruder", monitor_type: "energy-monitor", function_id: x.fn }, answer: err(400, "Error creating Monitor") },
    { method: "POST", path: "/_config/monitors", body: { monitor_name: "Intruder", monitor_type: "energy-monitor", asset_id: x.asset }, answer: err(400, "Error creating Monitor") },
    { method: "GET", path: `/_config/monitors/_list?function_id=${x.fn}`, answer: [] },
    { method: "GET", path: `/_config/monitors/_count?asset_id=${x.asset}`, answer: 0 },
  ];
  return cases.filter(
    (c) => !(opts.sameSite && /\/sites\/|site_id=/.test(c.path)) && !(opts.readsOnly && c.method !== "GET"),
  );
}

async function expectAll(client: HttpClient, cases: ReturnType<typeof outOfScope>, forbidden: RegExp) {
  for (const c of cases) {
    const res = await client(c.method, c.path, { body: c.body });
    expect({ request: `${c.method} ${c.path}`, answer: res.body }).toEqual({ request: `${c.method} ${c.path}`, answer: c.answer });
    expect(JSON.stringify(res.body)).not.toMatch(forbidden);
  }
}

async function listNames(client: HttpClient): Promise<string> {
  const bodies = await Promise.all(
    ["/_config/sites/_list", "/_config/assets/_list", "/_config/monitors/_list"].map(async (p) => (await client("GET", p)).body),
  );
  return JSON.stringify(bodies);
}

describe("plant-admin of plant A1", () => {
  it("sees only its site, its plant and what hangs on it", async () => {
    const http = as(users.plantAdminA);
    const sites = await http<{ site_id: string }[]>("GET", "/_config/sites/_list");
    expect(sites.body.map((s) => s.site_id)).toEqual([A1.site]);
    const plants = await http<{ plant_id: string }[]>("GET", `/_config/plants/_list?site_id=${A1.site}`);
    expect(plants.body.map((p) => p.plant_id)).toEqual([A1.plant]);
    expect((await http<{ asset_id: string }[]>("GET", "/_config/assets/_list")).body.map((a) => a.asset_id)).toEqual([A1.asset]);
    expect((await http("GET", "/_config/assets/_count")).body).toBe(1);
    expect((await http<{ monitor_id: string }[]>("GET", "/_config/monitors/_list")).body.map((m) => m.monitor_id)).toEqual([A1.monitor]);
    expect((await http("GET", "/_config/monitors/_count")).body).toBe(1);
    expect((await http("GET", `/_config/functions/${A1.fn}`)).status).toBe(200);
    expect(await listNames(http)).not.toMatch(/Bravo|Alpha2|Alpha Two/);
  });

  it("gets the not-exists answer for plant A2 of its own site and for site B", async () => {
    const http = as(users.plantAdminA);
    await expectAll(http, outOfScope(A2, { sameSite: true }), /Alpha2|Alpha Two/);
    await expectAll(http, outOfScope(B1), /Bravo/);
  });

  it("writes functions, assets and monitors in its plant, but not sites or plants (403)", async () => {
    const http = as(users.plantAdminA);
    const fn = await post("/_config/functions", { function_name: "PA Function", plant_id: A1.plant }, http);
    const asset = await post("/_config/assets", { asset_name: "PA Asset", function_id: fn, asset_category: "Static" }, http);
    await post("/_config/monitors", { monitor_name: "PA Monitor", monitor_type: "process-monitor", asset_id: asset }, http);
    const forbidden = err(403, "Unauthorized operation");
    expect((await http("POST", "/_config/sites", { body: siteBody("PA Site") })).body).toEqual(forbidden);
    expect((await http("PUT", `/_config/sites/${A1.site}`, { body: { location: "y", retention_period: 10 } })).body).toEqual(forbidden);
    expect((await http("DELETE", `/_config/sites/${A1.site}`)).body).toEqual(forbidden);
    expect((await http("POST", "/_config/plants", { body: { plant_name: "PA Plant", site_id: A1.site } })).body).toEqual(forbidden);
    expect((await http("PUT", `/_config/plants/${A1.plant}`, { body: { plant_name: "Renamed", site_id: A1.site } })).body).toEqual(forbidden);
    expect((await http("DELETE", `/_config/plants/${A1.plant}`)).body).toEqual(forbidden);
  });
});

describe("site-admin of site B", () => {
  it("sees only site B and gets the not-exists answer for everything of site A", async () => {
    const http = as(users.siteAdminB);
    expect((await http<{ site_id: string }[]>("GET", "/_config/sites/_list")).body.map((s) => s.site_id)).toEqual([B1.site]);
    expect((await http<{ asset_id: string }[]>("GET", "/_config/assets/_list")).body.map((a) => a.asset_id)).toEqual([B1.asset]);
    expect((await http("GET", "/_config/monitors/_count")).body).toBe(1);
    expect(await listNames(http)).not.toMatch(/Alpha/);
    await expectAll(http, outOfScope(A1), /Alpha/);
    await expectAll(http, outOfScope(A2), /Alpha/);
    expect((await http("PUT", `/_config/sites/${A1.site}`, { body: { location: "y", retention_period: 10 } })).body).toEqual(
      err(400, "Invalid Site"),
    );
    expect((await http("POST", "/_config/plants", { body: { plant_name: "Sneaky", site_id: A1.site } })).body).toEqual(
      err(400, `Invalid Site ID: ${A1.site}`),
    );
  });

  it("administers its own site and its plants, but cannot create or delete a site (403)", async () => {
    const http = as(users.siteAdminB);
    expect((await http("PUT", `/_config/sites/${B1.site}`, { body: { location: "Bravo Town", retention_period: 200 } })).body).toBe(
      "Site updated successfully",
    );
    const plant = await post("/_config/plants", { plant_name: "Bravo Two", site_id: B1.site }, http);
    expect((await http("DELETE", `/_config/plants/${plant}`)).body).toBe("Plant deleted successfully");
    expect((await http("POST", "/_config/sites", { body: siteBody("Bravo Annex") })).body).toEqual(err(403, "Unauthorized operation"));
    expect((await http("DELETE", `/_config/sites/${B1.site}`)).body).toEqual(err(403, "Unauthorized operation"));
  });
});

describe("general-user", () => {
  it("without the Configuration module gets 401 on every configuration operation", async () => {
    const http = as(users.noConfig);
    const denied = err(401, "You do not have access to this module");
    const ops: [string, string, Record<string, unknown>?][] = [
      ["POST", "/_config/sites", siteBody("Nope")],
      ["GET", "/_config/sites/_list"],
      ["GET", `/_config/sites/${A1.site}`],
      ["PUT", `/_config/sites/${A1.site}`, { location: "x", retention_period: 1 }],
      ["DELETE", `/_config/sites/${A1.site}`],
      ["POST", "/_config/plants", { plant_name: "Nope", site_id: A1.site }],
      ["GET", `/_config/plants/_list?site_id=${A1.site}`],
      ["GET", `/_config/plants/${A1.plant}`],
      ["PUT", `/_config/plants/${A1.plant}`, { plant_name: "Nope", site_id: A1.site }],
      ["DELETE", `/_config/plants/${A1.plant}`],
      ["POST", "/_config/functions", { function_name: "Nope", plant_id: A1.plant }],
      ["GET", `/_config/functions/_list?plant_id=${A1.plant}`],
      ["GET", `/_config/functions/${A1.fn}`],
      ["PUT", `/_config/functions/${A1.fn}`, { function_name: "Nope", plant_id: A1.plant }],
      ["DELETE", `/_config/functions/${A1.fn}`],
      ["POST", "/_config/assets", { asset_name: "Nope", function_id: A1.fn, asset_category: "Rotating" }],
      ["GET", "/_config/assets/_list"],
      ["GET", "/_config/assets/_count"],
      ["GET", `/_config/assets/${A1.asset}`],
      ["PUT", `/_config/assets/${A1.asset}`, { asset_name: "Nope", function_id: A1.fn, asset_category: "Rotating", is_critical: "no" }],
      ["DELETE", `/_config/assets/${A1.asset}`],
      ["POST", "/_config/monitors", { monitor_name: "Nope", monitor_type: "energy-monitor", function_id: A1.fn }],
      ["GET", "/_config/monitors/_list"],
      ["GET", "/_config/monitors/_count"],
      ["GET", `/_config/monitors/${A1.monitor}`],
      ["PUT", `/_config/monitors/${A1.monitor}`, { monitor_name: "Nope", monitor_type: "x", tags: [], specs: {}, attributes: {} }],
      ["DELETE", `/_config/monitors/${A1.monitor}`],
      ["GET", "/_config/server-time"],
    ];
    for (const [method, path, body] of ops) {
      const res = await http(method, path, { body });
      expect({ request: `${method} ${path}`, status: res.status, answer: res.body }).toEqual({
        request: `${method} ${path}`,
        status: 401,
        answer: denied,
      });
    }
  });

  it("with the Configuration module reads its plant but may write nothing (403)", async () => {
    const http = as(users.reader);
    expect((await http("GET", `/_config/assets/${A1.asset}`)).status).toBe(200);
    expect((await http<{ asset_id: string }[]>("GET", `/_config/assets/_list?function_id=${A1.fn}`)).body.map((a) => a.asset_id)).toEqual([
      A1.asset,
    ]);
    await expectAll(http, outOfScope(B1, { readsOnly: true }), /Bravo/);
    const forbidden = err(403, "Unauthorized operation");
    expect((await http("POST", "/_config/functions", { body: { function_name: "Nope", plant_id: A1.plant } })).body).toEqual(forbidden);
    expect((await http("DELETE", `/_config/assets/${A1.asset}`)).body).toEqual(forbidden);
    expect(
      (await http("PUT", `/_config/monitors/${A1.monitor}`, { body: { monitor_name: "Nope", monitor_type: "x", tags: [], specs: {}, attributes: {} } }))
        .body,
    ).toEqual(forbidden);
    expect((await http("POST", "/_config/monitors", { body: { monitor_name: "Nope", monitor_type: "x", function_id: A1.fn } })).body).toEqual(forbidden);
  });
});
