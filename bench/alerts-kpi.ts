/**
 * `npm run bench:alerts`, case (a): the alarm KPI (`GET /_alerting/alerts/_kpi`) over a site's
 * 1,000,000 alerts (BENCH_ALERTS_KPI_ALERTS), seeded by SQL with generate_series over the last 30
 * days: 20 watchers of 10 triggers each, severities 1-5, a third acknowledged, every trigger's
 * latest alert still active (some for days). Then BENCH_ALERTS_KPI_REQUESTS (50) requests, one at
 * a time, by site over the default 30 days; a few by plant and function alongside. Target on the
 * 2-core machine: p99 under 500 ms.
 */
import { Client } from "pg";
import { startTestNode, type TestNode } from "../test/helpers/node";
import { createPlace, pct } from "./alerts-common";

const ALERTS = Number(process.env.BENCH_ALERTS_KPI_ALERTS ?? 1_000_000);
const REQUESTS = Number(process.env.BENCH_ALERTS_KPI_REQUESTS ?? 50);
const WATCHERS = 20;
const TRIGGERS = 200;
const DAYS_MS = 30 * 86_400_000;

async function timed(t: TestNode, query: string): Promise<{ ms: number; alerts: number }> {
  const started = performance.now();
  const res = await t.http<{ alerts: number }>("GET", `/_alerting/alerts/_kpi?${query}`);
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`kpi: ${res.status} ${JSON.stringify(res.body)}`);
  return { ms, alerts: res.body.alerts };
}

const BASELINE_RUNS = 5;

/**
 * The baseline: the totals, top and chattering triggers and the 10-minute windows as they were
 * computed before the rollups, one pass over the site's alerts each (lag over each trigger's
 * openings; a GROUP BY per window), run by SQL with JIT off as they were.
 */
async function rawBaseline(pg: Client, site: string, now: number): Promise<number[]> {
  const from = now - DAYS_MS;
  const ms: number[] = [];
  await pg.query(`SET jit = off`);
  await pg.query(`SET work_mem = '64MB'`);
  for (let i = 0; i < BASELINE_RUNS; i++) {
    const started = performance.now();
    // One connection: the two statements run one after the other (the service runs its four side by side).
    for (const [sql, params] of [
      [
        `SELECT watcher_id, trigger_id, count(*), count(*) FILTER (WHERE severity <= 1), avg(acked_at - start_ts), avg(end_ts - start_ts) FILTER (WHERE state = 'closed'),
                coalesce(bool_or(start_ts - earlier <= 60000), false)
           FROM (SELECT watcher_id, trigger_id, start_ts, severity, acked_at, end_ts, state,
                        lag(start_ts, 2) OVER (PARTITION BY watcher_id, trigger_id ORDER BY start_ts) AS earlier
                   FROM alerting.alerts WHERE site_id = $1 AND start_ts BETWEEN $2 AND $3) o
          GROUP BY watcher_id, trigger_id`,
        [site, from, now],
      ],
      [
        `SELECT max(n), count(*) FILTER (WHERE n >= 10) FROM (SELECT count(*) AS n FROM alerting.alerts WHERE site_id = $1 AND start_ts BETWEEN $2 AND $3
                                                              GROUP BY LEAST((start_ts - $2) / 600000, 4319)) w`,
        [site, from, now],
      ],
    ] as const)
      await pg.query(sql, [...params]);
    ms.push(performance.now() - started);
  }
  return ms;
}

