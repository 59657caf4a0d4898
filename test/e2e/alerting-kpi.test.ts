/**
 * Alarm-system KPIs (docs/api-tour.md, "Alarm management") over a history seeded by SQL with known
 * times; every expected figure is worked out by hand below from that history.
 */
import { randomUUID } from "node:crypto";
import { Client } from "pg";
import { startTestNode, type TestNode } from "../helpers/node";
import { envelope } from "../helpers/envelope";
import { makePlace, makeUser, type Place } from "./alerting-fixtures";

let t: TestNode;
let place: Place;
let other: Place;
let secondPlant: string;

const MIN = 60_000;
const HOUR = 60 * MIN;
const NOW = Date.now();
// The range: one hour, six 10-minute windows, an hour before the test runs.
const F = Math.floor((NOW - 2 * HOUR) / 1000) * 1000;
const TO = F + HOUR;
const W1 = "00000000-0000-4000-8000-00000000000a";
const W2 = "00000000-0000-4000-8000-00000000000b";
const T4_ALERT = randomUUID();

interface Seed {
  watcher_id: string;
  trigger_id: string;
  trigger_name: string;
  severity: number;
  start: number;
  end?: number;
  acked_at?: number;
  place?: Place;
  alert_id?: string;
}

/**
 * The history:
 * - t1 (W1, severity 1) chatters: 12 openings 10 s apart from F, each closed after 5 s; its
 *   newest alert carries the trigger's new name.
 * - t2 (W1, severity 2): openings at F+15, +25, +35 min and exactly at `to`, each closed after
 *   120 s; the first two acknowledged 60 s after opening.
 * - t3 (W2, severity 3): opened F+50 min, still active, unacknowledged.
 * - t6 (W1, severity 2): opened F+55 min, still active, acknowledged after 30 s.
 * - t4 (W2, severity 5): opened 72 h ago (before the range), still active, unacknowledged: stale.
 * - outside: an alert 1 ms before `from`, and one in another site inside the range.
 */
function history(): Seed[] {
  const seeds: Seed[] = [];
  for (let i = 0; i < 12; i++) {
    seeds.push({ watcher_id: W1, trigger_id: "t1", trigger_name: i === 11 ? "Bearing hot" : "Hot", severity: 1, start: F + i * 10_000, end: F + i * 10_000 + 5_000 });
  }
  [15, 25, 35, 60].forEach((m, i) =>
    seeds.push({ watcher_id: W1, trigger_id: "t2", trigger_name: "Rough", severity: 2, start: F + m * MIN, end: F + m * MIN + 120_000, acked_at: i < 2 ? F + m * MIN + 60_000 : undefined }),
  );
  seeds.push({ watcher_id: W2, trigger_id: "t3", trigger_name: "Leak", severity: 3, start: F + 50 * MIN });
  seeds.push({ watcher_id: W1, trigger_id: "t6", trigger_name: "Acked", severity: 2, start: F + 55 * MIN, acked_at: F + 55 * MIN + 30_000 });
  seeds.push({ watcher_id: W2, trigger_id: "t4", trigger_name: "Seal", severity: 5, start: NOW - 72 * HOUR, alert_id: T4_ALERT });
  seeds.push({ watcher_id: W2, trigger_id: "t5", trigger_name: "Early", severity: 1, start: F - 1, end: F + 1000 });
  seeds.push({ watcher_id: W2, trigger_id: "t5", trigger_name: "Elsewhere", severity: 1, start: F + 1000, end: F + 2000, place: other });
  return seeds;
}

async function seed(seeds: Seed[]): Promise<void> {
  const c = new Client({ connectionString: t.db.url });
  await c.connect();
  try {
    for (const s of seeds) {
      const p = s.place ?? place;
      await c.query(
        `INSERT INTO alerting.alerts (alert_id, watcher_id, watcher_name, trigger_id, trigger_name, is_hidden, function_id, plant_id, site_id,
                                      asset_id, asset, monitor_id, monitor, tag, type_of_data, severity, state, start_ts, end_ts, note, details, opened_at,
                                      ack_state, acked_by, acked_at)
         VALUES ($1, $2, 'Seeded', $3, $4, 0, $5, $6, $7, $8, 'Pump', $9, 'Bearing', '{}', 'Condition', $10, $11, $12, $13, '', '{}', $12,
                 $14, $15, $16)`,
        [
          s.alert_id ?? randomUUID(),
          s.watcher_id,
          s.trigger_id,
          s.trigger_name,
          p.function_id,
          p.plant_id,
          p.site_id,
          p.asset_id,
          p.monitor_id,
          s.severity,
          s.end === undefined ? "active" : "closed",
          s.start,
          s.end ?? null,
          s.acked_at === undefined ? "unacknowledged" : "acknowledged",
          s.acked_at === undefined ? null : "ops@example.com",
          s.acked_at ?? null,
        ],
      );
    }
  } finally {
    await c.end();
  }
}

const iso = (ms: number) => new Date(ms).toISOString();
const range = `from=${encodeURIComponent(iso(F))}&to=${encodeURIComponent(iso(TO))}`;

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "alerting"] });
  place = await makePlace(t.http, "k1");
  other = await makePlace(t.http, "k2");
  const plant = await t.http<{ id: string }>("POST", "/_config/plants", { body: { plant_name: "Plant k1-b", site_id: place.site_id } });
  secondPlant = plant.body.id;
  await seed(history());
});
afterAll(async () => {
  await t?.stop();
});

