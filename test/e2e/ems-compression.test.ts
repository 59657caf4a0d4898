/**
 * EMS's readings key kept compressed (services/ems/hours.ts; docs/architecture.md, "The
 * historian"): an energy monitor's readings ingested, the hours past HISTORY_COMPRESS_AFTER moved
 * by the job into one row per tag and hour; a redelivery of the same readings, raw and compressed
 * hours alike, counts nothing twice; a late reading for a compressed hour is counted once and
 * merged by the next run; retention and a monitor's deletion remove the compressed hours; and
 * `ems.storage.monitors` shares the tables' bytes out among the monitors.
 */
import { Client } from "pg";
import type { DataSource } from "typeorm";
import { compressReadings, decodeHour } from "../../services/ems/hours";
import { startTestNode, type TestNode } from "../helpers/node";
import { eventually, hierarchy, type Hierarchy } from "./pipelines-fixtures";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const STEP = 10_000;
const NOW_HOUR = Math.floor(Date.now() / HOUR) * HOUR;
/** Six hours ending three hours ago, kept by the site's two days of retention. */
const RECENT = { from: NOW_HOUR - 9 * HOUR, to: NOW_HOUR - 3 * HOUR };
/** Four hours three days back, past the site's retention once it is run. */
const OLD = { from: NOW_HOUR - 3 * DAY, to: NOW_HOUR - 3 * DAY + 4 * HOUR };

type Reading = { monitor_id: string; tag_id: string; ts: number; value: number };

let t: TestNode;
let pg: Client;
let h: Hierarchy;
let other: Hierarchy;
const all: Reading[] = [];
/** Readings of this hour: never due for compression while the test runs. */
const fresh: Reading[] = [];

/** A kWh counter and a kW power every 10 s over [from, to). */
function readings(monitor_id: string, span: { from: number; to: number }, kwhFrom: number): Reading[] {
  const out: Reading[] = [];
  let kwh = kwhFrom;
  for (let ts = span.from; ts < span.to; ts += STEP) {
    kwh += 0.125;
    out.push({ monitor_id, tag_id: "kwh", ts, value: kwh });
    out.push({ monitor_id, tag_id: "kw", ts, value: 40 + ((ts / STEP) % 7) });
  }
  return out;
}

const ingest = async (batch: Reading[]): Promise<number> => {
  let applied = 0;
  for (let i = 0; i < batch.length; i += 5000) {
    applied += (await t.node.broker.call<{ applied: number }, unknown>("ems.ingest.readings", { readings: batch.slice(i, i + 5000) })).applied;
  }
  return applied;
};

/** The job's run at this instant with HISTORY_COMPRESS_AFTER 1 h (the node's own is 400 days: what is compressed when is the test's to say). */
const compress = (): Promise<number> => compressReadings((t.node.broker.getLocalService("ems") as unknown as { db: DataSource }).db, Date.now(), HOUR);

const rollups = async (monitor_id: string) =>
  (
    await pg.query(
      `SELECT tag_id, bucket::float8, n, sum, min, max, first_ts::float8, first_value, last_ts::float8, last_value FROM ems.rollups WHERE monitor_id = $1 ORDER BY tag_id, bucket`,
      [monitor_id],
    )
  ).rows;
const daily = async (monitor_id: string) =>
  (await pg.query(`SELECT tag_id, day::float8, n, sum, increase FROM ems.rollups_daily WHERE monitor_id = $1 ORDER BY tag_id, day`, [monitor_id])).rows;
const raw = async (monitor_id: string) => (await pg.query(`SELECT tag_id, ts::float8 AS ts FROM ems.readings WHERE monitor_id = $1 ORDER BY tag_id, ts`, [monitor_id])).rows;
const hours = async (monitor_id: string) =>
  (await pg.query(`SELECT tag_id, start::float8 AS start, n, data FROM ems.compressed_hours WHERE monitor_id = $1 ORDER BY tag_id, start`, [monitor_id])).rows as {
    tag_id: string;
    start: number;
    n: number;
    data: Buffer;
  }[];
const iso = (ms: number) => new Date(ms).toISOString();
const metrics = async (monitor_id: string) => {
  const res = await t.http("GET", `/_ems/monitor/${monitor_id}?from=${encodeURIComponent(iso(OLD.from - DAY))}&to=${encodeURIComponent(iso(NOW_HOUR + HOUR))}`);
  expect(res.status).toBe(200);
  return res.body;
};

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "ems"], env: { HISTORY_COMPRESS_AFTER: "400d" } });
  pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  h = await hierarchy(t, "EmsCompress", 2);
  other = await hierarchy(t, "EmsCompressOther");
  all.push(...readings(h.meter.id, OLD, 1000), ...readings(h.meter.id, RECENT, 5000));
  fresh.push(...readings(h.meter.id, { from: NOW_HOUR, to: NOW_HOUR + 3 * STEP }, 9000));
  expect(await ingest([...all, ...fresh])).toBe(all.length + fresh.length);
  expect(await ingest(readings(other.meter.id, RECENT, 100))).toBe(2 * 6 * 360);
}, 120_000);

afterAll(async () => {
  await pg?.end();
  await t?.stop();
});