/** Answers whether the p99 met the target. */
export async function kpiBench(): Promise<boolean> {
  const t = await startTestNode({ services: ["api", "auth", "config", "alerting"], env: { LOG_LEVEL: "warn" } });
  const pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  try {
    const { site, plant, fn } = await createPlace(t, "KPI");
    const now = Date.now();
    const seeding = performance.now();
    // Alert i opens at now - 30 d + i × step; trigger i % 200 of watcher (i % 200) % 20. The last
    // alert of each trigger stays active, so the stale list and the unacknowledged count have work.
    await pg.query(
      `INSERT INTO alerting.alerts (alert_id, watcher_id, watcher_name, trigger_id, trigger_name, is_hidden, function_id, plant_id, site_id,
                                    asset_id, asset, monitor_id, monitor, tag, type_of_data, severity, state, start_ts, end_ts, note, details,
                                    opened_at, ack_state, acked_by, acked_at)
       SELECT md5('kpi' || i)::uuid, ('00000000-0000-4000-8000-' || lpad(((i % $5) % $6)::text, 12, '0'))::uuid, 'Bench watch',
              't' || (i % $5), 'Trigger ' || (i % $5), 0, $1, $2, $3, NULL, '', 'm', 'Monitor', '{}', 'Process', 1 + (i % 5),
              CASE WHEN i > $4 - $5 THEN 'active' ELSE 'closed' END, s,
              CASE WHEN i > $4 - $5 THEN NULL ELSE s + 30000 + (i % 600) * 1000 END, '', '{}', s,
              CASE WHEN i % 3 = 0 THEN 'acknowledged' ELSE 'unacknowledged' END,
              CASE WHEN i % 3 = 0 THEN 'ops@example.com' END,
              CASE WHEN i % 3 = 0 THEN s + 45000 + (i % 120) * 1000 END
         FROM generate_series(1, $4::int) AS i, LATERAL (SELECT ($7::bigint - $8::bigint) + (i::bigint * $8::bigint) / $4::bigint AS s) x`,
      [fn, plant, site, ALERTS, TRIGGERS, WATCHERS, now, DAYS_MS],
    );
    // A few standing for days: the oldest active alerts of 5 triggers move back 3 days.
    await pg.query(`UPDATE alerting.alerts SET start_ts = start_ts - 3 * 86400000 WHERE state = 'active' AND trigger_id IN ('t1', 't2', 't3', 't4', 't5')`);
    // As autovacuum leaves a table after a bulk insert: statistics, and the visibility map that index-only scans rely on.
    await pg.query(`VACUUM ANALYZE alerting.alerts`);
    await pg.query(`VACUUM ANALYZE alerting.alert_kpi_minutes`);
    await pg.query(`VACUUM ANALYZE alerting.alert_kpi_hours`);
    console.log(`KPI: seeded ${ALERTS.toLocaleString("en")} alerts of one site in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);

    await timed(t, `site_id=${site}`); // warm-up: plans, caches
    const latencies: number[] = [];
    let counted = 0;
    for (let i = 0; i < REQUESTS; i++) {
      const r = await timed(t, `site_id=${site}`);
      latencies.push(r.ms);
      counted = r.alerts;
    }
    const byPlant = await timed(t, `plant_id=${plant}`);
    const byFunction = await timed(t, `function_id=${fn}`);
    const baseline = await rawBaseline(pg, site, now);
    const p99 = pct(latencies, 0.99);
    console.log(
      `KPI over ${counted.toLocaleString("en")} alerts of a site (${REQUESTS} requests, one at a time): p50 ${pct(latencies, 0.5).toFixed(0)} ms, ` +
        `p99 ${p99.toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms (target p99 < 500 ms); by plant ${byPlant.ms.toFixed(0)} ms, by function ${byFunction.ms.toFixed(0)} ms`,
    );
    console.log(
      `KPI baseline, the same figures read from the alerts table (the statements before the rollups, ${BASELINE_RUNS} runs by SQL, no HTTP): ` +
        `p50 ${pct(baseline, 0.5).toFixed(0)} ms, max ${Math.max(...baseline).toFixed(0)} ms; rollups p50 ${(pct(baseline, 0.5) / pct(latencies, 0.5)).toFixed(1)}× faster`,
    );
    // The range ends at each request's now: the oldest few seeded alerts drift out of it, and 5 were moved back before it.
    return p99 < 500 && counted >= ALERTS * 0.99;
  } finally {
    await pg.end().catch(() => undefined);
    await t.stop();
  }
}
