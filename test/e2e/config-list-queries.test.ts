/**
 * No N+1: the asset list (op 15) and the monitor count (op 22) ask PostgreSQL a fixed number of
 * queries whatever the number of assets and monitors, counted on the config service's
 * DataSource for a read that misses the cache. Also: a repeated list is answered from the
 * cache with no query, and the list the gateway sends from the cache is the list as stored.
 */
import type { DataSource } from "typeorm";
import { startTestNode, type TestNode } from "../helpers/node";

let t: TestNode;
let plantId: string;

async function post(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.http<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** A function with `assets` assets of `monitors` monitors each. */
async function functionWith(name: string, assets: number, monitors: number): Promise<string> {
  const fn = await post("/_config/functions", { function_name: name, plant_id: plantId });
  await Promise.all(
    Array.from({ length: assets }, async (_, i) => {
      const asset = await post("/_config/assets", { asset_name: `${name} asset ${i}`, function_id: fn, asset_category: "Motor" });
      for (let j = 0; j < monitors; j++) {
        await post("/_config/monitors", { monitor_name: `${name} monitor ${i}.${j}`, monitor_type: "energy-monitor", asset_id: asset });
      }
    }),
  );
  return fn;
}

/** The audit trail's work, which runs beside requests on the same DataSource (its outbox's drain, the log's appends): not the list's. */
const TRAIL = /stream_outbox|audit_log|pg_advisory_xact_lock/;

/** The SQL statements the config service sends while `request` runs, the audit trail's background work left out. */
async function queriesOf(request: () => Promise<unknown>): Promise<string[]> {
  const db = (t.node.broker.getLocalService("config") as unknown as { db: DataSource }).db;
  const seen: string[] = [];
  const spy = jest.spyOn(db, "query").mockImplementation(function (this: DataSource, ...args: Parameters<DataSource["query"]>) {
    if (!TRAIL.test(String(args[0]))) seen.push(String(args[0]).replace(/\s+/g, " ").slice(0, 60));
    return (jest.requireActual("typeorm").DataSource.prototype.query as DataSource["query"]).apply(this, args);
  });
  try {
    await request();
  } finally {
    spy.mockRestore();
  }
  return seen;
}

/** Starts a new cache generation, so that the next read misses the cache. */
const write = () => post("/_config/functions", { function_name: `bump ${Math.random()}`, plant_id: plantId });

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config"] });
  const site = await post("/_config/sites", { site_name: "Q Site", location: "x", timezone: "UTC", latitude: "1", edge_firmware: {} });
  plantId = await post("/_config/plants", { plant_name: "Q Plant", site_id: site });
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

it("lists assets with one query, whether the function holds 2 assets or 40", async () => {
  const small = await functionWith("small", 2, 1);
  const large = await functionWith("large", 40, 3);
  const counts: Record<string, number> = {};
  for (const [name, fn, n] of [["small", small, 2], ["large", large, 40]] as const) {
    await write();
    let body: { monitor_count: number }[] = [];
    const queries = await queriesOf(async () => {
      body = (await t.http<{ monitor_count: number }[]>("GET", `/_config/assets/_list?function_id=${fn}`)).body;
    });
    expect(body).toHaveLength(n);
    expect(body.every((a) => a.monitor_count === (name === "small" ? 1 : 3))).toBe(true);
    counts[name] = queries.length;
  }
  expect(counts).toEqual({ small: 1, large: 1 });
}, 120_000);

it("counts monitors with one query, whatever their number", async () => {
  await write();
  let total: unknown;
  const queries = await queriesOf(async () => {
    total = (await t.http("GET", "/_config/monitors/_count")).body;
  });
  expect(total).toBe(2 * 1 + 40 * 3);
  expect(queries).toHaveLength(1);
});

it("loads a list once for parallel requests that miss the cache", async () => {
  await write();
  const queries = await queriesOf(() => Promise.all(Array.from({ length: 8 }, () => t.http("GET", "/_config/assets/_list"))));
  expect(queries).toHaveLength(1);
});

it("answers a repeated list from the cache with no query, and the same body", async () => {
  const path = "/_config/assets/_list";
  await write();
  const first = await t.http<unknown[]>("GET", path);
  let again: unknown;
  const queries = await queriesOf(async () => {
    again = (await t.http("GET", path)).body;
  });
  expect(queries).toEqual([]);
  expect(again).toEqual(first.body);
  expect(first.body).toHaveLength(42);
  // Paged: the cached list is sliced, and the total is still the whole list's.
  const page = await t.http<unknown[]>("GET", `${path}?limit=5&offset=40`);
  expect(page.body).toEqual(first.body.slice(40, 45));
  expect(page.headers.get("x-total-count")).toBe("42");
});
