/**
 * Retention of a tag's history (pipelines' daily job, `pipelines.retention.run`): raw readings
 * older than the site's retention_period go; the minute and hour rollups stay for 400 days (or
 * the retention_period, if longer), so `_history` over a range whose raw readings are gone still
 * answers its buckets, at any zoom; rollups older than 400 days go.
 */
import { Client } from "pg";
import { RAW_READINGS_ONLY, startTestNode, type TestNode } from "../helpers/node";
import { createEdge, edgeBody, eventually, hierarchy, ingest, type Hierarchy } from "./pipelines-fixtures";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const NOW = Date.now();
/** The hour the test started in: ranges fall on hours, so a history reads whole rollups. */
const H = Math.floor(NOW / HOUR) * HOUR;
/** Pressure every 30 s from 6 days to 1 day before H. */
const FIRST = H - 6 * DAY;
const LAST = H - DAY - 30_000;
const STEP = 30_000;
const RETENTION_DAYS = 3;

type Point = { timestamp: number; value: number; min: number; max: number; count: number };
type History = { bucket_ms: number; points: Point[] };

let t: TestNode;
let pg: Client;
let h: Hierarchy;

const iso = (ms: number) => new Date(ms).toISOString();
const history = async (from: number, to: number, points?: number): Promise<History> => {
  const res = await t.http<History>(
    "GET",
    `/_cm/monitors/${h.pump.id}/_history?tag=Pressure&from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}${points ? `&points=${points}` : ""}`,
  );
  expect([res.status, res.body]).toEqual([200, expect.objectContaining({ bucket_ms: expect.any(Number) })]);
  return res.body;
};

/** The pump's pressure aggregated per `bucket` straight from the raw readings in [from, to]. */
async function rawBuckets(from: number, to: number, bucket: number): Promise<Point[]> {
  const rows = await pg.query(
    `SELECT (t / $2) * $2 AS bucket, count(*)::int AS count, avg(value) AS value, min(value) AS min, max(value) AS max
       FROM (SELECT round(extract(epoch FROM ts) * 1000)::bigint AS t, value FROM pipelines.readings
              WHERE monitor_id = $1 AND tag_id = 'pressure' AND ts >= to_timestamp($3::float8 / 1000) AND ts <= to_timestamp($4::float8 / 1000)) r
      GROUP BY 1 ORDER BY 1`,
    [h.pump.id, bucket, from, to],
  );
  return rows.rows.map((w: { bucket: string; count: number; value: number; min: number; max: number }) => ({
    timestamp: Math.max(Number(w.bucket), from),
    value: w.value,
    min: w.min,
    max: w.max,
    count: w.count,
  }));
}

/** Points with their means rounded, to compare answers that summed the same readings in another order. */
const rounded = (points: Point[]) => points.map((p) => ({ ...p, value: Math.round(p.value * 1e9) / 1e9 }));

/** One old hour of the pump's pressure, as rollups only (its raw readings long gone): a reading a minute, 6, 7, 8, 6, 7, 8 … */
async function seedHour(start: number): Promise<void> {
  const values = Array.from({ length: 60 }, (_, m) => 6 + (m % 3));
  const row = `($1, 'pressure', $2, $3, $4, $5, $6, $7)`;
  for (let m = 0; m < 60; m++) {
    await pg.query(`INSERT INTO pipelines.reading_minutes (monitor_id, tag_id, start, site_id, n, sum, min, max) VALUES ${row}`, [
      h.pump.id,
      start + m * MIN,
      h.site,
      1,
      values[m],
      values[m],
      values[m],
    ]);
  }
  await pg.query(`INSERT INTO pipelines.reading_hours (monitor_id, tag_id, start, site_id, n, sum, min, max) VALUES ${row}`, [
    h.pump.id,
    start,
    h.site,
    60,
    values.reduce((s, v) => s + v, 0),
    6,
    8,
  ]);
}

const rollupStarts = async (table: "reading_minutes" | "reading_hours", before: number) =>
  (await pg.query(`SELECT DISTINCT start - start % ${HOUR} AS hour FROM pipelines.${table} WHERE monitor_id = $1 AND start < $2 ORDER BY 1`, [h.pump.id, before])).rows.map(
    (r: { hour: string }) => Number(r.hour),
  );

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "pipelines"], env: { ...RAW_READINGS_ONLY } });
  pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  h = await hierarchy(t, "HistRet");
  const gw = await createEdge(t, edgeBody(h, [h.pump.id]));
  const readings = [];
  for (let ts = FIRST; ts <= LAST; ts += STEP) readings.push({ monitor_id: h.pump.id, tag_id: "pressure", ts, value: Math.round(100 * (5 + Math.sin(ts / 3_600_000))) / 100 });
  for (let i = 0; i < readings.length; i += 2000) {
    const res = await ingest<{ accepted: number }>(t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, { readings: readings.slice(i, i + 2000) });
    expect(res.body).toEqual(expect.objectContaining({ accepted: Math.min(2000, readings.length - i) }));
  }
  const rolled = await eventually(
    async () => (await pg.query(`SELECT (SELECT count(*) FROM pipelines.readings)::int AS raw, (SELECT coalesce(sum(n), 0) FROM pipelines.reading_hours)::int AS rolled`)).rows[0],
    (x: { raw: number; rolled: number }) => x.raw === readings.length && x.rolled === readings.length,
    300,
    50,
  );
  expect(rolled).toEqual({ raw: readings.length, rolled: readings.length });
  // Rollups of hours 399, 401 and 450 days back, seeded as the consumer would have left them.
  for (const days of [399, 401, 450]) await seedHour(H - days * DAY);
}, 120_000);

