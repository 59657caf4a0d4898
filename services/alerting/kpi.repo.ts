/**
 * The KPI's SQL (kpi.ts has the definitions): aggregates and window functions over the alerts
 * table, so a site's million alerts never leave PostgreSQL. Four statements, run side by side;
 * each reads the alerts of one place (function, plant or site) in the caller's scope, through an
 * index that answers it alone (migrations.ts, AlertingKpiC2): the range's openings are read twice,
 * once per trigger in start order and once by start, never from the table itself.
 */
import type { Scope } from "../../lib/access";
import { CHATTER_OPENINGS, CHATTER_WITHIN_MS, FLOOD_OPENINGS, STALE_AFTER_MS, STALE_MAX, TOP_TRIGGERS, WINDOW_MS, windowCount, type KpiRows } from "./kpi";
import { scopeClause, type Sql, type Transactional } from "./repo";
import type { Range } from "./time";

/** The column a KPI request names its place by; never taken from the request as text. */
export type PlaceColumn = "function_id" | "plant_id" | "site_id";

export interface KpiQuery extends Range {
  column: PlaceColumn;
  place_id: string;
  scope: Scope;
}

const rows = async <T>(q: Sql, sql: string, params: unknown[]): Promise<T[]> => (await q.query(sql, params)) as T[];

/** `<column> = $1 [scope]`: the place's alerts the caller may see; `params` gets its values. */
function placeWhere(p: KpiQuery, params: unknown[]): string {
  params.push(p.place_id);
  return `${p.column} = $1${scopeClause(p.scope, params)}`;
}

/** `... AND start_ts BETWEEN $a AND $b`: the place's alerts that opened in the range. */
function rangeWhere(p: KpiQuery, params: unknown[]): string {
  const where = placeWhere(p, params);
  params.push(p.from, p.to);
  return `${where} AND start_ts BETWEEN $${params.length - 1} AND $${params.length}`;
}

/**
 * A statement that reads a range's every opening, with its own settings: memory for a plan that
 * sorts after all (the planned ones do not), and no JIT (costed past jit_above_cost, compiling the
 * plan takes longer than running it).
 */
async function scan<T>(db: Transactional, sql: string, params: unknown[]): Promise<T[]> {
  return db.transaction(async (tx) => {
    await tx.query(`SET LOCAL work_mem = '64MB'`);
    await tx.query(`SET LOCAL jit = off`);
    return rows<T>(tx, sql, params);
  });
}

/** The newest name of each (watcher, trigger) row, as its latest alert carried it. */
const NEWEST_NAME = `(SELECT n.trigger_name FROM alerts n
                       WHERE n.watcher_id = g.watcher_id AND n.trigger_id = g.trigger_id AND n.start_ts = g.last
                       ORDER BY n.alert_id LIMIT 1)`;

/** Per (watcher, trigger), in one pass over the place's index in (watcher_id, trigger_id, start_ts) order: no sort. */
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
 * The totals, the most frequent triggers and the chattering ones from one scan: each trigger's
 * openings in start order (lag 2: an opening and the two before it within 60 s chatters), summed
 * per trigger, then over all triggers (a mean is the sum over the count, as avg() computes it).
 * Only the top and the chattering triggers leave PostgreSQL; the totals ride on each row.
 */
async function perTrigger(db: Transactional, p: KpiQuery): Promise<Pick<KpiRows, "totals" | "top" | "chattering">> {
  const params: unknown[] = [];
  const where = rangeWhere(p, params);
  params.push(CHATTER_OPENINGS - 1, CHATTER_WITHIN_MS, TOP_TRIGGERS);
  const n = params.length;
  const found = await scan<TriggerRow>(
    db,
      `WITH t AS (
         SELECT watcher_id, trigger_id, count(*)::int AS count, max(start_ts) AS last,
                count(*) FILTER (WHERE severity <= 1) AS high, count(*) FILTER (WHERE severity = 2) AS medium,
                count(*) FILTER (WHERE severity >= 3) AS low,
                sum(acked_at - start_ts) AS ack_sum, count(acked_at) AS ack_n,
                sum(end_ts - start_ts) FILTER (WHERE state = 'closed') AS close_sum, count(end_ts) FILTER (WHERE state = 'closed') AS close_n,
                coalesce(bool_or(start_ts - earlier <= $${n - 1}), false) AS chatters
           FROM (SELECT watcher_id, trigger_id, start_ts, severity, acked_at, end_ts, state,
                        lag(start_ts, $${n - 2}) OVER (PARTITION BY watcher_id, trigger_id ORDER BY start_ts) AS earlier
                   FROM alerts WHERE ${where}) o
          GROUP BY watcher_id, trigger_id),
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

/** Openings per 10-minute window from `from`; an opening exactly at `to` falls in the last window. */
async function windows(db: Transactional, p: KpiQuery): Promise<KpiRows["windows"]> {
  const params: unknown[] = [];
  const where = rangeWhere(p, params);
  params.push(WINDOW_MS, windowCount(p) - 1, FLOOD_OPENINGS);
  const n = params.length;
  const [found] = await scan<KpiRows["windows"]>(
    db,
    `SELECT coalesce(max(openings), 0)::int AS peak, count(*) FILTER (WHERE openings >= $${n})::int AS floods
       FROM (SELECT count(*) AS openings FROM alerts WHERE ${where}
              GROUP BY LEAST((start_ts - $${n - 4}) / $${n - 2}, $${n - 1})) w`,
    params,
  );
  return found;
}

/** Active now for more than 24 h, the longest-standing first (a trigger has at most one active alert). */
async function stale(q: Sql, p: KpiQuery, now: number): Promise<KpiRows["stale"]> {
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

async function unacknowledgedActive(q: Sql, p: KpiQuery): Promise<number> {
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
