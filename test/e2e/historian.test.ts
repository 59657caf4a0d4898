/**
 * The historian (docs/architecture.md, "The historian"): a day of several tags
 * ingested as a gateway sends them, compressed by the pipelines' `compress` job, then read back
 * exactly — every value the same float64 at the same millisecond — through `_history` raw points
 * and buckets and `_export`; late readings into a compressed hour, a duplicate instant included,
 * neither lost nor doubled; retention dropping one site's compressed days and not another's; the
 * storage route's figures, ems's bytes of the sites' energy monitors included.
 */
import { Client } from "pg";
import type { DataSource } from "typeorm";
import { compressReadings } from "../../services/pipelines/chunks";
import { startTestNode, type TestNode } from "../helpers/node";
import { envelope } from "../helpers/envelope";
import { makeUser } from "./alerting-fixtures";
import { createEdge, edgeBody, eventually, hierarchy, ingest, type Hierarchy } from "./pipelines-fixtures";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const STEP = 10_000;
/** A day ending three hours ago (hour-aligned): every hour of it is past HISTORY_COMPRESS_AFTER (1 h). */
const END = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
const START = END - DAY;
const iso = (ms: number) => new Date(ms).toISOString();
const q = (from: number, to: number, extra = "") => `from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}${extra}`;

type Reading = { monitor_id: string; tag_id: string; ts: number; value: number };
type Point = { timestamp: number; value: number; min: number; max: number; count: number };
type History = { bucket_ms: number; points: Point[] };

let t: TestNode;
let pg: Client;
let h: Hierarchy;
let other: Hierarchy;
let gw: { id: string; ingest_key: string };
let gwMeter: { id: string; ingest_key: string };
let gwOther: { id: string; ingest_key: string };
const sent = new Map<string, { ts: number; value: number }[]>();

/** A random float64 of any bit pattern the ingestion takes (finite, magnitude at most 1e300; not -0: JSON has none). */
function randomDouble(): number {
  const b = Buffer.alloc(8);
  for (;;) {
    for (let i = 0; i < 8; i++) b[i] = Math.floor(Math.random() * 256);
    const v = b.readDoubleBE(0);
    if (Number.isFinite(v) && Math.abs(v) <= 1e300 && !Object.is(v, -0)) return v;
  }
}

async function send(gateway: { id: string; ingest_key: string }, readings: Reading[]): Promise<void> {
  for (let i = 0; i < readings.length; i += 2000) {
    const res = await ingest<{ accepted: number }>(t, "POST", `/_ingest/pipelines/${gateway.id}/readings`, gateway.ingest_key, { readings: readings.slice(i, i + 2000) });
    expect([res.status, res.body]).toEqual([200, expect.objectContaining({ accepted: Math.min(2000, readings.length - i) })]);
  }
  for (const r of readings) {
    const key = `${r.monitor_id}/${r.tag_id}`;
    if (!sent.has(key)) sent.set(key, []);
    sent.get(key)!.push({ ts: r.ts, value: r.value });
  }
}

const history = async (monitor: string, tag: string, from: number, to: number, points: number): Promise<History> => {
  const res = await t.http<History>("GET", `/_cm/monitors/${monitor}/_history?tag=${tag}&${q(from, to, `&points=${points}`)}`);
  expect(res.status).toBe(200);
  return res.body;
};

/** What was sent of a tag in [from, to], in time order (equal times in the order sent). */
const expected = (monitor: string, tag: string, from = START, to = END) =>
  [...(sent.get(`${monitor}/${tag}`) ?? [])].filter((r) => r.ts >= from && r.ts <= to).sort((a, b) => a.ts - b.ts);

const counts = async () =>
  (
    await pg.query(
      `SELECT (SELECT count(*) FROM pipelines.readings)::int AS raw, (SELECT coalesce(sum(n), 0) FROM pipelines.chunks)::int AS compressed,
              (SELECT coalesce(sum(n), 0) FROM pipelines.reading_hours)::int AS hours`,
    )
  ).rows[0] as { raw: number; compressed: number; hours: number };

