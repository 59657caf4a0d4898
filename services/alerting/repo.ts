/**
 * The alerting schema's queries, all of them: watchers, their triggers' evaluation rows, series
 * clocks and alerts. Raw SQL on the service's own schema (search_path), every value a bound
 * parameter, through the TypeORM DataSource's `query()` (no entities). The alerts stream's outbox
 * (stream_outbox) is written by the stream layer (lib/streams/outbox.ts), not here.
 */
import type { DataSource } from "typeorm";
import type { Scope } from "../../lib/access";
import type { AlertRow } from "./alerts";
import { initialState, type TriggerRule, type TriggerState } from "./evaluator";
import { compileRule, type TriggerBody, type WatcherRow } from "./watchers";

export interface Sql {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

/** The database as the evaluation uses it: transactions, and the hot path's prepared read. */
export interface Transactional extends Sql {
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
  /** The same as `query`, as a named prepared statement: planned once per connection (the hot path's read). */
  prepared?(name: string, sql: string, params: unknown[]): Promise<unknown[]>;
}

interface PgPool {
  query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

export function transactional(db: DataSource): Transactional {
  // TypeORM's postgres driver keeps node-postgres' pool as `master`; named statements go through it.
  const pool = (db.driver as unknown as { master?: PgPool }).master;
  return {
    transaction: (work) => db.transaction((m) => work(m)),
    query: (sql, params) => db.query(sql, params),
    prepared: pool ? async (name, text, values) => (await pool.query({ name, text, values })).rows : undefined,
  };
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
/** The gateways whose hidden (system) watcher has a trigger on a monitor. */
export async function hiddenGatewaysWatching(q: Sql, monitor_id: string): Promise<string[]> {
  const found = await rows<{ gateway_id: string }>(
    q,
    `SELECT DISTINCT w.gateway_id FROM trigger_series s JOIN watchers w USING (watcher_id)
      WHERE w.is_hidden = 1 AND s.monitor_id = $1`,
    [monitor_id],
  );
  return found.map((r) => r.gateway_id);
}

/** The watchers of the given ids, in no particular order. */
export async function watchersById(q: Sql, watcher_ids: string[]): Promise<WatcherRow[]> {
  return rows<WatcherRow>(q, `SELECT * FROM watchers WHERE watcher_id = ANY($1::uuid[])`, [watcher_ids]);
}

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

// ---- live evaluation: series clocks and trigger states ----------------------------------------

/** A series' clock: the newest reading timestamp taken of a monitor's tag (epoch ms). */
export interface SeriesClock {
  monitor_id: string;
  tag_id: string;
  ts: number;
}

/** A trigger's evaluation row: its compiled rule and its state. */
export interface TriggerRow {
  watcher_id: string;
  trigger_id: string;
  rule: TriggerRule;
  state: TriggerState;
}

/** Moves series clocks forward (never back), in the given transaction. */
export async function advanceClocks(q: Sql, clocks: SeriesClock[]): Promise<void> {
  if (clocks.length === 0) return;
  await q.query(
    `INSERT INTO series_clock (monitor_id, tag_id, ts) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
     ON CONFLICT (monitor_id, tag_id) DO UPDATE SET ts = GREATEST(series_clock.ts, EXCLUDED.ts)`,
    [clocks.map((n) => n.monitor_id), clocks.map((n) => n.tag_id), clocks.map((n) => n.ts)],
  );
}

/**
 * One round trip for a batch's series (parallel arrays of monitor and tag ids): their clocks,
 * and the triggers they concern with rule and state. The hot path's read, prepared when it can be.
 */
export async function batchState(db: Transactional, monitor_ids: string[], tag_ids: string[]): Promise<{ clocks: SeriesClock[]; triggers: TriggerRow[] }> {
  const sql = `WITH s AS (SELECT * FROM unnest($1::text[], $2::text[]) AS s(monitor_id, tag_id))
     SELECT c.monitor_id, c.tag_id, c.ts, NULL::uuid AS watcher_id, NULL::text AS trigger_id, NULL::jsonb AS rule, NULL::jsonb AS state
       FROM series_clock c JOIN s USING (monitor_id, tag_id)
     UNION ALL
     SELECT NULL, NULL, NULL, t.watcher_id, t.trigger_id, t.rule, t.state
       FROM triggers t
      WHERE (t.watcher_id, t.trigger_id) IN (SELECT x.watcher_id, x.trigger_id FROM trigger_series x JOIN s USING (monitor_id, tag_id))`;
  const params = [monitor_ids, tag_ids];
  const found = (await (db.prepared ? db.prepared("alerting_batch_read", sql, params) : db.query(sql, params))) as (TriggerRow & {
    monitor_id: string | null;
    tag_id: string | null;
    ts: string | null;
  })[];
  const clocks: SeriesClock[] = [];
  const triggers: TriggerRow[] = [];
  for (const r of found) {
    if (r.watcher_id) triggers.push({ watcher_id: r.watcher_id, trigger_id: r.trigger_id, rule: r.rule, state: r.state });
    else clocks.push({ monitor_id: r.monitor_id ?? "", tag_id: r.tag_id ?? "", ts: Number(r.ts) });
  }
  return { clocks, triggers };
}

/** Locks the triggers' rows in key order (replicas never deadlock) and reads them as they now stand. */
export async function lockTriggers(tx: Sql, keys: { watcher_id: string; trigger_id: string }[]): Promise<TriggerRow[]> {
  return rows<TriggerRow>(
    tx,
    `SELECT watcher_id, trigger_id, rule, state FROM triggers
      WHERE (watcher_id, trigger_id) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))
      ORDER BY watcher_id, trigger_id FOR UPDATE`,
    [keys.map((c) => c.watcher_id), keys.map((c) => c.trigger_id)],
  );
}

export async function writeTriggerStates(tx: Sql, triggers: TriggerRow[]): Promise<void> {
  await tx.query(
    `UPDATE triggers t SET state = s.state
       FROM unnest($1::uuid[], $2::text[], $3::jsonb[]) AS s(watcher_id, trigger_id, state)
      WHERE t.watcher_id = s.watcher_id AND t.trigger_id = s.trigger_id`,
    [triggers.map((c) => c.watcher_id), triggers.map((c) => c.trigger_id), triggers.map((c) => JSON.stringify(c.state))],
  );
}

// ---- alerts ----------------------------------------------------------------------------------

/** Closes a trigger's active alert at `end` (never before its start); answers what it closed. */
export async function closeTriggerAlert(tx: Sql, watcher_id: string, trigger_id: string, end: number): Promise<{ alert_id: string; severity: number }[]> {
  const res = (await tx.query(
    `UPDATE alerts SET state = 'closed', end_ts = GREATEST($3::bigint, start_ts)
      WHERE watcher_id = $1 AND trigger_id = $2 AND state = 'active' RETURNING alert_id, severity`,
    [watcher_id, trigger_id, end],
  )) as [{ alert_id: string; severity: number }[], number];
  // TypeORM answers an UPDATE with [rows, affected].
  return res[0];
}

/** An alert as it opens: its names as they are now, its `details` kept as JSON. */
export interface OpeningAlert {
  alert_id: string;
  watcher_id: string;
  watcher_name: string;
  trigger_id: string;
  trigger_name: string;
  is_hidden: number;
  function_id: string | null;
  plant_id: string;
  site_id: string;
  asset_id: string | null;
  asset: string;
  monitor_id: string;
  monitor: string;
  tag: Record<string, string>;
  type_of_data: string;
  severity: number;
  start_ts: number;
  details: object;
  opened_at: number;
}

/** Opens an alert; false when the trigger has an active one already (its unique index). */
export async function insertAlert(tx: Sql, a: OpeningAlert): Promise<boolean> {
  const inserted = (await tx.query(
    `INSERT INTO alerts (alert_id, watcher_id, watcher_name, trigger_id, trigger_name, is_hidden, function_id, plant_id, site_id,
                         asset_id, asset, monitor_id, monitor, tag, type_of_data, severity, state, start_ts, end_ts, note, details, opened_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 'active', $17, NULL, '', $18, $19)
     ON CONFLICT DO NOTHING RETURNING alert_id`,
    [
      a.alert_id,
      a.watcher_id,
      a.watcher_name,
      a.trigger_id,
      a.trigger_name,
      a.is_hidden,
      a.function_id,
      a.plant_id,
      a.site_id,
      a.asset_id,
      a.asset,
      a.monitor_id,
      a.monitor,
      JSON.stringify(a.tag),
      a.type_of_data,
      a.severity,
      a.start_ts,
      JSON.stringify(a.details),
      a.opened_at,
    ],
  )) as unknown[];
  return Array.isArray(inserted) && inserted.length > 0;
}

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
