/**
 * A tag's history and export (docs/api-tour.md, "Looking back") through the real ingestion API and
 * the readings stream's rollup consumer: raw points when few, buckets with the spike kept in `max`
 * when many, the rollups equal to the raw readings' aggregates after concurrent batches, the CSV
 * row by row against the stored readings across day partitions, scope and every error text.
 */
import { Client } from "pg";
import { RAW_READINGS_ONLY, startTestNode, type TestNode } from "../helpers/node";
import { envelope } from "../helpers/envelope";
import { makeUser } from "./alerting-fixtures";
import { createEdge, edgeBody, eventually, hierarchy, ingest, type Hierarchy } from "./pipelines-fixtures";

let t: TestNode;
let pg: Client;
let h: Hierarchy;
let gw: { id: string; ingest_key: string };

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
// Two days before today's midnight (UTC): the readings cross a day partition.
const BASE = Math.floor(Date.now() / DAY) * DAY - 2 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();
const q = (from: number, to: number, extra = "") => `from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}${extra}`;

async function send(readings: { monitor_id: string; tag_id: string; ts: number; value: number }[]): Promise<void> {
  const res = await ingest<{ accepted: number }>(t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, { readings });
  expect(res.status).toBe(200);
}

/** The rollups caught up with the stored readings (the consumer folds each batch after it is stored). */
async function rolledUp(): Promise<void> {
  await eventually(
    async () => (await pg.query(`SELECT (SELECT count(*) FROM pipelines.readings)::int AS raw, (SELECT coalesce(sum(n), 0) FROM pipelines.reading_minutes)::int AS rolled`)).rows[0],
    (x: { raw: number; rolled: number }) => x.raw === x.rolled,
    200,
    50,
  );
}

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "pipelines"], env: { ...RAW_READINGS_ONLY } });
  pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  h = await hierarchy(t, "Hist");
  gw = await createEdge(t, edgeBody(h, [h.pump.id, h.fan.id]));
  // Pressure: a reading every 10 s for 36 h from BASE + 12 h (crossing midnight), 12,960 readings,
  // a sine between 4 and 6 bar with one spike of 42 bar; flow: every minute. Sent in 8 concurrent streams of batches.
  const readings: { monitor_id: string; tag_id: string; ts: number; value: number }[] = [];
  for (let i = 0; i < 36 * 360; i++) {
    const ts = BASE + 12 * HOUR + i * 10_000;
    readings.push({ monitor_id: h.pump.id, tag_id: "pressure", ts, value: i === 5000 ? 42 : 5 + Math.sin(i / 50) });
    if (i % 6 === 0) readings.push({ monitor_id: h.pump.id, tag_id: "flow", ts, value: 100 + (i % 7) });
  }
  const batches: (typeof readings)[] = [];
  for (let i = 0; i < readings.length; i += 500) batches.push(readings.slice(i, i + 500));
  for (let i = 0; i < batches.length; i += 8) await Promise.all(batches.slice(i, i + 8).map(send));
  await rolledUp();
}, 120_000);

afterAll(async () => {
  await pg?.end();
  await t?.stop();
});

