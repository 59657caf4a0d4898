/**
 * The KPI's SQL (kpi.ts has the definitions): sums over the rollups that the alerts table's
 * triggers keep (migrations/0010-kpi-rollup.ts), so a site's million alerts are never read
 * again: its whole hours per trigger, its whole minutes per place, and the raw alerts only at the
 * range's edges (lib/buckets.ts's bucketPlan, kpi.ts's windowPlan). Four statements, run side by side, each over
 * one place (function, plant or site) in the caller's scope.
 */
import type { Scope } from "../../lib/access";
import { bucketPlan } from "../../lib/buckets";
import { HOUR_MS } from "../../lib/time";
import {
  FLOOD_OPENINGS,
  STALE_AFTER_MS,
  STALE_MAX,
  TOP_TRIGGERS,
  WINDOW_MS,
  windowCount,
  windowPlan,
  type KpiRows,
} from "./kpi";
import { rows, scopeClause, type Queryable, type Transactional } from "./sql";
import type { Range } from "./time";

/** The column a KPI request names its place by; never taken from the request as text. */
export type PlaceColumn = "function_id" | "plant_id" | "site_id";

export interface KpiQuery extends Range {
  column: PlaceColumn;
  place_id: string;
  scope: Scope;
}

/**
 * A statement over rollups with its own settings: no JIT. Estimating the raw edges' joins
 * coarsely, the planner costs the plan past jit_above_cost, and compiling it then takes longer
 * (about 250 ms here) than running it.
 */
async function summed<T>(db: Transactional, sql: string, params: unknown[]): Promise<T[]> {
  return db.transaction(async (tx) => {
    await tx.query(`SET LOCAL jit = off`);
    return rows<T>(tx, sql, params);
  });
}

/** `<column> = $n [scope]`: the place's rows the caller may see (alerts and rollups alike); `params` gets its values. */
function placeWhere(p: KpiQuery, params: unknown[], prefix = ""): string {
  params.push(p.place_id);
  return `${prefix}${p.column} = $${params.length}${scopeClause(p.scope, params, prefix)}`;
}

/** `JOIN unnest(...) r ON start_ts in r`: the alerts that opened in the given inclusive ranges. */
function rawJoin(ranges: Range[], params: unknown[]): string {
  params.push(ranges.map((r) => r.from), ranges.map((r) => r.to));
  return `JOIN unnest($${params.length - 1}::bigint[], $${params.length}::bigint[]) AS r(s, e) ON a.start_ts BETWEEN r.s AND r.e`;
}

/** `hour >= $a AND hour < $b`, or nothing at all when the range holds no whole bucket. */
function wholeWhere(whole: { from: number; end: number } | null, column: string, params: unknown[]): string {
  if (whole === null) return "false";
  params.push(whole.from, whole.end);
  return `${column} >= $${params.length - 1} AND ${column} < $${params.length}`;
}

/** The newest name of each (watcher, trigger) row, as its latest alert carried it. */
const NEWEST_NAME = `(SELECT n.trigger_name FROM alerts n
                       WHERE n.watcher_id = g.watcher_id AND n.trigger_id = g.trigger_id AND n.start_ts = g.last
                       ORDER BY n.alert_id LIMIT 1)`;

interface TriggerRow {
  watcher_id: string;
  trigger_id: string;
  trigger_name: string;
  count: number;
  top: boolean;
  chatters: boolean;
  alerts: number;
  high: number;
  medium: number;
  low: number;
  ack_mean_ms: string | null;
  close_mean_ms: string | null;
}

/**
 * The totals, the most frequent triggers and the chattering ones: per trigger, its whole hours'
 * rollups plus its raw openings at the range's edges (each with its own chatter_from, as the
 * rollup keeps it), then over all triggers (a mean is the sum over the count, as avg() computes
 * it). Only the top and the chattering triggers leave PostgreSQL; the totals ride on each row.
 */
