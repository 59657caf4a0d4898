/**
 * The KPI's rollups (migrations.ts, AlertingKpiRollupR) against the alerts they sum: a random
 * three-day history written in shuffled batches (so predecessors arrive after their followers),
 * then acknowledged, closed and partly deleted by plain SQL. The rollups must equal the raw
 * aggregates, and the KPI answer for ranges that fall on no bucket edge must equal the figures
 * worked out here from the rows themselves with kpi.ts's definitions.
 */
import { randomUUID } from "node:crypto";
import { Client } from "pg";
import { startTestNode, type TestNode } from "../helpers/node";
import { makePlace, type Place } from "./alerting-fixtures";

let t: TestNode;
let pg: Client;
let place: Place;
let secondFunction: string;

const MIN = 60_000;
const HOUR = 60 * MIN;
const WINDOW = 10 * MIN;
const NOW = Date.now();
const START = NOW - 3 * 24 * HOUR;
const WATCHERS = ["00000000-0000-4000-8000-0000000000a1", "00000000-0000-4000-8000-0000000000a2", "00000000-0000-4000-8000-0000000000a3"];

/** A small seeded generator (mulberry32): the same history on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = random(20261125);

interface Row {
  alert_id: string;
  watcher_id: string;
  trigger_id: string;
  trigger_name: string;
  severity: number;
  function_id: string | null;
  plant_id: string;
  site_id: string;
  state: string;
  start_ts: number;
  end_ts: number | null;
  acked_at: number | null;
}

/** Per trigger: openings in bursts (some 3 within 60 s: chatter) and lulls; each closed before the next, the last still active. */
function history(): Row[] {
  const rows: Row[] = [];
  const used = new Set<number>();
  for (const [w, watcher_id] of WATCHERS.entries()) {
    for (let k = 1; k <= 4; k++) {
      const function_id = w === 2 ? null : w === 1 && k > 2 ? secondFunction : place.function_id;
      let ts = START + Math.floor(rnd() * HOUR);
      const mine: Row[] = [];
      while (ts < NOW - 10 * MIN) {
        while (used.has(ts)) ts += 1;
        used.add(ts);
        mine.push({
          alert_id: randomUUID(),
          watcher_id,
          trigger_id: `t${k}`,
          trigger_name: `Trigger ${w}.${k} v${mine.length % 3}`,
          severity: 1 + Math.floor(rnd() * 5),
          function_id,
          plant_id: place.plant_id,
          site_id: place.site_id,
          state: "closed",
          start_ts: ts,
          end_ts: null,
          acked_at: null,
        });
        ts += rnd() < 0.3 ? 5_000 + Math.floor(rnd() * 25_000) : Math.floor(rnd() * 40 * MIN);
      }
      mine.forEach((r, i) => {
        const next = mine[i + 1]?.start_ts;
        if (next === undefined) r.state = "active";
        else r.end_ts = r.start_ts + Math.min(next - r.start_ts - 1, 1 + Math.floor(rnd() * 20 * MIN));
      });
      rows.push(...mine);
    }
  }
  return rows;
}

async function insert(batch: Row[]): Promise<void> {
  await pg.query(
    `INSERT INTO alerting.alerts (alert_id, watcher_id, watcher_name, trigger_id, trigger_name, is_hidden, function_id, plant_id, site_id,
                                  asset_id, asset, monitor_id, monitor, tag, type_of_data, severity, state, start_ts, end_ts, note, details, opened_at)
     SELECT alert_id, watcher_id, 'Seeded', trigger_id, trigger_name, 0, function_id, plant_id, site_id,
            NULL, '', 'm', 'Monitor', '{}', 'Process', severity, state, start_ts, end_ts, '', '{}', start_ts
       FROM json_to_recordset($1::json) AS x(alert_id uuid, watcher_id uuid, trigger_id text, trigger_name text, function_id text,
                                             plant_id text, site_id text, severity int, state text, start_ts bigint, end_ts bigint)`,
    [JSON.stringify(batch)],
  );
}

