/**
 * The daily retention of cm and ems (lib/daily-job): spectra and raw energy readings older than
 * their site's retention_period go, latest values and the energy rollups stay, so energy figures
 * and trends over ranges beyond the retention answer as before. A day's run is claimed once
 * however many replicas ask, and a failed run gives its claim back.
 */
import { Client } from "pg";
import type { DataSource } from "typeorm";
import { runDaily } from "../../lib/daily-job";
import { RAW_READINGS_ONLY, startTestNode, type TestNode } from "../helpers/node";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let t: TestNode;
let pg: Client;
const ids = { short: "", long: "", vibration: "", farVibration: "", meter: "", lateMeter: "", farMeter: "" };
/** Test start: readings are hourly steps back from it, so a run seconds later cuts between two of them. */
const T = Date.now();

type Report = { ran: boolean; deleted?: number };
type Point = { Date: string; Energy: number; unit: string };

async function create(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.http<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** A site with one function, and a monitor of each kind under it. */
async function site(name: string, retention_period?: number) {
  const site = await create("/_config/sites", {
    site_name: name,
    location: "Lyon, FR",
    timezone: "UTC",
    latitude: "45.76",
    edge_firmware: { current_version: "1.0.0", previous_version: "" },
    ...(retention_period === undefined ? {} : { retention_period }),
  });
  const plant = await create("/_config/plants", { plant_name: `${name} plant`, site_id: site });
  const fn = await create("/_config/functions", { function_name: "Utilities", plant_id: plant });
  return { site, fn };
}

async function monitor(fn: string, name: string, type: string): Promise<string> {
  const id = await create("/_config/monitors", { monitor_name: name, monitor_type: type, function_id: fn });
  const tags = [{ tag_id: type === "energy-monitor" ? "kwh" : "vrms", tag_name: "main", tag_desc: "", tag_unit: type === "energy-monitor" ? "kWh" : "mm/s" }];
  const put = await t.http("PUT", `/_config/monitors/${id}`, { body: { monitor_name: name, monitor_type: type, tags, specs: {}, attributes: {} } });
  if (put.status !== 200) throw new Error(`monitor ${name}: ${JSON.stringify(put.body)}`);
  return id;
}

const capture = (monitor_id: string, ts: number) =>
  t.node.broker.call("cm.ingest.waveform", {
    monitor_id,
    tag: "vibration",
    axis: "x",
    ts,
    sample_rate_hz: 1000,
    samples: Array.from({ length: 256 }, (_, i) => Math.sin((2 * Math.PI * 25 * i) / 1000)),
  });

/** A kWh counter rising 1 every hour over the last `hours` hours, up to T. */
const counter = (monitor_id: string, hours: number) =>
  Array.from({ length: hours + 1 }, (_, i) => ({ monitor_id, tag_id: "kwh", ts: T - (hours - i) * HOUR, value: 1000 + i }));

const ingestEnergy = (readings: unknown[]) => t.node.broker.call<{ applied: number }, unknown>("ems.ingest.readings", { readings });
const run = (service: "cm" | "ems", force: boolean) => t.node.broker.call<Report, { force: boolean }>(`${service}.retention.run`, { force });
const iso = (ms: number) => new Date(ms).toISOString();
const monthly = (monitorId: string) =>
  t.http<Point[]>("GET", `/_ems/monitor/_trend/${monitorId}?from=${iso(T - 5 * DAY)}&to=${iso(T + HOUR)}&metric=consumption_chart&interval=monthly`);
const rowsOf = async (sql: string, monitorId: string) => (await pg.query<{ ts: string }>(sql, [monitorId])).rows.map((r) => Number(r.ts));

beforeAll(async () => {
  // The raw rows are counted here: ems's compression (services/ems/hours.ts) would move hour-old ones under them.
  t = await startTestNode({ services: ["api", "auth", "config", "cm", "ems"], env: { ...RAW_READINGS_ONLY } });
  pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  const short = await site("Short", 1);
  const long = await site("Long"); // the default 180 days
  ids.short = short.site;
  ids.long = long.site;
  ids.vibration = await monitor(short.fn, "Pump DE", "condition-monitor");
  ids.farVibration = await monitor(long.fn, "Fan DE", "condition-monitor");
  ids.meter = await monitor(short.fn, "Feeder", "energy-monitor");
  ids.lateMeter = await monitor(short.fn, "Feeder 2", "energy-monitor");
  ids.farMeter = await monitor(long.fn, "Feeder far", "energy-monitor");
});

afterAll(async () => {
  await pg?.end();
  await t?.stop();
});

describe("cm", () => {
  it("deletes spectra older than the site's retention, keeps newer ones, other sites' and the latest values", async () => {
    for (const ts of [T - 3 * DAY, T - 2 * HOUR]) expect(await capture(ids.vibration, ts)).toEqual({ stored: true });
    expect(await capture(ids.farVibration, T - 3 * DAY)).toEqual({ stored: true });
    await t.node.broker.call("cm.ingest.readings", { readings: [{ monitor_id: ids.vibration, tag_id: "vrms", ts: T - 3 * DAY, value: 1.5 }] });

    expect(await run("cm", true)).toEqual({ ran: true, deleted: 1 });

    expect((await t.http("GET", `/_cm/fft/_timestamps?monitor_id=${ids.vibration}`)).body).toEqual([T - 2 * HOUR]);
    expect((await t.http("GET", `/_cm/fft/_timestamps?monitor_id=${ids.farVibration}`)).body).toEqual([T - 3 * DAY]);
    expect(await rowsOf(`SELECT ts FROM cm.latest_values WHERE monitor_id = $1`, ids.vibration)).toEqual([T - 3 * DAY]);
    // Claimed for the day: an unforced run right after does nothing.
    expect(await run("cm", false)).toEqual({ ran: false });
  });
});

describe("ems", () => {
  const readingsSql = `SELECT ts FROM ems.readings WHERE monitor_id = $1 ORDER BY ts`;

  it("deletes raw readings older than the site's retention and answers trends and figures beyond it from the rollups", async () => {
    const readings = counter(ids.meter, 72); // +72 kWh over 3 days
    expect(await ingestEnergy(readings)).toEqual({ applied: 73 });
    expect(await ingestEnergy(counter(ids.farMeter, 72))).toEqual({ applied: 73 });
    const trendBefore = await monthly(ids.meter);
    expect(trendBefore.status).toBe(200);
    expect(trendBefore.body.reduce((s, p) => s + p.Energy, 0)).toBeCloseTo(0.072, 12);
    const metrics = () => t.http<{ total_consumption: number }>("GET", `/_ems/monitor/${ids.meter}?from=${iso(T - 5 * DAY)}&to=${iso(T + HOUR)}`);
    const metricsBefore = await metrics();
    expect(metricsBefore.body.total_consumption).toBeCloseTo(0.072, 12);

    const started = Date.now();
    const report = await run("ems", true);
    // The readings from before a day ago go: 49 of the 73 (T - 24 h itself is before the cutoff).
    expect(report).toEqual({ ran: true, deleted: 49 });
    const kept = await rowsOf(readingsSql, ids.meter);
    expect(kept).toEqual(readings.slice(49).map((r) => r.ts));
    expect(Math.min(...kept)).toBeGreaterThanOrEqual(started - DAY);
    expect(await rowsOf(readingsSql, ids.farMeter)).toHaveLength(73);

    // The monthly trend and the range's figures still cover the whole three days, from the rollups.
    expect(await monthly(ids.meter)).toMatchObject({ status: 200, body: trendBefore.body });
    expect((await metrics()).body).toEqual(metricsBefore.body);
  });

  it("does not count again a redelivered reading whose key retention deleted", async () => {
    const trend = (await monthly(ids.meter)).body;
    expect(await ingestEnergy(counter(ids.meter, 72))).toEqual({ applied: 0 });
    expect((await monthly(ids.meter)).body).toEqual(trend);
    expect(await rowsOf(readingsSql, ids.meter)).toHaveLength(24);
  });

  it("runs once a day however many replicas check at once", async () => {
    expect(await ingestEnergy(counter(ids.lateMeter, 48))).toEqual({ applied: 49 });
    await pg.query(`UPDATE ems.jobs SET last_run = 0 WHERE name = 'retention'`);
    const reports = await Promise.all([run("ems", false), run("ems", false), run("ems", false)]);
    expect(reports.filter((r) => r.ran)).toEqual([{ ran: true, deleted: 25 }]);
    expect(reports.filter((r) => !r.ran)).toHaveLength(2);
    expect(await run("ems", false)).toEqual({ ran: false });
    expect(await rowsOf(readingsSql, ids.lateMeter)).toHaveLength(24);
  });

  it("gives the day's claim back when a run fails", async () => {
    const db = (t.node.broker.getLocalService("ems") as unknown as { db: DataSource }).db;
    const job = { service: "ems", job: "probe" };
    await expect(runDaily(db, job, false, () => Promise.reject(new Error("config away")))).rejects.toThrow("config away");
    expect(await runDaily(db, job, false, async () => "ran")).toBe("ran");
    expect(await runDaily(db, job, false, async () => "ran")).toBeUndefined();
  });
});
