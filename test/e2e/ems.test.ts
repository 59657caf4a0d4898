/**
 * Energy metrics over HTTP (operations 75-77), fed through the ems service's ingestion action
 * the way the readings stream feeds it. The site is in Europe/Berlin and the data spans the
 * spring daylight-saving change of 30 March 2025 (a 23-hour day).
 */
import { randomUUID } from "node:crypto";
import { Client } from "pg";
import { increasesByBucket, type Rollup } from "../../services/ems/rollup";
import { bucketStarts } from "../../services/ems/time";
import { startTestNode, type TestNode } from "../helpers/node";
import { eventually } from "./pipelines-fixtures";
import { envelope } from "../helpers/envelope";

let t: TestNode;
const ids = { site: "", plant: "", fn: "", asset: "", a: "", b: "", c: "", process: "", lab: "", d: "" };

type Err = { error: { status: number; message: string; field?: string } };
const err = (status: number, message: string, field?: string): Err => envelope(status, message, field);

const T0 = Date.parse("2025-03-29T23:00:00Z"); // 30 March 00:00 in Berlin (+01:00)
const Q = 15 * 60_000;
const STEPS = 200; // 201 counter readings, 15 minutes apart: T0 .. T0 + 50 h
const FROM = "2025-03-29T23:00:00Z";
const TO = "2025-04-01T02:00:00Z";

const energyTags = [
  { tag_id: "kwh", tag_name: "Energy", tag_desc: "Active energy", tag_unit: "kWh" },
  { tag_id: "kw", tag_name: "Power", tag_desc: "Active power", tag_unit: "kW" },
  { tag_id: "v", tag_name: "Voltage", tag_desc: "Voltage L-L", tag_unit: "V" },
  { tag_id: "a", tag_name: "Current", tag_desc: "Current L1", tag_unit: "A" },
];

async function create(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.http<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

async function monitor(name: string, type: string, parent: Record<string, string>): Promise<string> {
  const id = await create("/_config/monitors", { monitor_name: name, monitor_type: type, ...parent });
  const put = await t.http("PUT", `/_config/monitors/${id}`, {
    body: { monitor_name: name, monitor_type: type, tags: energyTags, specs: {}, attributes: {} },
  });
  if (put.status !== 200) throw new Error(`monitor ${name}: ${JSON.stringify(put.body)}`);
  return id;
}

/** A counter rising `perStep` kWh every quarter hour, and kW, V, A swinging around 50, 400 and 72. */
function series(monitor_id: string, perStep: number) {
  const readings: { monitor_id: string; tag_id: string; ts: number; value: number }[] = [];
  for (let i = 0; i <= STEPS; i++) {
    const ts = T0 + i * Q;
    readings.push({ monitor_id, tag_id: "kwh", ts, value: 10_000 + i * perStep });
    if (i < STEPS) {
      const s = i % 2 ? 1 : -1;
      readings.push({ monitor_id, tag_id: "kw", ts, value: 50 + 10 * s });
      readings.push({ monitor_id, tag_id: "v", ts, value: 400 + 2 * s });
      readings.push({ monitor_id, tag_id: "a", ts, value: 72 + 2 * s });
    }
  }
  return readings;
}

const ingest = (readings: unknown[]) => t.node.broker.call<{ applied: number }, unknown>("ems.ingest.readings", { readings });

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "ems"] });
  ids.site = await create("/_config/sites", {
    site_name: "Berlin",
    location: "Berlin, DE",
    timezone: "Europe/Berlin",
    latitude: "52.52",
    longitude: "13.40",
    edge_firmware: { current_version: "1.0.0", previous_version: "" },
  });
  ids.plant = await create("/_config/plants", { plant_name: "Main plant", site_id: ids.site });
  ids.fn = await create("/_config/functions", { function_name: "Utilities", plant_id: ids.plant });
  ids.asset = await create("/_config/assets", { asset_name: "Compressor C-1", function_id: ids.fn, asset_category: "Rotating" });
  ids.a = await monitor("Feeder A", "energy-monitor", { function_id: ids.fn });
  ids.b = await monitor("Feeder B", "energy-monitor", { function_id: ids.fn });
  ids.c = await monitor("Compressor meter", "energy-monitor", { asset_id: ids.asset });
  ids.process = await monitor("Flow meter", "process-monitor", { function_id: ids.fn });
  ids.lab = await create("/_config/functions", { function_name: "Lab", plant_id: ids.plant });
  ids.d = await monitor("Lab meter", "energy-monitor", { function_id: ids.lab });
  const a = series(ids.a, 5); // +1,000 kWh
  expect(await ingest(a)).toEqual({ applied: a.length });
  await ingest(series(ids.b, 15)); // +3,000 kWh
  await ingest(series(ids.c, 5)); // +1,000 kWh
  // Not an energy monitor: ignored.
  expect(await ingest(series(ids.process, 100))).toEqual({ applied: 0 });
});