async function stored(): Promise<Row[]> {
  const found = await pg.query<Row>(
    `SELECT alert_id, watcher_id, trigger_id, trigger_name, severity, function_id, plant_id, site_id, state,
            start_ts::float8 AS start_ts, end_ts::float8 AS end_ts, acked_at::float8 AS acked_at
       FROM alerting.alerts`,
  );
  return found.rows;
}

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "alerting"] });
  pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  place = await makePlace(t.http, "rollup");
  const fn = await t.http<{ id: string }>("POST", "/_config/functions", { body: { function_name: "Second rollup", plant_id: place.plant_id } });
  secondFunction = fn.body.id;

  const rows = history();
  // Shuffled, in batches of 1 to 40 rows: many predecessors arrive after the openings they precede.
  const shuffled = [...rows].sort(() => rnd() - 0.5);
  for (let i = 0; i < shuffled.length; ) {
    const n = 1 + Math.floor(rnd() * 40);
    await insert(shuffled.slice(i, i + n));
    i += n;
  }
  // People acknowledge; one statement for many (as the bulk route does), one at a time for others.
  const toAck = rows.filter(() => rnd() < 0.4);
  await pg.query(`UPDATE alerting.alerts SET ack_state = 'acknowledged', acked_by = 'ops', acked_at = start_ts + 45000 + (start_ts % 7) * 1000 WHERE alert_id = ANY($1::uuid[])`, [
    toAck.slice(0, 200).map((r) => r.alert_id),
  ]);
  for (const r of toAck.slice(200, 260)) await pg.query(`UPDATE alerting.alerts SET acked_at = start_ts + 90000, ack_state = 'acknowledged' WHERE alert_id = $1`, [r.alert_id]);
  // Two active alerts close; a note changes nothing counted; a few alerts are deleted.
  await pg.query(`UPDATE alerting.alerts SET state = 'closed', end_ts = start_ts + 123456 WHERE state = 'active' AND trigger_id IN ('t1', 't2')`);
  await pg.query(`UPDATE alerting.alerts SET note = 'seen' WHERE trigger_id = 't3'`);
  await pg.query(`DELETE FROM alerting.alerts WHERE alert_id = ANY($1::uuid[])`, [rows.filter(() => rnd() < 0.03).map((r) => r.alert_id)]);
}, 120_000);

afterAll(async () => {
  await pg?.end();
  await t?.stop();
});

const round2 = (x: number) => Math.round(x * 100) / 100;
const percent = (part: number, whole: number) => (whole === 0 ? 0 : round2((100 * part) / whole));

/** The KPI of kpi.ts's definitions (but the standing figures), worked out from the rows. */
function expectedKpi(all: Row[], inPlace: (r: Row) => boolean, from: number, to: number) {
  const rows = all.filter((r) => inPlace(r) && r.start_ts >= from && r.start_ts <= to);
  const windows = Math.max(1, Math.ceil((to - from) / WINDOW));
  const perWindow = new Map<number, number>();
  for (const r of rows) {
    const w = Math.min(Math.floor((r.start_ts - from) / WINDOW), windows - 1);
    perWindow.set(w, (perWindow.get(w) ?? 0) + 1);
  }
  const counts = [...perWindow.values()];
  const byTrigger = new Map<string, Row[]>();
  for (const r of rows) byTrigger.set(`${r.watcher_id}|${r.trigger_id}`, [...(byTrigger.get(`${r.watcher_id}|${r.trigger_id}`) ?? []), r]);
  // Chatter: an opening in range whose second predecessor (same trigger, any time) is in range and within 60 s.
  const chatters = (mine: Row[]) => {
    const trigger = all.filter((a) => a.watcher_id === mine[0].watcher_id && a.trigger_id === mine[0].trigger_id).sort((a, b) => a.start_ts - b.start_ts);
    return mine.some((o) => {
      const i = trigger.findIndex((a) => a.alert_id === o.alert_id);
      const p2 = trigger[i - 2];
      return p2 !== undefined && p2.start_ts >= from && o.start_ts - p2.start_ts <= 60_000;
    });
  };
  const triggers = [...byTrigger.values()].map((mine) => {
    const newest = [...mine].sort((a, b) => b.start_ts - a.start_ts)[0];
    return { watcher_id: newest.watcher_id, trigger_id: newest.trigger_id, trigger_name: newest.trigger_name, count: mine.length, chatters: chatters(mine) };
  });
  triggers.sort((a, b) => b.count - a.count || a.watcher_id.localeCompare(b.watcher_id) || a.trigger_id.localeCompare(b.trigger_id));
  const acked = rows.filter((r) => r.acked_at !== null);
  const closed = rows.filter((r) => r.state === "closed" && r.end_ts !== null);
  const mean = (xs: number[]) => (xs.length === 0 ? null : round2(xs.reduce((s, x) => s + x, 0) / xs.length / 1000));
  return {
    alerts: rows.length,
    per_10min_avg: round2(rows.length / windows),
    per_10min_peak: counts.length ? Math.max(...counts) : 0,
    flood_percent: percent(counts.filter((n) => n >= 10).length, windows),
    priority_distribution: {
      high: percent(rows.filter((r) => r.severity <= 1).length, rows.length),
      medium: percent(rows.filter((r) => r.severity === 2).length, rows.length),
      low: percent(rows.filter((r) => r.severity >= 3).length, rows.length),
    },
    top_triggers: triggers.slice(0, 10).map((x) => ({ trigger_id: x.trigger_id, trigger_name: x.trigger_name, watcher_id: x.watcher_id, count: x.count, percent: percent(x.count, rows.length) })),
    chattering: triggers.filter((x) => x.chatters).map((x) => ({ trigger_id: x.trigger_id, trigger_name: x.trigger_name, count: x.count })),
    mean_time_to_ack_s: mean(acked.map((r) => (r.acked_at as number) - r.start_ts)),
    mean_time_to_close_s: mean(closed.map((r) => (r.end_ts as number) - r.start_ts)),
  };
}