/**
 * The compression job's run at this instant. The node's own timer is off (HISTORY_COMPRESS_AFTER
 * 400d), so what is compressed when is the test's to say; `compress.run` is the job's action.
 */
const compress = async (): Promise<number> => {
  const db = (t.node.broker.getLocalService("pipelines") as unknown as { db: DataSource }).db;
  return compressReadings(db, Date.now(), HOUR);
};

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "pipelines", "ems"], env: { HISTORY_COMPRESS_AFTER: "400d" } });
  pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  h = await hierarchy(t, "Historian");
  other = await hierarchy(t, "HistorianOther");
  gw = await createEdge(t, edgeBody(h, [h.pump.id]));
  gwMeter = await createEdge(t, { ...edgeBody(h, [h.meter.id]), function_id: h.fn2 });
  gwOther = await createEdge(t, edgeBody(other, [other.pump.id]));
  // A day every 10 s: pressure at a sensor's resolution (2 decimals), flow as random doubles (the
  // worst case), the meter's energy a counter, its power a boolean-like 0/1 with runs.
  const readings: Reading[] = [];
  let kwh = 1_234_567;
  for (let ts = START; ts < END; ts += STEP) {
    readings.push({ monitor_id: h.pump.id, tag_id: "pressure", ts, value: Math.round(100 * (5 + Math.sin(ts / 600_000) + Math.random() * 0.05)) / 100 });
    readings.push({ monitor_id: h.pump.id, tag_id: "flow", ts, value: randomDouble() });
    kwh += Math.floor(Math.random() * 3);
    readings.push({ monitor_id: h.meter.id, tag_id: "kwh", ts, value: kwh });
    readings.push({ monitor_id: h.meter.id, tag_id: "kw", ts, value: Math.floor(ts / (7 * MIN)) % 2 });
  }
  await send(gw, readings.filter((r) => r.monitor_id === h.pump.id));
  await send(gwMeter, readings.filter((r) => r.monitor_id === h.meter.id));
  // The other site: six hours four days back (kept by its 180 days).
  const old: Reading[] = [];
  for (let ts = END - 4 * DAY; ts < END - 4 * DAY + 6 * HOUR; ts += STEP) old.push({ monitor_id: other.pump.id, tag_id: "pressure", ts, value: 7.25 });
  await send(gwOther, old);
  const total = readings.length + old.length;
  expect(await eventually(counts, (c) => c.raw === total && c.hours === total, 600, 50)).toEqual({ raw: total, compressed: 0, hours: total });
}, 180_000);

afterAll(async () => {
  await pg?.end();
  await t?.stop();
});