describe("ems's readings key, compressed", () => {
  let before: { rollups: unknown[]; daily: unknown[]; metrics: unknown };

  it("moves every hour past HISTORY_COMPRESS_AFTER into one row per tag and hour holding its instants, the figures unchanged", async () => {
    before = { rollups: await rollups(h.meter.id), daily: await daily(h.meter.id), metrics: await metrics(h.meter.id) };
    expect(before.rollups.length).toBeGreaterThan(0);
    const sent = (await raw(h.meter.id)).length;
    expect(sent).toBe(all.length + fresh.length);

    // Two tags: four old hours and six recent ones each, and the other site's meter's six.
    expect(await compress()).toBe(2 * (4 + 6) + 2 * 6);
    expect(await raw(h.meter.id)).toEqual(fresh.map((r) => ({ tag_id: r.tag_id, ts: r.ts })).sort((a, b) => a.tag_id.localeCompare(b.tag_id) || a.ts - b.ts));
    const rows = await hours(h.meter.id);
    expect(rows.map((r) => [r.tag_id, r.start, r.n])).toEqual(
      ["kw", "kwh"].flatMap((tag) =>
        [OLD, RECENT].flatMap((span) => Array.from({ length: (span.to - span.from) / HOUR }, (_, i) => [tag, span.from + i * HOUR, 360])),
      ),
    );
    for (const r of rows) expect(decodeHour(r.data)).toEqual(all.filter((x) => x.tag_id === r.tag_id && x.ts >= r.start && x.ts < r.start + HOUR).map((x) => x.ts));
    // A steady hour of 360 instants takes a few bytes, not 360 rows of a key.
    expect(Math.max(...rows.map((r) => r.data.length))).toBeLessThan(64);
    expect(await compress()).toBe(0);

    expect(await rollups(h.meter.id)).toEqual(before.rollups);
    expect(await metrics(h.meter.id)).toEqual(before.metrics);
  });

  it("counts nothing twice when the same readings come again, from raw and compressed hours alike", async () => {
    expect(await ingest([...all, ...fresh])).toBe(0);
    expect(await ingest([...fresh.slice(1), all[5]!, all[all.length - 1]!, fresh[0]!])).toBe(0);
    expect(await rollups(h.meter.id)).toEqual(before.rollups);
    expect(await daily(h.meter.id)).toEqual(before.daily);
    expect(await metrics(h.meter.id)).toEqual(before.metrics);
    // The redelivered readings of compressed hours leave no raw row behind.
    expect((await raw(h.meter.id)).length).toBe(fresh.length);
  });

  it("counts a late reading for a compressed hour once, and merges it into the hour's row on the next run", async () => {
    const hour = RECENT.from + 2 * HOUR;
    const late: Reading = { monitor_id: h.meter.id, tag_id: "kw", ts: hour + 5, value: 41.5 };
    const quarter = Math.floor(late.ts / (15 * MIN)) * 15 * MIN;
    const nOf = async () => (await rollups(h.meter.id)).find((r) => r.tag_id === "kw" && r.bucket === quarter)!.n as number;
    const n = await nOf();
    // With a redelivered one of the same hour in the same batch: only the late one counts.
    expect(await ingest([late, all.find((r) => r.tag_id === "kw" && r.ts === hour + STEP)!])).toBe(1);
    expect(await nOf()).toBe(n + 1);
    expect(await ingest([late])).toBe(0);
    expect((await raw(h.meter.id)).filter((r) => r.ts === late.ts)).toHaveLength(1);

    expect(await compress()).toBe(1);
    expect((await raw(h.meter.id)).filter((r) => r.ts === late.ts)).toHaveLength(0);
    const row = (await hours(h.meter.id)).find((r) => r.tag_id === "kw" && r.start === hour)!;
    expect(row.n).toBe(361);
    expect(decodeHour(row.data)).toEqual([hour, hour + 5, ...Array.from({ length: 359 }, (_, i) => hour + (i + 1) * STEP)]);
    expect(await ingest([late])).toBe(0);
    expect(await nOf()).toBe(n + 1);
  });

  it("tells the storage route each monitor's bytes, adding up to the tables' whole size", async () => {
    const res = await t.node.broker.call<{ monitors: { monitor_id: string; bytes: number }[] }, Record<string, never>>("ems.storage.monitors", {});
    expect(res.monitors.map((m) => m.monitor_id).sort()).toEqual([h.meter.id, other.meter.id].sort());
    const size = await pg.query(
      `SELECT sum(pg_total_relation_size(('ems.' || t)::regclass))::float8 AS bytes FROM unnest(ARRAY['readings', 'compressed_hours', 'rollups', 'rollups_daily']) AS t`,
    );
    const total = res.monitors.reduce((n, m) => n + m.bytes, 0);
    expect(Math.abs(total - size.rows[0].bytes)).toBeLessThanOrEqual(res.monitors.length);
    // The meter with ten hours of each tag and a day's rollups more holds more than the one with six.
    const of = (id: string) => res.monitors.find((m) => m.monitor_id === id)!.bytes;
    expect(of(h.meter.id)).toBeGreaterThan(of(other.meter.id));
  });

  it("drops the compressed hours past the site's retention, and does not take their readings again", async () => {
    const report = await t.node.broker.call<{ ran: boolean; deleted: number }, { force: boolean }>("ems.retention.run", { force: true });
    expect(report).toEqual({ ran: true, deleted: 2 * 4 * 360 });
    const left = await hours(h.meter.id);
    expect(left.every((r) => r.start >= RECENT.from)).toBe(true);
    expect(left).toHaveLength(2 * 6);
    expect(await hours(other.meter.id)).toHaveLength(2 * 6);
    const rollupsLeft = await rollups(h.meter.id);
    expect(await ingest(all.filter((r) => r.ts < OLD.to))).toBe(0);
    expect(await rollups(h.meter.id)).toEqual(rollupsLeft);
  });

  it("forgets a deleted monitor's compressed hours", async () => {
    const res = await t.http("DELETE", `/_config/monitors/${other.meter.id}`);
    expect(res.status).toBe(200);
    expect(await eventually(() => hours(other.meter.id), (rows) => rows.length === 0, 100, 50)).toEqual([]);
    expect(await rollups(other.meter.id)).toEqual([]);
  });
});