afterAll(async () => {
  await t?.stop();
});

describe("energy metrics of a monitor (op 75)", () => {
  it("a counter rising 1,000 kWh is 1 MWh; means of kW, V and A; share of the function", async () => {
    const res = await t.http("GET", `/_ems/monitor/${ids.a}?from=${FROM}&to=${TO}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      monitor_id: ids.a,
      monitor_name: "Feeder A",
      function_id: ids.fn,
      function_name: "Utilities",
      plant_id: ids.plant,
      plant_name: "Main plant",
      site_id: ids.site,
      site_name: "Berlin",
      total_consumption: 1,
      percent_of_total: 20,
      total_energy: 5,
      energy_unit: "MWh",
      current_unit: "A",
      power_unit: "KW",
      Voltage: 400,
      voltage_unit: "V",
      Current: 72,
      Power: 50,
    });
  });

  it("counts a redelivered batch once", async () => {
    expect(await ingest(series(ids.a, 5))).toEqual({ applied: 0 });
    const res = await t.http<{ total_consumption: number }>("GET", `/_ems/monitor/${ids.a}?from=${FROM}&to=${TO}`);
    expect(res.body.total_consumption).toBe(1);
  });

  it("answers zeros for a range without readings", async () => {
    const res = await t.http<Record<string, number>>("GET", `/_ems/monitor/${ids.a}?from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z`);
    expect(res.body).toMatchObject({ total_consumption: 0, percent_of_total: 0, total_energy: 0, Power: 0, Voltage: 0, Current: 0 });
  });

  it("answers the spec's messages", async () => {
    const q = `from=${FROM}&to=${TO}`;
    expect((await t.http("GET", `/_ems/monitor/nope?${q}`)).body).toEqual(err(400, "Monitor id is invalid"));
    expect((await t.http("GET", `/_ems/monitor/${randomUUID()}?${q}`)).body).toEqual(err(400, "Monitor id is invalid"));
    expect((await t.http("GET", `/_ems/monitor/${ids.process}?${q}`)).body).toEqual(err(400, "Monitor id is invalid"));
    expect((await t.http("GET", `/_ems/monitor/${ids.a}?from=${FROM}`)).body).toEqual(err(400, "Insufficient date inputs"));
    expect((await t.http("GET", `/_ems/monitor/${ids.a}?from=30/03/2025&to=${TO}`)).body).toEqual(err(400, "Invalid date format"));
    expect((await t.http("GET", `/_ems/monitor/${ids.a}?from=${TO}&to=${FROM}`)).body).toEqual(err(400, "Invalid date format"));
    const admin = { user: { username: "admin@localhost", user_type: "saas-admin", site_id: null, plant_id: null, modules: [] } };
    await expect(t.node.broker.call("ems.monitor", { from: FROM, to: TO }, { meta: admin })).rejects.toMatchObject({
      code: 400,
      message: "Monitor id not given",
    });
    // Over HTTP: the path without its id.
    for (const path of ["/_ems/monitor", "/_ems/monitor/"]) {
      expect(await t.http("GET", `${path}?${q}`)).toMatchObject({ status: 400, body: err(400, "Monitor id not given") });
    }
  });
});

describe("energy metrics of a function or an asset (op 76)", () => {
  it("lists every energy monitor of the function with shares summing to 100", async () => {
    const res = await t.http<{ monitor_id: string; total_consumption: number; percent_of_total: number; total_energy: number }[]>(
      "GET",
      `/_ems/monitor/_all?function_id=${ids.fn}&label=function&from=${FROM}&to=${TO}`,
    );
    expect(res.status).toBe(200);
    const byId = Object.fromEntries(res.body.map((m) => [m.monitor_id, m]));
    expect(Object.keys(byId).sort()).toEqual([ids.a, ids.b, ids.c].sort());
    expect(byId[ids.a]).toMatchObject({ total_consumption: 1, percent_of_total: 20, total_energy: 5 });
    expect(byId[ids.b]).toMatchObject({ total_consumption: 3, percent_of_total: 60, total_energy: 5 });
    expect(byId[ids.c]).toMatchObject({ total_consumption: 1, percent_of_total: 20, total_energy: 5 });
    expect(res.body.reduce((s, m) => s + m.percent_of_total, 0)).toBeCloseTo(100, 9);
  });

  it("lists the energy monitors of an asset with label asset, each with its share of the function as op 75 gives it", async () => {
    const res = await t.http<{ monitor_id: string; percent_of_total: number; total_energy: number }[]>(
      "GET",
      `/_ems/monitor/_all?function_id=${ids.asset}&label=asset&from=${FROM}&to=${TO}`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
    // Contract: percent_of_total is the share of the function's total consumption (1 of 5 MWh).
    expect(res.body[0]).toMatchObject({ monitor_id: ids.c, monitor_name: "Compressor meter", percent_of_total: 20, total_energy: 5 });
    expect(res.body[0]).toEqual((await t.http("GET", `/_ems/monitor/${ids.c}?from=${FROM}&to=${TO}`)).body);
  });

  it("pages the list with limit and offset, the total in X-Total-Count, and refuses unknown keys with Excess inputs", async () => {
    const q = `function_id=${ids.fn}&label=function&from=${FROM}&to=${TO}`;
    const all = await t.http<{ monitor_id: string }[]>("GET", `/_ems/monitor/_all?${q}`);
    expect(all.headers.get("x-total-count")).toBe("3");
    const page = await t.http<{ monitor_id: string }[]>("GET", `/_ems/monitor/_all?${q}&limit=1&offset=2`);
    expect(page.status).toBe(200);
    expect(page.headers.get("x-total-count")).toBe("3");
    expect(page.body.map((m) => m.monitor_id)).toEqual([all.body[2]!.monitor_id]);
    expect((await t.http("GET", `/_ems/monitor/_all?${q}&limit=1001`)).body).toEqual(err(400, "Invalid input: limit"));
    expect((await t.http("GET", `/_ems/monitor/_all?${q}&asset_id=x`)).body).toEqual(err(400, "Excess inputs"));
    // config's own list count (asked for internally) is not op 75's answer.
    expect((await t.http("GET", `/_ems/monitor/${ids.a}?from=${FROM}&to=${TO}`)).headers.get("x-total-count")).toBeNull();
  });

  it("answers the spec's messages", async () => {
    const q = `from=${FROM}&to=${TO}`;
    expect((await t.http("GET", `/_ems/monitor/_all?label=function&${q}`)).body).toEqual(err(400, "Function or Asset id not given"));
    expect((await t.http("GET", `/_ems/monitor/_all?function_id=${ids.fn}&${q}`)).body).toEqual(err(400, "Insufficient inputs"));
    expect((await t.http("GET", `/_ems/monitor/_all?function_id=${ids.fn}&label=plant&${q}`)).body).toEqual(err(400, "Invalid input: label"));
    expect((await t.http("GET", `/_ems/monitor/_all?function_id=${ids.fn}&label=function&to=${TO}`)).body).toEqual(
      err(400, "Insufficient date inputs"),
    );
    expect((await t.http("GET", `/_ems/monitor/_all?function_id=${ids.fn}&label=function&from=x&to=${TO}`)).body).toEqual(
      err(400, "Invalid date format"),
    );
    expect((await t.http("GET", `/_ems/monitor/_all?function_id=${randomUUID()}&label=function&${q}`)).body).toEqual(
      err(400, "Function details not found"),
    );
    expect((await t.http("GET", `/_ems/monitor/_all?function_id=${ids.asset}&label=function&${q}`)).body).toEqual(
      err(400, "Function details not found"),
    );
    expect((await t.http("GET", `/_ems/monitor/_all?function_id=${ids.fn}&label=asset&${q}`)).body).toEqual(
      err(400, "Function details not found"),
    );
  });
});

describe("energy trend in the site's time zone (op 77)", () => {
  type Point = { Date: string; Energy: number; unit: string };
  const trend = (monitorId: string, query: string) => t.http<Point[]>("GET", `/_ems/monitor/_trend/${monitorId}?${query}`);

  it("daily across the spring change: a 23-hour day, then a 24-hour day", async () => {
    const res = await trend(ids.a, `from=2025-03-30T00:00:00%2B01:00&to=2025-04-01T00:00:00%2B02:00&metric=consumption_chart&interval=daily`);
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(2);
    expect(res.body[0]).toEqual({ Date: "2025-03-30T00:00:00+01:00", Energy: expect.closeTo(0.455, 12), unit: "MWh" });
    expect(res.body[1]).toEqual({ Date: "2025-03-31T00:00:00+02:00", Energy: expect.closeTo(0.48, 12), unit: "MWh" });
  });

  it("hourly: 23 buckets on 30 March, 02:00 skipped, summing to the day", async () => {
    const res = await trend(ids.a, `from=2025-03-29T23:00:00Z&to=2025-03-30T22:00:00Z&metric=consumption_chart&interval=hourly`);
    expect(res.body).toHaveLength(23);
    expect(res.body.slice(0, 4).map((p) => p.Date)).toEqual([
      "2025-03-30T00:00:00+01:00",
      "2025-03-30T01:00:00+01:00",
      "2025-03-30T03:00:00+02:00",
      "2025-03-30T04:00:00+02:00",
    ]);
    expect(res.body[0].Energy).toBeCloseTo(0.015, 12);
    expect(res.body[1].Energy).toBeCloseTo(0.02, 12);
    expect(res.body.reduce((s, p) => s + p.Energy, 0)).toBeCloseTo(0.455, 12);
  });

  it("weekly from Monday and monthly (also spelled month), adding up to the counter's rise", async () => {
    const weekly = await trend(ids.a, `from=${FROM}&to=${TO}&metric=consumption_chart&interval=weekly`);
    expect(weekly.body.map((p) => p.Date)).toEqual(["2025-03-24T00:00:00+01:00", "2025-03-31T00:00:00+02:00"]);
    expect(weekly.body[0].Energy).toBeCloseTo(0.455, 12);
    expect(weekly.body[1].Energy).toBeCloseTo(0.545, 12);
    for (const interval of ["monthly", "month"]) {
      const monthly = await trend(ids.a, `from=${FROM}&to=${TO}&metric=consumption_chart&interval=${interval}`);
      expect(monthly.body.map((p) => p.Date)).toEqual(["2025-03-01T00:00:00+01:00", "2025-04-01T00:00:00+02:00"]);
      expect(monthly.body[0].Energy).toBeCloseTo(0.935, 12);
      expect(monthly.body[1].Energy).toBeCloseTo(0.065, 12);
    }
  });

  it("trends the mean power per day", async () => {
    const res = await trend(ids.a, `from=2025-03-30T00:00:00%2B01:00&to=2025-04-01T00:00:00%2B02:00&metric=power_chart&interval=daily`);
    expect(res.body).toEqual([
      { Date: "2025-03-30T00:00:00+01:00", Energy: 50, unit: "KW" },
      { Date: "2025-03-31T00:00:00+02:00", Energy: 50, unit: "KW" },
    ]);
  });

  it("answers the spec's messages", async () => {
    const q = `from=${FROM}&to=${TO}`;
    expect((await trend(ids.a, `${q}&interval=daily`)).body).toEqual(err(400, "Metric not given"));
    expect((await trend(ids.a, `${q}&metric=consumption_chart`)).body).toEqual(err(400, "Insufficient inputs"));
    expect((await trend(ids.a, `from=${FROM}&metric=consumption_chart&interval=daily`)).body).toEqual(err(400, "Insufficient date inputs"));
    expect((await trend(ids.a, `from=${FROM}&to=tomorrow&metric=consumption_chart&interval=daily`)).body).toEqual(
      err(400, "Invalid date format"),
    );
    expect((await trend(randomUUID(), `${q}&metric=consumption_chart&interval=daily`)).body).toEqual(err(400, "Monitor details not found"));
    expect((await trend(ids.process, `${q}&metric=consumption_chart&interval=daily`)).body).toEqual(err(400, "Monitor details not found"));
    expect((await trend(ids.a, `from=2024-01-01&to=2024-02-01&metric=consumption_chart&interval=daily`)).body).toEqual(
      err(400, "Energy data not available"),
    );
    expect((await trend(ids.a, `${q}&metric=gas_chart&interval=daily`)).body).toEqual(err(400, "Invalid input: metric"));
    expect((await trend(ids.a, `${q}&metric=consumption_chart&interval=yearly`)).body).toEqual(err(400, "Invalid input: interval"));
    const admin = { user: { username: "admin@localhost", user_type: "saas-admin", site_id: null, plant_id: null, modules: [] } };
    await expect(t.node.broker.call("ems.trend", { from: FROM, to: TO }, { meta: admin })).rejects.toMatchObject({
      message: "Monitor id not given",
    });
    // Over HTTP: the path without its id, not read as op 75 of a monitor called _trend.
    for (const path of ["/_ems/monitor/_trend", "/_ems/monitor/_trend/"]) {
      expect(await t.http("GET", `${path}?${q}&metric=consumption_chart&interval=daily`)).toMatchObject({
        status: 400,
        body: err(400, "Monitor id not given"),
      });
    }
  });
});

describe("the database's aggregation and the reference rules agree", () => {
  it("on an irregular counter with resets, hourly and daily, in batches out of order", async () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const readings: { monitor_id: string; tag_id: string; ts: number; value: number }[] = [];
    let value = 500;
    for (let ts = T0 + 17_000; ts < T0 + 3 * 86_400_000; ts += Math.floor(30_000 + rand() * 600_000)) {
      value = rand() < 0.01 ? rand() * 5 : value + rand() * 3;
      readings.push({ monitor_id: ids.d, tag_id: "kwh", ts, value });
    }
    const shuffled = [...readings].sort(() => rand() - 0.5);
    for (let i = 0; i < shuffled.length; i += 97) await ingest(shuffled.slice(i, i + 97));

    const pg = new Client({ connectionString: t.db.url });
    await pg.connect();
    const { rows } = await pg.query(
      `SELECT bucket::float8 AS bucket, first_value, last_value, max FROM ems.rollups WHERE monitor_id = $1 AND tag_id = 'kwh' ORDER BY bucket`,
      [ids.d],
    );
    await pg.end();
    const from = "2025-03-30T00:00:00%2B01:00";
    const to = "2025-04-02T00:00:00%2B02:00";
    for (const interval of ["hourly", "daily"] as const) {
      const res = await t.http<{ Energy: number }[]>(
        "GET",
        `/_ems/monitor/_trend/${ids.d}?from=${from}&to=${to}&metric=consumption_chart&interval=${interval}`,
      );
      expect(res.status).toBe(200);
      const starts = bucketStarts(Date.parse("2025-03-29T23:00:00Z"), Date.parse("2025-04-01T22:00:00Z"), interval, "Europe/Berlin");
      const inRange = (rows as Pick<Rollup, "bucket" | "first_value" | "last_value" | "max">[]).filter(
        (r) => r.bucket < Date.parse("2025-04-01T22:00:00Z"),
      );
      const reference = increasesByBucket(inRange, starts);
      expect(reference.filter((v) => v > 0).length).toBeGreaterThan(starts.length / 2);
      expect(res.body).toHaveLength(starts.length);
      res.body.forEach((p, i) => expect(p.Energy * 1000).toBeCloseTo(reference[i], 6));
    }
  });
});

describe("a site that changes time zone", () => {
  it("answers in the new zone at once, and the same after its days are refolded", async () => {
    const put = await t.http("PUT", `/_config/sites/${ids.site}`, {
      body: {
        site_name: "Berlin",
        location: "Berlin, DE",
        timezone: "Asia/Kolkata",
        latitude: "52.52",
        longitude: "13.40",
        retention_period: 180,
      },
    });
    expect(put.status).toBe(200);
    const query = `from=2025-03-29T00:00:00Z&to=2025-04-02T00:00:00Z&metric=consumption_chart&interval=daily`;
    const before = await eventually(
      () => t.http<{ Date: string; Energy: number }[]>("GET", `/_ems/monitor/_trend/${ids.a}?${query}`),
      (r) => r.body[0]?.Date.endsWith("+05:30"),
    );
    expect(before.body.map((p) => p.Date)).toEqual([
      "2025-03-29T00:00:00+05:30",
      "2025-03-30T00:00:00+05:30",
      "2025-03-31T00:00:00+05:30",
      "2025-04-01T00:00:00+05:30",
      "2025-04-02T00:00:00+05:30",
    ]);
    // The first reading (Berlin's midnight of 30 March) is 04:30 in Kolkata: 77 steps that day.
    const energy = before.body.map((p) => p.Energy);
    [0, 0.385, 0.48, 0.135, 0].forEach((v, i) => expect(energy[i]).toBeCloseTo(v, 12));
    // A new reading refolds the monitor's days in the new zone.
    await ingest([{ monitor_id: ids.a, tag_id: "kwh", ts: T0 + (STEPS + 1) * Q, value: 10_000 + 5 * (STEPS + 1) }]);
    const after = await t.http<{ Date: string; Energy: number }[]>("GET", `/_ems/monitor/_trend/${ids.a}?${query}`);
    expect(after.body.slice(0, 3)).toEqual(before.body.slice(0, 3));
    expect(after.body[3].Energy).toBeCloseTo(0.14, 12);
  });
});
