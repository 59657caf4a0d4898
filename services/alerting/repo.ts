/**
 * The alerting schema's queries: watchers, their triggers' evaluation rows, alerts. Raw SQL on
 * the service's own schema (search_path), every value a bound parameter.
 */
import type { Scope } from "../../lib/access";
import type { AlertRow } from "./alerts";
import { initialState, type TriggerRule, type TriggerState } from "./evaluator";
import { compileRule, type TriggerBody, type WatcherRow } from "./watchers";

export interface Sql {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

const rows = async <T>(q: Sql, sql: string, params: unknown[] = []): Promise<T[]> => (await q.query(sql, params)) as T[];

/** `AND site_id = $n [AND plant_id = $m]` for a caller's scope; appends its values to `params`. */
export function scopeClause(scope: Scope, params: unknown[], prefix = ""): string {
  if (scope.kind === "all") return "";
  params.push(scope.site_id);
  let clause = ` AND ${prefix}site_id = $${params.length}`;
  if (scope.kind === "plant") {
    params.push(scope.plant_id);
    clause += ` AND ${prefix}plant_id = $${params.length}`;
  }
  return clause;
}

// ---- watchers ---------------------------------------------------------------------------------

export async function getWatcher(q: Sql, watcher_id: string, lock = false): Promise<WatcherRow | null> {
  const found = await rows<WatcherRow>(q, `SELECT * FROM watchers WHERE watcher_id = $1${lock ? " FOR UPDATE" : ""}`, [watcher_id]);
  return found[0] ?? null;
}

export async function watcherOnGateway(q: Sql, gateway_id: string, is_hidden: number): Promise<WatcherRow | null> {
  const found = await rows<WatcherRow>(q, `SELECT * FROM watchers WHERE gateway_id = $1 AND is_hidden = $2`, [gateway_id, is_hidden]);
  return found[0] ?? null;
}

export async function insertWatcher(q: Sql, w: WatcherRow): Promise<void> {
  await q.query(
    `INSERT INTO watchers (watcher_id, watcher_name, function_id, plant_id, site_id, gateway_id, is_enabled, is_hidden, triggers, created_at_time, last_update_time)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [w.watcher_id, w.watcher_name, w.function_id, w.plant_id, w.site_id, w.gateway_id, w.is_enabled, w.is_hidden, JSON.stringify(w.triggers), w.created_at_time, w.last_update_time],
  );
}

export async function updateWatcher(q: Sql, w: WatcherRow): Promise<void> {
  await q.query(
    `UPDATE watchers SET watcher_name = $2, function_id = $3, plant_id = $4, site_id = $5, gateway_id = $6,
            is_enabled = $7, triggers = $8, last_update_time = $9
      WHERE watcher_id = $1`,
    [w.watcher_id, w.watcher_name, w.function_id, w.plant_id, w.site_id, w.gateway_id, w.is_enabled, JSON.stringify(w.triggers), w.last_update_time],
  );
}

export async function deleteWatcher(q: Sql, watcher_id: string, now: number): Promise<void> {
  await closeActiveAlerts(q, watcher_id, null, now);
  await q.query(`DELETE FROM watchers WHERE watcher_id = $1`, [watcher_id]);
}

export interface WatcherQuery {
  function_id: string;
  is_hidden: number;
  limit?: number;
  offset?: number;
}

export async function listWatchers(q: Sql, p: WatcherQuery): Promise<{ rows: WatcherRow[]; total: number }> {
  const [{ total }] = await rows<{ total: number }>(
    q,
    `SELECT count(*)::int AS total FROM watchers WHERE function_id = $1 AND is_hidden = $2`,
    [p.function_id, p.is_hidden],
  );
  const found = await rows<WatcherRow>(
    q,
    `SELECT * FROM watchers WHERE function_id = $1 AND is_hidden = $2
      ORDER BY created_at_time, watcher_id LIMIT $3 OFFSET $4`,
    [p.function_id, p.is_hidden, p.limit ?? null, p.offset ?? 0],
  );
  return { rows: found, total };
}

/** `total_alerts` and `latest_alert_date` of each watcher, counted from the alerts themselves. */
export async function alertStats(q: Sql, watcher_ids: string[]): Promise<Map<string, { total: number; latest: number | null }>> {
  const found = await rows<{ watcher_id: string; total: number; latest: string | null }>(
    q,
    `SELECT watcher_id, count(*)::int AS total, max(start_ts) AS latest FROM alerts WHERE watcher_id = ANY($1::uuid[]) GROUP BY watcher_id`,
    [watcher_ids],
  );
  return new Map(found.map((r) => [r.watcher_id, { total: r.total, latest: r.latest === null ? null : Number(r.latest) }]));
}

// ---- triggers (evaluation rows) ---------------------------------------------------------------

interface TriggerEvalRow {
  trigger_id: string;
  rule: TriggerRule;
  state: TriggerState;
}

/**
 * Brings a watcher's evaluation rows in line with its triggers, in the caller's transaction.
 * A trigger whose rule is unchanged keeps its state (and its active alert); a changed, removed
 * or disabled one starts afresh and its active alert closes now: the rule that opened it is gone.
 */
export async function syncTriggers(q: Sql, watcher_id: string, triggers: TriggerBody[], enabled: boolean, now: number): Promise<void> {
  const existing = new Map(
    (await rows<TriggerEvalRow>(q, `SELECT trigger_id, rule, state FROM triggers WHERE watcher_id = $1`, [watcher_id])).map((r) => [r.trigger_id, r]),
  );
  const wanted = new Map(enabled ? triggers.map((t) => [t.id, compileRule(t)]) : []);
  const stale: string[] = [];
  for (const [id, row] of existing) {
    const rule = wanted.get(id);
    if (!rule || JSON.stringify(rule) !== JSON.stringify(row.rule)) stale.push(id);
  }
  if (stale.length) {
    await closeActiveAlerts(q, watcher_id, stale, now);
    await q.query(`DELETE FROM triggers WHERE watcher_id = $1 AND trigger_id = ANY($2::text[])`, [watcher_id, stale]);
  }
  for (const [id, rule] of wanted) {
    if (existing.has(id) && !stale.includes(id)) continue;
    await q.query(`INSERT INTO triggers (watcher_id, trigger_id, rule, state) VALUES ($1, $2, $3, $4)`, [
      watcher_id,
      id,
      JSON.stringify(rule),
      JSON.stringify(initialState(rule)),
    ]);
    const series = [...new Set(rule.conditions.map((c) => JSON.stringify([c.monitor_id, c.tag_id])))].map((s) => JSON.parse(s) as [string, string]);
    if (series.length) {
      await q.query(
        `INSERT INTO trigger_series (monitor_id, tag_id, watcher_id, trigger_id)
         SELECT m, t, $3, $4 FROM unnest($1::text[], $2::text[]) AS s(m, t)`,
        [series.map((s) => s[0]), series.map((s) => s[1]), watcher_id, id],
      );
    }
  }
}

// ---- alerts ----------------------------------------------------------------------------------

export async function closeActiveAlerts(q: Sql, watcher_id: string, trigger_ids: string[] | null, now: number): Promise<void> {
  await q.query(
    `UPDATE alerts SET state = 'closed', end_ts = GREATEST($3::bigint, start_ts)
      WHERE watcher_id = $1 AND state = 'active' AND ($2::text[] IS NULL OR trigger_id = ANY($2::text[]))`,
    [watcher_id, trigger_ids, now],
  );
}

export interface AlertQuery {
  function_id?: string;
  trigger_id?: string;
  asset_id?: string;
  is_hidden?: number;
  from: number;
  to: number;
  scope: Scope;
}

function alertWhere(p: AlertQuery, params: unknown[]): string {
  params.push(p.from, p.to);
  let where = `start_ts BETWEEN $1 AND $2`;
  const add = (column: string, value: unknown) => {
    params.push(value);
    where += ` AND ${column} = $${params.length}`;
  };
  if (p.function_id !== undefined) add("function_id", p.function_id);
  if (p.trigger_id !== undefined) add("trigger_id", p.trigger_id);
  if (p.asset_id !== undefined) add("asset_id", p.asset_id);
  if (p.is_hidden !== undefined) add("is_hidden", p.is_hidden);
  return where + scopeClause(p.scope, params);
}

export async function countAlerts(q: Sql, p: AlertQuery): Promise<{ severity: number; n: number }[]> {
  const params: unknown[] = [];
  const where = alertWhere(p, params);
  return rows(q, `SELECT severity, count(*)::int AS n FROM alerts WHERE ${where} GROUP BY severity`, params);
}

export async function listAlerts(q: Sql, p: AlertQuery & { limit?: number; offset?: number }): Promise<{ rows: AlertRow[]; total: number }> {
  const params: unknown[] = [];
  const where = alertWhere(p, params);
  const [{ total }] = await rows<{ total: number }>(q, `SELECT count(*)::int AS total FROM alerts WHERE ${where}`, params);
  params.push(p.limit ?? null, p.offset ?? 0);
  const found = await rows<AlertRow>(
    q,
    `SELECT * FROM alerts WHERE ${where} ORDER BY start_ts DESC, alert_id LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return { rows: found, total };
}

export async function alertStarts(q: Sql, p: AlertQuery): Promise<{ start: number; severity: number }[]> {
  const params: unknown[] = [];
  const where = alertWhere(p, params);
  const found = await rows<{ start_ts: string; severity: number }>(q, `SELECT start_ts, severity FROM alerts WHERE ${where}`, params);
  return found.map((r) => ({ start: Number(r.start_ts), severity: r.severity }));
}

export async function getAlert(q: Sql, alert_id: string): Promise<AlertRow | null> {
  const found = await rows<AlertRow>(q, `SELECT * FROM alerts WHERE alert_id = $1`, [alert_id]);
  return found[0] ?? null;
}

export async function setNote(q: Sql, alert_id: string, note: string): Promise<void> {
  await q.query(`UPDATE alerts SET note = $2 WHERE alert_id = $1`, [alert_id, note]);
}