describe("the historian", () => {
  let beforeBuckets: Record<string, History>;

  it("compresses every hour past HISTORY_COMPRESS_AFTER and reads each value back exactly through _history and _export", async () => {
    const zooms = {
      hours: await history(h.pump.id, "Pressure", START, END - 1, 24),
      minutes: await history(h.pump.id, "Pressure", START + 90 * MIN, START + 150 * MIN - 1, 60),
      fiveMinutes: await history(h.meter.id, "Energy", START, END - 1, 300),
    };
    beforeBuckets = zooms;
    const before = await counts();
    expect(before.compressed).toBe(0);

    const written = await compress();
    expect(written).toBe(2 * 24 + 2 * 24 + 6);
    expect(await counts()).toEqual({ raw: 0, compressed: before.raw, hours: before.hours });
    // A day partition wholly compressed is emptied, its index too (a delete would leave the index its size).
    const parts = (
      await pg.query(
        `SELECT pg_total_relation_size(c.oid)::int AS bytes, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = 'pipelines.readings'::regclass`,
      )
    ).rows as { bytes: number; bound: string }[];
    const past = parts.filter((p) => Date.parse(/TO \('([^']+)'\)/.exec(p.bound)![1]!) <= Math.floor((Date.now() - HOUR) / HOUR) * HOUR);
    expect(past.length).toBeGreaterThan(0);
    expect(past.map((p) => p.bytes <= 65536)).toEqual(past.map(() => true));
    // Minute rollups of compressed hours are gone: the chunks answer them.
    expect((await pg.query(`SELECT count(*)::int AS n FROM pipelines.reading_minutes`)).rows[0].n).toBe(0);

    // Raw points, a whole day in one answer, each value and time as sent.
    for (const [monitor, tag, name] of [
      [h.pump.id, "pressure", "Pressure"],
      [h.pump.id, "flow", "Flow"],
      [h.meter.id, "kwh", "Energy"],
      [h.meter.id, "kw", "Power"],
    ] as const) {
      const res = await history(monitor, name, START, END, 10_000);
      expect([name, res.bucket_ms]).toEqual([name, 0]);
      expect([name, res.points.map((p) => [p.timestamp, p.value])]).toEqual([name, expected(monitor, tag).map((r) => [r.ts, r.value])]);
    }
    // Buckets as before compression, at every zoom.
    expect(await history(h.pump.id, "Pressure", START, END - 1, 24)).toEqual(zooms.hours);
    const minutes = await history(h.pump.id, "Pressure", START + 90 * MIN, START + 150 * MIN - 1, 60);
    expect(minutes.bucket_ms).toBe(MIN);
    expect(minutes.points.map((p) => ({ ...p, value: Math.round(p.value * 1e9) }))).toEqual(zooms.minutes.points.map((p) => ({ ...p, value: Math.round(p.value * 1e9) })));
    const energy = await history(h.meter.id, "Energy", START, END - 1, 300);
    expect(energy.points.map((p) => [p.timestamp, p.min, p.max, p.count])).toEqual(zooms.fiveMinutes.points.map((p) => [p.timestamp, p.min, p.max, p.count]));

    // The export: a row per time, a column per tag, every value the float64 sent.
    const res = await t.http<string>("GET", `/_cm/monitors/${h.pump.id}/_export?${q(START + 5 * HOUR + 1234, START + 17 * HOUR)}`);
    expect(res.status).toBe(200);
    const lines = String(res.body).trimEnd().split("\n");
    expect(lines[0]).toBe("timestamp,Pressure,Flow");
    const pressure = expected(h.pump.id, "pressure", START + 5 * HOUR + 1234, START + 17 * HOUR);
    const flow = expected(h.pump.id, "flow", START + 5 * HOUR + 1234, START + 17 * HOUR);
    expect(lines.slice(1)).toEqual(pressure.map((p, i) => `${iso(p.ts)},${p.value},${flow[i]!.value}`));
    for (const line of lines.slice(1, 200)) {
      const [, p, f] = line.split(",");
      expect(Number.isFinite(Number(p)) && Number.isFinite(Number(f))).toBe(true);
    }
  });

  it("stores late readings for a compressed hour, an instant it already has included, and merges them without loss or double", async () => {
    const hour = START + 7 * HOUR;
    const late: Reading[] = [
      { monitor_id: h.pump.id, tag_id: "pressure", ts: hour + 5, value: 9.99 },
      { monitor_id: h.pump.id, tag_id: "pressure", ts: hour + 20 * STEP, value: 1.23 }, // an instant the chunk has
      { monitor_id: h.pump.id, tag_id: "pressure", ts: hour + HOUR - 1, value: -4.5 },
    ];
    const hoursBefore = (await counts()).hours;
    await send(gw, late);
    expect(await eventually(counts, (c) => c.raw === 3 && c.hours === hoursBefore + 3, 400, 50)).toMatchObject({ raw: 3, hours: hoursBefore + 3 });
    const want = expected(h.pump.id, "pressure", hour, hour + HOUR - 1);
    const ours = (x: { ts: number; value: number }[]) => x.map((r) => [r.ts, r.value]);
    // Read beside the chunk before the merge: the late one at an instant the chunk has comes after the chunk's.
    const beside = await history(h.pump.id, "Pressure", hour, hour + HOUR - 1, 1000);
    expect(ours(beside.points.map((p) => ({ ts: p.timestamp, value: p.value })))).toEqual(ours(want));
    const byMinuteBefore = await history(h.pump.id, "Pressure", hour, hour + HOUR - 1, 60);
    expect(byMinuteBefore.points.reduce((n, p) => n + p.count, 0)).toBe(363);

    expect(await compress()).toBe(1);
    expect((await counts()).raw).toBe(0);
    const merged = await history(h.pump.id, "Pressure", hour, hour + HOUR - 1, 1000);
    expect(merged).toEqual(beside);
    // The same minutes (their means summed in another order: equal to 1e-12).
    const rounded = (x: History) => x.points.map((p) => ({ ...p, value: Math.round(p.value * 1e9) }));
    expect(rounded(await history(h.pump.id, "Pressure", hour, hour + HOUR - 1, 60))).toEqual(rounded(byMinuteBefore));
    const chunk = await pg.query(`SELECT c.n FROM pipelines.chunks c JOIN pipelines.series s USING (series_id) WHERE s.monitor_id = $1 AND s.tag_id = 'pressure' AND c.start = $2`, [
      h.pump.id,
      hour,
    ]);
    expect(chunk.rows).toEqual([{ n: 363 }]);
    // The day's hour buckets count them once.
    const hours = await history(h.pump.id, "Pressure", START, END - 1, 24);
    expect(hours.points.map((p) => p.count)).toEqual(beforeBuckets.hours.points.map((p, i) => p.count + (i === 7 ? 3 : 0)));
  });

  it("drops one site's compressed readings past its retention, keeping their minutes as rollups, and not another site's", async () => {
    const otherBefore = await history(other.pump.id, "Pressure", END - 4 * DAY, END - 4 * DAY + 6 * HOUR - 1, 10_000);
    expect(otherBefore.points).toHaveLength(6 * 360);
    const put = await t.http("PUT", `/_config/sites/${h.site}`, { body: { location: "Lyon", retention_period: 1 } });
    expect(put.body).toBe("Site updated successfully");
    const cutoff = Date.now() - DAY;
    const report = await t.node.broker.call<{ ran: boolean; deleted: number }, { force: boolean }>("pipelines.retention.run", { force: true });
    expect(report.ran).toBe(true);
    const endedAt = Date.now();
    // This site: nothing before its cutoff is left, raw or compressed; after it, every reading as sent.
    const oldest = await pg.query(
      `SELECT min(c.first_ts)::float8 AS first, count(*)::int AS chunks FROM pipelines.chunks c JOIN pipelines.series s USING (series_id) WHERE s.site_id = $1`,
      [h.site],
    );
    expect(oldest.rows[0].chunks).toBeGreaterThan(0);
    expect(oldest.rows[0].first).toBeGreaterThanOrEqual(cutoff);
    expect(oldest.rows[0].first).toBeLessThan(endedAt - DAY + STEP);
    const after = { from: endedAt - DAY, to: END };
    const left = await history(h.pump.id, "Pressure", after.from, after.to, 10_000);
    expect(left.bucket_ms).toBe(0);
    expect(left.points.map((p) => [p.timestamp, p.value])).toEqual(expected(h.pump.id, "pressure", after.from, after.to).map((r) => [r.ts, r.value]));
    expect(await history(other.pump.id, "Pressure", END - 4 * DAY, END - 4 * DAY + 6 * HOUR - 1, 10_000)).toEqual(otherBefore);
    // What went is still a trend: its minutes as rollups.
    const gone = await history(h.pump.id, "Pressure", START, START + HOUR - 1, 60);
    expect(gone.bucket_ms).toBe(MIN);
    expect(gone.points.map((p) => p.count)).toEqual(Array.from({ length: 60 }, () => 6));
  });

  it("answers what each site's readings cost at GET /_config/storage, ems's included, adding up to the tables' sizes, in the caller's scope", async () => {
    // ems has taken the meter's energy readings from the stream (its own key and rollups of them).
    const meterReadings = expected(h.meter.id, "kwh").length + expected(h.meter.id, "kw").length;
    const emsHeld = async () => (await pg.query(`SELECT count(*)::int AS n FROM ems.readings WHERE monitor_id = $1`, [h.meter.id])).rows[0].n as number;
    expect(await eventually(emsHeld, (n) => n === meterReadings, 600, 50)).toBe(meterReadings);
    await pg.query(`VACUUM ANALYZE pipelines.chunks`);
    const res = await t.http<{ sites: { site_id: string; readings: number; compressed_readings: number; bytes: number; bytes_per_reading: number; oldest: number; newest: number; retention_period: number; site_name: string }[] }>(
      "GET",
      "/_config/storage",
    );
    expect(res.status).toBe(200);
    const ours = res.body.sites.find((s) => s.site_id === h.site)!;
    const theirs = res.body.sites.find((s) => s.site_id === other.site)!;
    const held = (
      await pg.query(
        `SELECT s.site_id, sum(c.n)::int AS n, min(c.first_ts)::float8 AS oldest, max(c.last_ts)::float8 AS newest FROM pipelines.chunks c JOIN pipelines.series s USING (series_id) GROUP BY 1`,
      )
    ).rows as { site_id: string; n: number; oldest: number; newest: number }[];
    const of = (site: string) => held.find((x) => x.site_id === site)!;
    expect(ours).toMatchObject({ site_name: "Historian Site", readings: of(h.site).n, compressed_readings: of(h.site).n, oldest: of(h.site).oldest, newest: of(h.site).newest, retention_period: 1 });
    expect(theirs).toMatchObject({ readings: 6 * 360, compressed_readings: 6 * 360, retention_period: 180 });
    const tables = ["readings", "chunks", "series", "reading_minutes", "reading_hours"];
    const sizes = await pg.query(
      `SELECT sum(pg_total_relation_size(c.oid))::float8 AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'pipelines' AND (c.relname = ANY($1) OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'pipelines.readings'::regclass))`,
      [tables],
    );
    const emsTables = ["readings", "compressed_hours", "rollups", "rollups_daily"];
    const emsSize = await pg.query(`SELECT sum(pg_total_relation_size(('ems.' || t)::regclass))::float8 AS bytes FROM unnest($1::text[]) AS t`, [emsTables]);
    const total = res.body.sites.reduce((n, s) => n + s.bytes, 0);
    expect(Math.abs(total - sizes.rows[0].bytes - emsSize.rows[0].bytes)).toBeLessThan(2 * res.body.sites.length + 1);
    expect(ours.bytes_per_reading).toBeCloseTo(ours.bytes / ours.readings, 1);
    // A site-admin sees its own site; another's is not a site to it; a plant user may not ask.
    const admin = await makeUser(t.http, { username: "storage-site@example.com", user_type: "site-admin", site_id: other.site });
    const own = await t.http<{ sites: { site_id: string }[] }>("GET", "/_config/storage", { auth: admin });
    expect(own.body.sites.map((s) => s.site_id)).toEqual([other.site]);
    expect(await t.http("GET", `/_config/storage?site_id=${h.site}`, { auth: admin })).toMatchObject({ status: 400, body: envelope(400, `Invalid Site ID: ${h.site}`) });
    const plant = await makeUser(t.http, { username: "storage-plant@example.com", user_type: "plant-admin", site_id: other.site, plant_id: other.plant });
    expect(await t.http("GET", "/_config/storage", { auth: plant })).toMatchObject({ status: 403, body: envelope(403, "Unauthorized operation") });

    // A cluster without ems: the route answers pipelines' own figures.
    await t.node.broker.destroyService(t.node.broker.getLocalService("ems")!);
    const without = await t.http<{ sites: { site_id: string; bytes: number }[] }>("GET", "/_config/storage");
    expect(without.status).toBe(200);
    const pipelinesOnly = without.body.sites.reduce((n, s) => n + s.bytes, 0);
    expect(Math.abs(pipelinesOnly - sizes.rows[0].bytes)).toBeLessThan(without.body.sites.length + 1);
  });
});