describe("KPI rollups", () => {
  it("equal the aggregates of the stored alerts, per minute and per trigger and hour", async () => {
    const minutes = await pg.query(
      `SELECT site_id, plant_id, function_id, minute, openings FROM alerting.alert_kpi_minutes WHERE openings <> 0
       EXCEPT
       SELECT site_id, plant_id, coalesce(function_id, ''), start_ts - start_ts % 60000, count(*)::int FROM alerting.alerts GROUP BY 1, 2, 3, 4`,
    );
    expect(minutes.rows).toEqual([]);
    const [{ n: minuteRows }] = (await pg.query(`SELECT count(*)::int AS n FROM alerting.alert_kpi_minutes WHERE openings <> 0`)).rows;
    const [{ n: rawMinutes }] = (await pg.query(`SELECT count(DISTINCT (site_id, plant_id, function_id, start_ts - start_ts % 60000))::int AS n FROM alerting.alerts`)).rows;
    expect(minuteRows).toBe(rawMinutes);

    const hours = await pg.query(
      `WITH raw AS (
         SELECT site_id, plant_id, coalesce(function_id, '') AS function_id, watcher_id, trigger_id, start_ts - start_ts % 3600000 AS hour,
                count(*)::int AS openings, count(*) FILTER (WHERE severity <= 1)::int AS high, count(*) FILTER (WHERE severity = 2)::int AS medium,
                count(*) FILTER (WHERE severity >= 3)::int AS low, coalesce(sum(acked_at - start_ts), 0)::bigint AS ack_sum, count(acked_at)::int AS ack_n,
                coalesce(sum(end_ts - start_ts) FILTER (WHERE state = 'closed'), 0)::bigint AS close_sum,
                count(end_ts) FILTER (WHERE state = 'closed')::int AS close_n, max(start_ts) AS last_start,
                max(p2) FILTER (WHERE start_ts - p2 <= 60000) AS chatter_from
           FROM (SELECT *, lag(start_ts, 2) OVER (PARTITION BY watcher_id, trigger_id ORDER BY start_ts) AS p2 FROM alerting.alerts) a
          GROUP BY 1, 2, 3, 4, 5, 6)
       SELECT 'rollup' AS side, * FROM (SELECT site_id, plant_id, function_id, watcher_id, trigger_id, hour, openings, high, medium, low, ack_sum, ack_n,
                                               close_sum, close_n, last_start, chatter_from FROM alerting.alert_kpi_hours WHERE openings <> 0
                                        EXCEPT SELECT * FROM raw) x
       UNION ALL
       SELECT 'raw', * FROM (SELECT * FROM raw EXCEPT SELECT site_id, plant_id, function_id, watcher_id, trigger_id, hour, openings, high, medium, low,
                                                             ack_sum, ack_n, close_sum, close_n, last_start, chatter_from FROM alerting.alert_kpi_hours) y`,
    );
    expect(hours.rows).toEqual([]);
  });

  it("answer the KPI of ranges on no bucket edge as the stored alerts do, by site, plant and function", async () => {
    const all = await stored();
    const places: [string, (r: Row) => boolean][] = [
      [`site_id=${place.site_id}`, (r) => r.site_id === place.site_id],
      [`plant_id=${place.plant_id}`, (r) => r.plant_id === place.plant_id],
      [`function_id=${place.function_id}`, (r) => r.function_id === place.function_id],
      [`function_id=${secondFunction}`, (r) => r.function_id === secondFunction],
    ];
    const ranges: [number, number][] = [
      [START - HOUR, NOW], // everything
      [START + 17 * HOUR + 13 * MIN + 7_777, START + 50 * HOUR + 1_234], // unaligned, many whole hours
      [START + 5 * HOUR + 59 * MIN + 59_999, START + 6 * HOUR + 3 * MIN], // across one hour edge, within minutes
      [START + 30 * HOUR + 20_500, START + 30 * HOUR + 41 * MIN], // inside one hour
      [START + 8 * HOUR, START + 20 * HOUR - 1], // on bucket edges
    ];
    const iso = (ms: number) => new Date(ms).toISOString();
    for (const [from, to] of ranges) {
      for (const [query, inPlace] of places) {
        const res = await t.http<Record<string, unknown>>("GET", `/_alerting/alerts/_kpi?${query}&from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}`);
        expect(res.status).toBe(200);
        const { from: _f, to: _t, stale: _s, unacknowledged_active: _u, ...counted } = res.body;
        expect([query, iso(from), counted]).toEqual([query, iso(from), expectedKpi(all, inPlace, from, to)]);
      }
    }
  });
});