describe("GET /_cm/monitors/<id>/_history", () => {
  it("answers raw readings when the range holds no more than `points`", async () => {
    const from = BASE + 12 * HOUR;
    const res = await t.http<{ bucket_ms: number; tag_unit: string; points: { timestamp: number; value: number; min: number; max: number; count: number }[] }>(
      "GET",
      `/_cm/monitors/${h.pump.id}/_history?tag=Pressure&${q(from, from + 10 * MIN - 1)}`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ monitor_id: h.pump.id, tag: "Pressure", tag_unit: "bar", bucket_ms: 0 });
    expect(res.body.points).toHaveLength(60);
    expect(res.body.points[0]).toEqual({ timestamp: from, value: 5, min: 5, max: 5, count: 1 });
    expect(res.body.points[59].timestamp).toBe(from + 590_000);
  });

  it("answers buckets with the mean, and the spike in max, at every zoom", async () => {
    const spikeAt = BASE + 12 * HOUR + 5000 * 10_000;
    for (const [from, to, points] of [
      [BASE, BASE + 3 * DAY, 1000], // whole range: hour rollups
      [BASE + 12 * HOUR + 7 * MIN + 13_000, BASE + 40 * HOUR + 17_000, 200], // edges on no minute
      [spikeAt - 2 * HOUR, spikeAt + 2 * HOUR, 100], // zoomed in: minute rollups
      [spikeAt - 30 * MIN, spikeAt + 30 * MIN, 50], // raw readings, bucketed
    ] as const) {
      const res = await t.http<{ bucket_ms: number; points: { timestamp: number; value: number; min: number; max: number; count: number }[] }>(
        "GET",
        `/_cm/monitors/${h.pump.id}/_history?tag=Pressure&${q(from, to, `&points=${points}`)}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.bucket_ms).toBeGreaterThan(0);
      expect(res.body.points.length).toBeLessThanOrEqual(points);
      // The same figures straight from the stored readings.
      const want = await pg.query(
        `SELECT (t / $2) * $2 AS bucket, count(*)::int AS count, avg(value) AS value, min(value) AS min, max(value) AS max
           FROM (SELECT round(extract(epoch FROM ts) * 1000)::bigint AS t, value FROM pipelines.readings
                  WHERE monitor_id = $1 AND tag_id = 'pressure' AND ts >= to_timestamp($3::float8 / 1000) AND ts <= to_timestamp($4::float8 / 1000)) r
          GROUP BY 1 ORDER BY 1`,
        [h.pump.id, res.body.bucket_ms, from, to],
      );
      expect(res.body.points.map((p) => [p.timestamp, p.count, p.min, p.max])).toEqual(
        want.rows.map((w: { bucket: string; count: number; min: number; max: number }) => [Math.max(Number(w.bucket), from), w.count, w.min, w.max]),
      );
      res.body.points.forEach((p, i) => expect(p.value).toBeCloseTo(want.rows[i].value, 9));
      if (from <= spikeAt && spikeAt <= to) expect(Math.max(...res.body.points.map((p) => p.max))).toBe(42);
    }
  });

  it("keeps rollups equal to the raw readings after concurrent requests", async () => {
    for (const [table, size] of [
      ["reading_minutes", MIN],
      ["reading_hours", HOUR],
    ] as const) {
      const diff = await pg.query(
        `(SELECT monitor_id, tag_id, start, n, round(sum::numeric, 6) AS sum, min, max FROM pipelines.${table}
          EXCEPT
          SELECT monitor_id, tag_id, t - t % ${size}, count(*)::int, round(sum(value)::numeric, 6), min(value), max(value)
            FROM (SELECT monitor_id, tag_id, value, round(extract(epoch FROM ts) * 1000)::bigint AS t FROM pipelines.readings) r GROUP BY 1, 2, 3)`,
      );
      expect([table, diff.rows]).toEqual([table, []]);
    }
  });

  it("answers the history and export errors and scope", async () => {
    const range = q(BASE, BASE + DAY);
    const cases: [string, number, string][] = [
      [`/_cm/monitors/not-a-monitor/_history?tag=Pressure&${range}`, 400, "Invalid Monitor Id"],
      [`/_cm/monitors/${h.pump.id}/_history?tag=Nope&${range}`, 400, "Invalid tag"],
      [`/_cm/monitors/${h.pump.id}/_history?${range}`, 400, "Insufficient inputs"],
      [`/_cm/monitors/${h.pump.id}/_history?tag=Pressure&from=${encodeURIComponent(iso(BASE))}`, 400, "Insufficient date inputs"],
      [`/_cm/monitors/${h.pump.id}/_history?tag=Pressure&from=yesterday&to=today`, 400, "Invalid date format"],
      [`/_cm/monitors/${h.pump.id}/_history?tag=Pressure&${q(BASE + DAY, BASE)}`, 400, "Invalid input: from"],
      [`/_cm/monitors/${h.pump.id}/_history?tag=Pressure&${q(BASE - 401 * DAY, BASE)}`, 400, "Invalid input: to"],
      [`/_cm/monitors/${h.pump.id}/_history?tag=Pressure&${range}&points=0`, 400, "Invalid input: points"],
      [`/_cm/monitors/${h.pump.id}/_history?tag=Pressure&${range}&points=10001`, 400, "Invalid input: points"],
      [`/_cm/monitors/${h.pump.id}/_export?from=${encodeURIComponent(iso(BASE))}`, 400, "Insufficient date inputs"],
      [`/_cm/monitors/${h.pump.id}/_export?${q(BASE - 32 * DAY, BASE)}`, 400, "Invalid input: to"],
    ];
    for (const [path, status, message] of cases) {
      const res = await t.http("GET", path);
      expect([path, res.status, res.body]).toEqual([path, status, expect.objectContaining(envelope(status, message))]);
    }
    const other = await hierarchy(t, "Other");
    const stranger = await makeUser(t.http, { username: "hist-other@example.com", user_type: "plant-admin", site_id: other.site, plant_id: other.plant });
    const res = await t.http("GET", `/_cm/monitors/${h.pump.id}/_history?tag=Pressure&${range}`, { auth: stranger });
    expect(res).toMatchObject({ status: 400, body: envelope(400, "Invalid Monitor Id") });
  });
});

describe("GET /_cm/monitors/<id>/_export", () => {
  it("streams one CSV row per timestamp, a column per tag, equal to the stored readings across partitions", async () => {
    const from = BASE + 20 * HOUR;
    const to = BASE + 30 * HOUR;
    const res = await t.http<string>("GET", `/_cm/monitors/${h.pump.id}/_export?${q(from, to)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="/);
    const lines = String(res.body).trimEnd().split("\n");
    expect(lines[0]).toBe("timestamp,Pressure,Flow");
    const stored = await pg.query(
      `SELECT round(extract(epoch FROM ts) * 1000)::float8 AS ts, tag_id, value FROM pipelines.readings
        WHERE monitor_id = $1 AND ts >= to_timestamp($2::float8 / 1000) AND ts <= to_timestamp($3::float8 / 1000) ORDER BY ts, tag_id`,
      [h.pump.id, from, to],
    );
    const rows = new Map<number, string[]>();
    for (const r of stored.rows as { ts: number; tag_id: string; value: number }[]) {
      const row = rows.get(r.ts) ?? ["", ""];
      row[r.tag_id === "pressure" ? 0 : 1] = String(r.value);
      rows.set(r.ts, row);
    }
    expect(lines.slice(1)).toEqual([...rows].map(([ts, v]) => `${iso(ts)},${v.join(",")}`));
    expect(lines.length - 1).toBe(10 * 360 + 1);
  });
});