const expected = () => ({
  from: iso(F).replace(/\.\d{3}Z$/, "+00:00"),
  to: iso(TO).replace(/\.\d{3}Z$/, "+00:00"),
  // In range: t1 12, t2 4, t3 1, t6 1.
  alerts: 18,
  // 18 openings over 6 windows.
  per_10min_avg: 3,
  // Window 0 holds t1's 12 openings (a flood); window 5 holds t3, t6 and t2's opening at `to`.
  per_10min_peak: 12,
  flood_percent: 16.67, // 1 of 6
  priority_distribution: { high: 66.67, medium: 27.78, low: 5.56 }, // 12, 4 + 1, 1 of 18
  top_triggers: [
    { trigger_id: "t1", trigger_name: "Bearing hot", watcher_id: W1, count: 12, percent: 66.67 },
    { trigger_id: "t2", trigger_name: "Rough", watcher_id: W1, count: 4, percent: 22.22 },
    { trigger_id: "t6", trigger_name: "Acked", watcher_id: W1, count: 1, percent: 5.56 },
    { trigger_id: "t3", trigger_name: "Leak", watcher_id: W2, count: 1, percent: 5.56 },
  ],
  chattering: [{ trigger_id: "t1", trigger_name: "Bearing hot", count: 12 }],
  stale: [{ alert_id: T4_ALERT, trigger_name: "Seal", active_hours: expect.closeTo(72, 1) }],
  mean_time_to_ack_s: 50, // (60 + 60 + 30) / 3
  mean_time_to_close_s: 33.75, // (12 × 5 + 4 × 120) / 16
  unacknowledged_active: 2, // t3 and t4 (t6 is acknowledged)
});

describe("GET /_alerting/alerts/_kpi", () => {
  it("answers the figures of a seeded history, computed by hand, for its function, plant and site alike", async () => {
    for (const q of [`function_id=${place.function_id}`, `plant_id=${place.plant_id}`, `site_id=${place.site_id}`]) {
      const res = await t.http("GET", `/_alerting/alerts/_kpi?${q}&${range}`);
      expect({ q, status: res.status }).toEqual({ q, status: 200 });
      expect(res.body).toEqual(expected());
    }
  });

  it("defaults to the last 30 days, and answers zeros and nulls for a place without alerts", async () => {
    const res = await t.http<{ from: string; to: string }>("GET", `/_alerting/alerts/_kpi?plant_id=${secondPlant}`);
    expect(res.status).toBe(200);
    const from = Date.parse(res.body.from);
    const to = Date.parse(res.body.to);
    expect(to - from).toBe(30 * 24 * HOUR);
    expect(Math.abs(to - Date.now())).toBeLessThan(60_000);
    expect(res.body).toEqual({
      from: res.body.from,
      to: res.body.to,
      alerts: 0,
      per_10min_avg: 0,
      per_10min_peak: 0,
      flood_percent: 0,
      priority_distribution: { high: 0, medium: 0, low: 0 },
      top_triggers: [],
      chattering: [],
      stale: [],
      mean_time_to_ack_s: null,
      mean_time_to_close_s: null,
      unacknowledged_active: 0,
    });
  });

  it("shows a plant user only its plant: the site's figures without other plants' alerts, another plant as unknown", async () => {
    const user = await makeUser(t.http, { username: "kpi-plant-b@example.com", user_type: "plant-admin", site_id: place.site_id, plant_id: secondPlant });
    const site = await t.http<{ alerts: number; unacknowledged_active: number }>("GET", `/_alerting/alerts/_kpi?site_id=${place.site_id}&${range}`, { auth: user });
    expect(site.status).toBe(200);
    expect([site.body.alerts, site.body.unacknowledged_active]).toEqual([0, 0]);
    const plant = await t.http("GET", `/_alerting/alerts/_kpi?plant_id=${place.plant_id}`, { auth: user });
    expect(plant).toMatchObject({ status: 400, body: envelope(400, "Plant does not exist") });
    const fn = await t.http("GET", `/_alerting/alerts/_kpi?function_id=${place.function_id}`, { auth: user });
    expect(fn).toMatchObject({ status: 400, body: envelope(400, "Function does not exist") });
    const otherSite = await t.http("GET", `/_alerting/alerts/_kpi?site_id=${other.site_id}`, { auth: user });
    expect(otherSite).toMatchObject({ status: 400, body: envelope(400, "Site does not exist") });
  });

  it("answers the KPI errors", async () => {
    const cases: [string, string][] = [
      ["", "Insufficient inputs"],
      [`function_id=${place.function_id}&site_id=${place.site_id}`, "Excess inputs"],
      [`site_id=${place.site_id}&colour=red`, "Excess inputs"],
      [`site_id=${place.site_id}&from=yesterday`, "Invalid date format"],
      [`site_id=${place.site_id}&to=2026-13-45`, "Invalid date format"],
      [`site_id=${place.site_id}&from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z`, "Invalid input: from"],
      [`function_id=${randomUUID()}`, "Function does not exist"],
      [`plant_id=${randomUUID()}`, "Plant does not exist"],
      [`site_id=not-an-id`, "Site does not exist"],
    ];
    for (const [q, message] of cases) {
      const res = await t.http("GET", `/_alerting/alerts/_kpi?${q}`);
      expect({ q, status: res.status, body: res.body }).toEqual({ q, status: 400, body: envelope(400, message) });
    }
  });
});