afterAll(async () => {
  await pg?.end();
  await t?.stop();
});

describe("retention of the history", () => {
  it("drops raw readings past retention_period, keeps rollups 400 days, and _history still answers buckets from them", async () => {
    // Two days whose raw readings go: hour buckets; two of their hours at the default 1,000 points: raw readings, then minutes.
    const days = { from: H - 6 * DAY, to: H - 4 * DAY - 1 };
    const zoom = { from: H - 5 * DAY, to: H - 5 * DAY + 2 * HOUR - 1 };
    const daysBefore = await history(days.from, days.to, 48);
    expect(daysBefore.bucket_ms).toBe(HOUR);
    expect(rounded(daysBefore.points)).toEqual(rounded(await rawBuckets(days.from, days.to, HOUR)));
    const zoomBefore = await history(zoom.from, zoom.to);
    expect([zoomBefore.bucket_ms, zoomBefore.points.length]).toEqual([0, 240]);
    const zoomMinutes = await rawBuckets(zoom.from, zoom.to, MIN);
    // Two hours inside the raw retention: raw readings before and after.
    const recent = { from: H - DAY - 2 * HOUR, to: H - DAY - 1 };
    const recentBefore = await history(recent.from, recent.to);
    expect([recentBefore.bucket_ms, recentBefore.points.length]).toEqual([0, 240]);

    const put = await t.http("PUT", `/_config/sites/${h.site}`, { body: { location: "Lyon", retention_period: RETENTION_DAYS } });
    expect(put.body).toBe("Site updated successfully");
    const startedAt = Date.now();
    const report = await t.node.broker.call<{ ran: boolean; dropped: string[]; deleted: number }, { force: boolean }>("pipelines.retention.run", { force: true });
    const endedAt = Date.now();
    expect(report.ran).toBe(true);

    // Raw: nothing older than the retention period; everything younger still there.
    const raw = (
      await pg.query(`SELECT round(extract(epoch FROM ts) * 1000)::float8 AS ts FROM pipelines.readings WHERE monitor_id = $1 ORDER BY ts`, [h.pump.id])
    ).rows.map((r: { ts: number }) => r.ts);
    const kept = (cutoff: number) => {
      const out: number[] = [];
      for (let ts = FIRST; ts <= LAST; ts += STEP) if (ts >= cutoff) out.push(ts);
      return out;
    };
    expect(raw[0]).toBeGreaterThanOrEqual(startedAt - RETENTION_DAYS * DAY);
    expect(raw.length).toBeGreaterThanOrEqual(kept(endedAt - RETENTION_DAYS * DAY).length);
    expect(raw.length).toBeLessThanOrEqual(kept(startedAt - RETENTION_DAYS * DAY).length);
    expect(raw[raw.length - 1]).toBe(LAST);

    // Rollups: every hour of the ingested days and the one 399 days back stay; those past 400 days go.
    const ingestedHours = Array.from({ length: 5 * 24 }, (_, i) => FIRST + i * HOUR);
    for (const table of ["reading_minutes", "reading_hours"] as const) {
      expect([table, await rollupStarts(table, H)]).toEqual([table, [H - 399 * DAY, ...ingestedHours]]);
    }
    const sums = await pg.query(
      `SELECT (SELECT sum(n) FROM pipelines.reading_minutes WHERE start >= $1)::int AS minutes, (SELECT sum(n) FROM pipelines.reading_hours WHERE start >= $1)::int AS hours`,
      [FIRST],
    );
    expect(sums.rows[0]).toEqual({ minutes: ingestedHours.length * 120, hours: ingestedHours.length * 120 });

    // _history where the raw readings are gone: the same buckets as before, from the rollups.
    expect(await pg.query(`SELECT count(*)::int AS n FROM pipelines.readings WHERE ts <= to_timestamp($1::float8 / 1000)`, [days.to]).then((r) => r.rows[0].n)).toBe(0);
    const daysAfter = await history(days.from, days.to, 48);
    expect(daysAfter.bucket_ms).toBe(HOUR);
    expect(rounded(daysAfter.points)).toEqual(rounded(daysBefore.points));
    // Zoomed in: no raw readings left to show, so minute buckets from the minute rollups.
    const zoomAfter = await history(zoom.from, zoom.to);
    expect(zoomAfter.bucket_ms).toBe(MIN);
    expect(rounded(zoomAfter.points)).toEqual(rounded(zoomMinutes));
    // Where raw readings remain, they are answered as before.
    expect(await history(recent.from, recent.to)).toEqual(recentBefore);

    // The seeded hour 399 days back: one hour bucket, or its minutes, though it never had raw readings here.
    const old = H - 399 * DAY;
    expect(await history(old, old + HOUR - 1, 1)).toMatchObject({ bucket_ms: HOUR, points: [{ timestamp: old, value: 7, min: 6, max: 8, count: 60 }] });
    const oldMinutes = await history(old, old + HOUR - 1);
    expect(oldMinutes.bucket_ms).toBe(MIN);
    expect(oldMinutes.points.map((p) => [p.timestamp, p.value, p.count])).toEqual(Array.from({ length: 60 }, (_, m) => [old + m * MIN, 6 + (m % 3), 1]));
  });
});