async function perTrigger(db: Transactional, p: KpiQuery): Promise<Pick<KpiRows, "totals" | "top" | "chattering">> {
  const plan = bucketPlan(p, HOUR_MS);
  const params: unknown[] = [];
  const hours = `${placeWhere(p, params)} AND ${wholeWhere(plan.whole, "hour", params)}`;
  const edges = `${rawJoin(plan.raw, params)} WHERE ${placeWhere(p, params, "a.")}`;
  params.push(p.from, TOP_TRIGGERS);
  const n = params.length;
  const found = await summed<TriggerRow>(
    db,
    `WITH parts AS (
       SELECT watcher_id, trigger_id, openings, high, medium, low, ack_sum, ack_n, close_sum, close_n, last_start, chatter_from
         FROM alert_kpi_hours WHERE ${hours}
       UNION ALL
       SELECT a.watcher_id, a.trigger_id, 1, (a.severity <= 1)::int, (a.severity = 2)::int, (a.severity >= 3)::int,
              coalesce(a.acked_at - a.start_ts, 0), (a.acked_at IS NOT NULL)::int,
              CASE WHEN a.state = 'closed' THEN coalesce(a.end_ts - a.start_ts, 0) ELSE 0 END, (a.state = 'closed' AND a.end_ts IS NOT NULL)::int,
              a.start_ts, alert_chatter_from(a.watcher_id, a.trigger_id, a.alert_id, a.start_ts)
         FROM alerts a ${edges}),
     t AS (
       SELECT watcher_id, trigger_id, sum(openings)::int AS count, max(last_start) AS last,
              sum(high) AS high, sum(medium) AS medium, sum(low) AS low, sum(ack_sum) AS ack_sum, sum(ack_n) AS ack_n,
              sum(close_sum) AS close_sum, sum(close_n) AS close_n, coalesce(max(chatter_from) >= $${n - 1}, false) AS chatters
         FROM parts GROUP BY watcher_id, trigger_id HAVING sum(openings) > 0),
     g AS (
       SELECT t.*, row_number() OVER (ORDER BY count DESC, watcher_id, trigger_id) AS rank,
              sum(count) OVER () AS t_alerts, sum(high) OVER () AS t_high, sum(medium) OVER () AS t_medium, sum(low) OVER () AS t_low,
              sum(ack_sum) OVER () AS t_ack_sum, sum(ack_n) OVER () AS t_ack_n,
              sum(close_sum) OVER () AS t_close_sum, sum(close_n) OVER () AS t_close_n
         FROM t)
     SELECT g.watcher_id, g.trigger_id, ${NEWEST_NAME} AS trigger_name, g.count, g.rank <= $${n} AS top, g.chatters,
            g.t_alerts::int AS alerts, g.t_high::int AS high, g.t_medium::int AS medium, g.t_low::int AS low,
            g.t_ack_sum / nullif(g.t_ack_n, 0) AS ack_mean_ms, g.t_close_sum / nullif(g.t_close_n, 0) AS close_mean_ms
       FROM g WHERE g.rank <= $${n} OR g.chatters
      ORDER BY g.count DESC, g.watcher_id, g.trigger_id`,
    params,
  );
  const first = found[0];
  return {
    totals: first
      ? { alerts: first.alerts, high: first.high, medium: first.medium, low: first.low, ack_mean_ms: first.ack_mean_ms, close_mean_ms: first.close_mean_ms }
      : { alerts: 0, high: 0, medium: 0, low: 0, ack_mean_ms: null, close_mean_ms: null },
    top: found.filter((r) => r.top).map((r) => ({ watcher_id: r.watcher_id, trigger_id: r.trigger_id, trigger_name: r.trigger_name, count: r.count })),
    chattering: found.filter((r) => r.chatters).map((r) => ({ trigger_id: r.trigger_id, trigger_name: r.trigger_name, count: r.count })),
  };
}

/** Openings per 10-minute window from `from`: whole uncut minutes from the rollup, the rest raw; an opening exactly at `to` falls in the last window. */
async function windows(db: Transactional, p: KpiQuery): Promise<KpiRows["windows"]> {
  const plan = windowPlan(p);
  const params: unknown[] = [];
  let minutes = `${placeWhere(p, params)} AND ${wholeWhere(plan.whole, "minute", params)}`;
  params.push(p.from, WINDOW_MS, windowCount(p) - 1);
  const [from, size, last] = [params.length - 2, params.length - 1, params.length];
  if (plan.splitBase !== null) {
    params.push(plan.splitBase);
    minutes += ` AND (minute - $${params.length}) % $${size} <> 0`;
  }
  const edges = `${rawJoin(plan.raw, params)} WHERE ${placeWhere(p, params, "a.")}`;
  params.push(FLOOD_OPENINGS);
  const [found] = await summed<KpiRows["windows"]>(
    db,
    `SELECT coalesce(max(openings), 0)::int AS peak, count(*) FILTER (WHERE openings >= $${params.length})::int AS floods
       FROM (SELECT w, sum(n) AS openings
               FROM (SELECT LEAST((minute - $${from}) / $${size}, $${last}) AS w, openings AS n FROM alert_kpi_minutes WHERE ${minutes}
                     UNION ALL
                     SELECT LEAST((a.start_ts - $${from}) / $${size}, $${last}), 1 FROM alerts a ${edges}) x
              GROUP BY w) y`,
    params,
  );
  return found;
}

/** Active now for more than 24 h, the longest-standing first (a trigger has at most one active alert). */
async function stale(q: Queryable, p: KpiQuery, now: number): Promise<KpiRows["stale"]> {
  const params: unknown[] = [];
  const where = placeWhere(p, params);
  params.push(now - STALE_AFTER_MS, STALE_MAX);
  return rows(
    q,
    `SELECT alert_id, trigger_name, start_ts FROM alerts
      WHERE ${where} AND state = 'active' AND start_ts < $${params.length - 1}
      ORDER BY start_ts, alert_id LIMIT $${params.length}`,
    params,
  );
}

async function unacknowledgedActive(q: Queryable, p: KpiQuery): Promise<number> {
  const params: unknown[] = [];
  const where = placeWhere(p, params);
  const [found] = await rows<{ n: number }>(
    q,
    `SELECT count(*)::int AS n FROM alerts WHERE ${where} AND state = 'active' AND ack_state = 'unacknowledged'`,
    params,
  );
  return found.n;
}

export async function kpiRows(db: Transactional, p: KpiQuery, now: number): Promise<KpiRows> {
  const [triggers, w, standing, unack] = await Promise.all([perTrigger(db, p), windows(db, p), stale(db, p, now), unacknowledgedActive(db, p)]);
  return { ...triggers, windows: w, stale: standing, unacknowledged_active: unack };
}
