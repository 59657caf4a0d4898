/**
 * The alerting schema's queries, all of them: watchers, their triggers' evaluation rows, series
 * clocks and alerts. Raw SQL on the service's own schema (search_path), every value a bound
 * parameter, through the TypeORM DataSource's `query()` (no entities). The alerts stream's outbox
 * (stream_outbox) is written by the stream layer (lib/streams/outbox.ts), not here.
 */
import type { DataSource } from "typeorm";
import type { Scope } from "../../lib/access";
import type { AlertRow } from "./alerts";
import type { AckState, HistoryEntry, LifecycleState } from "./lifecycle";
import type { SeverityKey } from "./severity";
import { initialState, type TriggerRule, type TriggerState } from "./evaluator";
import { compileRule, type NotifyTo, type TriggerBody, type WatcherRow } from "./watchers";
import type { AlertOpened } from "./contract";
import type { AlertStanding, Followup, FollowupKind } from "./followups";
import { dueAfter, watchedSeries, type WatchedSeries } from "./nodata";

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
    const quiet = watchedSeries(rule);
    if (quiet.length) {
      // A new trigger's silence counts from now: its first reading is due within no_data.
      await q.query(
        `INSERT INTO no_data_series (watcher_id, trigger_id, monitor_id, tag_id, no_data_ms, last_seen, due_at)
         SELECT $3, $4, m, t, $5, $6, $7 FROM unnest($1::text[], $2::text[]) AS s(m, t)`,
        [quiet.map((s) => s.monitor_id), quiet.map((s) => s.tag_id), watcher_id, id, rule.noDataMs, now, dueAfter(now, rule.noDataMs ?? 0)],
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

/**
 * Moves series clocks forward (never back), in the given transaction. Rows are taken in key order:
 * two replicas (or a replica's flush and a batch's transaction) writing overlapping series wait
 * for each other instead of deadlocking, each deadlock costing a second (deadlock_timeout) and a
 * failed write. A clock no newer than the stored one writes nothing: with two replicas taking a
 * pipeline's batches in turn, each flush carries every series, half of them behind the other's.
 */
export async function advanceClocks(q: Sql, clocks: SeriesClock[]): Promise<void> {
  if (clocks.length === 0) return;
  await q.query(
    `INSERT INTO series_clock (monitor_id, tag_id, ts)
     SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) AS c(monitor_id, tag_id, ts) ORDER BY monitor_id, tag_id
     ON CONFLICT (monitor_id, tag_id) DO UPDATE SET ts = EXCLUDED.ts WHERE series_clock.ts < EXCLUDED.ts`,
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

/** Closes a trigger's active condition alert at `end` (never before its start); answers what it closed. A no_data alert closes on its own (closeNoDataAlerts). */
export async function closeTriggerAlert(tx: Sql, watcher_id: string, trigger_id: string, end: number): Promise<{ alert_id: string; severity: number }[]> {
  // The history's `closed` entry is written by the same statement (its CTE), in the caller's transaction.
  return rows<{ alert_id: string; severity: number }>(
    tx,
    `WITH closed AS (
       UPDATE alerts SET state = 'closed', end_ts = GREATEST($3::bigint, start_ts)
        WHERE watcher_id = $1 AND trigger_id = $2 AND state = 'active' AND reason = 'condition' RETURNING alert_id, severity, end_ts
     ), logged AS (
       INSERT INTO alert_history (alert_id, at, "by", action) SELECT alert_id, end_ts, NULL, 'closed' FROM closed
     )
     SELECT alert_id, severity FROM closed`,
    [watcher_id, trigger_id, end],
  );
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
  /** `condition` (default) or `no_data` (docs/api-tour.md, "Alarm management"). */
  reason?: "condition" | "no_data";
  /** Opened inside a maintenance window of its watcher (default false). */
  suppressed?: boolean;
}

/** Opens an alert and records `opened` in its history; false when the trigger has an active one already (its unique index). */
export async function insertAlert(tx: Sql, a: OpeningAlert): Promise<boolean> {
  const inserted = (await tx.query(
    `WITH opened AS (
       INSERT INTO alerts (alert_id, watcher_id, watcher_name, trigger_id, trigger_name, is_hidden, function_id, plant_id, site_id,
                           asset_id, asset, monitor_id, monitor, tag, type_of_data, severity, state, start_ts, end_ts, note, details, opened_at,
                           reason, suppressed)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 'active', $17, NULL, '', $18, $19, $20, $21)
       ON CONFLICT DO NOTHING RETURNING alert_id, start_ts
     ), logged AS (
       INSERT INTO alert_history (alert_id, at, "by", action) SELECT alert_id, start_ts, NULL, 'opened' FROM opened
     )
     SELECT alert_id FROM opened`,
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
      a.reason ?? "condition",
      a.suppressed ?? false,
    ],
  )) as unknown[];
  return Array.isArray(inserted) && inserted.length > 0;
}

export async function closeActiveAlerts(q: Sql, watcher_id: string, trigger_ids: string[] | null, now: number): Promise<void> {
  await q.query(
    `WITH closed AS (
       UPDATE alerts SET state = 'closed', end_ts = GREATEST($3::bigint, start_ts)
        WHERE watcher_id = $1 AND state = 'active' AND ($2::text[] IS NULL OR trigger_id = ANY($2::text[]))
        RETURNING alert_id, end_ts
     )
     INSERT INTO alert_history (alert_id, at, "by", action) SELECT alert_id, end_ts, NULL, 'closed' FROM closed`,
    [watcher_id, trigger_ids, now],
  );
}

export interface AlertQuery {
  function_id?: string;
  plant_id?: string;
  site_id?: string;
  trigger_id?: string;
  asset_id?: string;
  is_hidden?: number;
  state?: "active" | "closed";
  ack_state?: AckState;
  severity?: SeverityKey;
  from: number;
  to: number;
  scope: Scope;
}

/** A severity class as stored: lower is more important, 3 and above are low (severity.ts). */
const SEVERITY_SQL: Record<SeverityKey, string> = { high: "severity <= 1", medium: "severity = 2", low: "severity >= 3" };

function alertWhere(p: AlertQuery, params: unknown[]): string {
  params.push(p.from, p.to);
  let where = `start_ts BETWEEN $1 AND $2`;
  const add = (column: string, value: unknown) => {
    params.push(value);
    where += ` AND ${column} = $${params.length}`;
  };
  if (p.function_id !== undefined) add("function_id", p.function_id);
  if (p.plant_id !== undefined) add("plant_id", p.plant_id);
  if (p.site_id !== undefined) add("site_id", p.site_id);
  if (p.trigger_id !== undefined) add("trigger_id", p.trigger_id);
  if (p.asset_id !== undefined) add("asset_id", p.asset_id);
  if (p.is_hidden !== undefined) add("is_hidden", p.is_hidden);
  if (p.state !== undefined) add("state", p.state);
  if (p.ack_state !== undefined) add("ack_state", p.ack_state);
  if (p.severity !== undefined) where += ` AND ${SEVERITY_SQL[p.severity]}`;
  return where + scopeClause(p.scope, params);
}

export async function countAlerts(q: Sql, p: AlertQuery): Promise<{ severity: number; n: number }[]> {
  const params: unknown[] = [];
  const where = alertWhere(p, params);
  return rows(q, `SELECT severity, count(*)::int AS n FROM alerts WHERE ${where} GROUP BY severity`, params);
}

// ---- alert lifecycle (lifecycle.ts) and history ---------------------------------------------

/** An alert row locked for a lifecycle change (the evaluator's close waits, or is waited for). */
export async function lockAlert(tx: Sql, alert_id: string): Promise<AlertRow | null> {
  const found = await rows<AlertRow>(tx, `SELECT * FROM alerts WHERE alert_id = $1 FOR UPDATE`, [alert_id]);
  return found[0] ?? null;
}

/**
 * Writes an operator's lifecycle change and its history entry. Only the operator's columns: the
 * process state (state, end_ts) is the evaluator's, which closes alerts in its own transactions.
 */
export async function writeLifecycle(tx: Sql, alert_id: string, s: LifecycleState, entry: HistoryEntry): Promise<void> {
  await tx.query(
    `UPDATE alerts SET ack_state = $2, acked_by = $3, acked_at = $4, shelved_until = $5, assignee = $6 WHERE alert_id = $1`,
    [alert_id, s.ack_state, s.acked_by, s.acked_at, s.shelved_until, s.assignee],
  );
  await addHistory(tx, alert_id, entry);
}

/** Appends an entry to an alert's history (also for what others record: `notified`, `escalated`). */
export async function addHistory(q: Sql, alert_id: string, entry: HistoryEntry): Promise<void> {
  await q.query(`INSERT INTO alert_history (alert_id, at, "by", action, detail) VALUES ($1, $2, $3, $4, $5)`, [
    alert_id,
    entry.at,
    entry.by,
    entry.action,
    entry.detail,
  ]);
}

/** An alert's history, oldest first. */
export async function alertHistory(q: Sql, alert_id: string): Promise<HistoryEntry[]> {
  const found = await rows<HistoryEntry & { at: string }>(
    q,
    `SELECT at, "by", action, detail FROM alert_history WHERE alert_id = $1 ORDER BY at, seq`,
    [alert_id],
  );
  return found.map((r) => ({ ...r, at: Number(r.at) }));
}

/**
 * Acknowledges, in one statement, those of the ids that exist, are in the caller's scope and are
 * still unacknowledged, with their history entries; answers how many became acknowledged.
 */
/** The alerts it acknowledged, with their place (the audit trail's entries). */
export async function acknowledgeAlerts(
  q: Sql,
  alert_ids: string[],
  scope: Scope,
  by: string | null,
  at: number,
): Promise<{ alert_id: string; site_id: string; plant_id: string }[]> {
  const params: unknown[] = [alert_ids, by, at];
  return rows<{ alert_id: string; site_id: string; plant_id: string }>(
    q,
    // Rows locked in id order: two bulk acknowledgements over the same alerts never deadlock.
    `WITH target AS (
       SELECT alert_id FROM alerts
        WHERE alert_id = ANY($1::uuid[]) AND ack_state = 'unacknowledged'${scopeClause(scope, params)}
        ORDER BY alert_id FOR UPDATE
     ), acked AS (
       UPDATE alerts a SET ack_state = 'acknowledged', acked_by = $2, acked_at = $3
         FROM target t WHERE a.alert_id = t.alert_id AND a.ack_state = 'unacknowledged'
        RETURNING a.alert_id, a.site_id, a.plant_id
     ), logged AS (
       INSERT INTO alert_history (alert_id, at, "by", action) SELECT alert_id, $3, $2, 'acknowledged' FROM acked
     )
     SELECT alert_id, site_id, plant_id FROM acked ORDER BY alert_id`,
    params,
  );
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

/** Replaces the note and records `noted` (the note as its detail) in one statement. */
export async function setNote(q: Sql, alert_id: string, note: string, by: string | null = null, at = Date.now()): Promise<void> {
  await q.query(
    `WITH noted AS (UPDATE alerts SET note = $2 WHERE alert_id = $1 RETURNING alert_id)
     INSERT INTO alert_history (alert_id, at, "by", action, detail) SELECT alert_id, $4, $3, 'noted', $2 FROM noted`,
    [alert_id, note, by, at],
  );
}

// ---- maintenance windows (suppressions) ------------------------------------------------------

/** A maintenance window of a watcher as stored (table `suppressions`), times in epoch ms. */
export interface SuppressionRow {
  id: string;
  watcher_id: string;
  from_ts: string | number;
  to_ts: string | number;
  reason: string;
  created_by: string | null;
  created_at: string | number;
}

export async function insertSuppression(q: Sql, s: SuppressionRow): Promise<void> {
  await q.query(
    `INSERT INTO suppressions (id, watcher_id, from_ts, to_ts, reason, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [s.id, s.watcher_id, s.from_ts, s.to_ts, s.reason, s.created_by, s.created_at],
  );
}

/** Removes a watcher's window; false when the watcher has none of that id. */
export async function deleteSuppression(q: Sql, watcher_id: string, id: string): Promise<boolean> {
  // Through a CTE: TypeORM answers a bare DELETE … RETURNING with [rows, affected].
  const found = await rows<{ id: string }>(q, `WITH d AS (DELETE FROM suppressions WHERE watcher_id = $1 AND id = $2 RETURNING id) SELECT id FROM d`, [
    watcher_id,
    id,
  ]);
  return found.length > 0;
}

/** A watcher's windows, earliest first. */
export async function listSuppressions(q: Sql, watcher_id: string): Promise<SuppressionRow[]> {
  return rows<SuppressionRow>(q, `SELECT * FROM suppressions WHERE watcher_id = $1 ORDER BY from_ts, created_at, id`, [watcher_id]);
}

/** The windows of these watchers that end at or after `since` (the earliest start about to open). */
export async function suppressionWindows(q: Sql, watcher_ids: string[], since: number): Promise<{ watcher_id: string; from: number; to: number }[]> {
  const found = await rows<{ watcher_id: string; from_ts: string; to_ts: string }>(
    q,
    `SELECT watcher_id, from_ts, to_ts FROM suppressions WHERE watcher_id = ANY($1::uuid[]) AND to_ts >= $2`,
    [watcher_ids, since],
  );
  return found.map((r) => ({ watcher_id: r.watcher_id, from: Number(r.from_ts), to: Number(r.to_ts) }));
}

// ---- follow-ups: re-notifications, escalations, shelf ends (followups.ts) --------------------

/**
 * Keeps an opened alert's notice and its follow-ups, in the transaction that opens it. The notice
 * is kept whether or not the trigger has follow-ups: the end of a shelf sends it again.
 */
export async function insertFollowups(tx: Sql, alert_id: string, notice: object, followups: Followup[]): Promise<void> {
  await tx.query(
    `WITH kept AS (INSERT INTO alert_notices (alert_id, notice) VALUES ($1::uuid, $2::jsonb) ON CONFLICT DO NOTHING)
     INSERT INTO alert_followups (alert_id, kind, tier, due_at, every_ms, notify_to)
     SELECT $1::uuid, * FROM unnest($3::text[], $4::int[], $5::bigint[], $6::bigint[], $7::jsonb[])
     ON CONFLICT DO NOTHING`,
    [
      alert_id,
      JSON.stringify(notice),
      followups.map((f) => f.kind),
      followups.map((f) => f.tier),
      followups.map((f) => f.due_at),
      followups.map((f) => f.every_ms),
      followups.map((f) => (f.notify_to ? JSON.stringify(f.notify_to) : null)),
    ],
  );
}

/**
 * A shelf set (`until` epoch ms) or ended by hand (`until` null), in the transaction of the change:
 * the shelf's end is due then (a shelf replaced moves it); unshelving cancels it. Only alerts that
 * notify someone (a kept notice) get one.
 */
export async function scheduleShelfEnd(tx: Sql, alert_id: string, until: number | null): Promise<void> {
  if (until === null) {
    await tx.query(`UPDATE alert_followups SET done = true WHERE alert_id = $1 AND kind = 'shelf' AND NOT done`, [alert_id]);
    return;
  }
  await tx.query(
    `INSERT INTO alert_followups (alert_id, kind, tier, due_at) SELECT alert_id, 'shelf', 0, $2 FROM alert_notices WHERE alert_id = $1
     ON CONFLICT (alert_id, kind, tier) DO UPDATE SET due_at = EXCLUDED.due_at, done = false`,
    [alert_id, until],
  );
}

/** A due follow-up, claimed, with what its alert now is and the notice it sends again. */
export interface DueFollowup {
  followup: Followup;
  alert: AlertStanding;
  watcher_id: string;
  notice: AlertOpened;
}

/**
 * Claims up to `limit` due follow-ups for the caller's transaction: locked, and skipped by every
 * other replica's claim (SKIP LOCKED) until that transaction ends, so each is handled once.
 */
export async function claimDueFollowups(tx: Sql, now: number, limit: number): Promise<DueFollowup[]> {
  const found = await rows<{
    alert_id: string;
    kind: FollowupKind;
    tier: number;
    due_at: string;
    every_ms: string | null;
    notify_to: NotifyTo | null;
    sent: number;
    state: "active" | "closed";
    ack_state: AckState;
    shelved_until: string | null;
    suppressed: boolean;
    watcher_id: string;
    notice: AlertOpened;
  }>(
    tx,
    `SELECT f.alert_id, f.kind, f.tier, f.due_at, f.every_ms, f.notify_to, f.sent,
            a.state, a.ack_state, a.shelved_until, a.suppressed, a.watcher_id, n.notice
       FROM alert_followups f
       JOIN alerts a USING (alert_id)
       JOIN alert_notices n USING (alert_id)
      WHERE NOT f.done AND f.due_at <= $1
      ORDER BY f.due_at
      LIMIT $2
        FOR UPDATE OF f SKIP LOCKED`,
    [now, limit],
  );
  return found.map((r) => ({
    followup: {
      alert_id: r.alert_id,
      kind: r.kind,
      tier: r.tier,
      due_at: Number(r.due_at),
      every_ms: r.every_ms === null ? null : Number(r.every_ms),
      notify_to: r.notify_to,
      sent: r.sent,
    },
    alert: { state: r.state, ack_state: r.ack_state, shelved_until: r.shelved_until === null ? null : Number(r.shelved_until), suppressed: r.suppressed },
    watcher_id: r.watcher_id,
    notice: r.notice,
  }));
}

/** A claimed follow-up handled: due again at `next_due`, or done (null); `sent` counts a sending. */
export async function finishFollowup(tx: Sql, f: Followup, next_due: number | null, sent: boolean): Promise<void> {
  await tx.query(
    `UPDATE alert_followups SET due_at = COALESCE($4, due_at), done = ($4::bigint IS NULL), sent = sent + $5
      WHERE alert_id = $1 AND kind = $2 AND tier = $3`,
    [f.alert_id, f.kind, f.tier, next_due, sent ? 1 : 0],
  );
}

// ---- no_data: silent series (nodata.ts) --------------------------------------------------------

/**
 * The series of a batch were heard at `now` (arrival time): each due again `no_data` later, and
 * no longer silent. Answers the triggers of which a silent series was heard (their no_data alert
 * may close). One statement; rows locked in key order, and a row the job holds is waited for and
 * read as the job left it.
 */
export async function heardFrom(q: Sql, monitor_ids: string[], tag_ids: string[], now: number): Promise<{ watcher_id: string; trigger_id: string }[]> {
  return rows(
    q,
    `WITH s AS (SELECT * FROM unnest($1::text[], $2::text[]) AS s(monitor_id, tag_id)),
     old AS (
       SELECT n.watcher_id, n.trigger_id, n.monitor_id, n.tag_id, n.silent FROM no_data_series n JOIN s USING (monitor_id, tag_id)
        ORDER BY n.watcher_id, n.trigger_id, n.monitor_id, n.tag_id FOR UPDATE OF n
     ), heard AS (
       UPDATE no_data_series n SET last_seen = GREATEST(n.last_seen, $3), due_at = GREATEST(n.last_seen, $3) + n.no_data_ms, silent = false
         FROM old
        WHERE n.watcher_id = old.watcher_id AND n.trigger_id = old.trigger_id AND n.monitor_id = old.monitor_id AND n.tag_id = old.tag_id
        RETURNING n.watcher_id, n.trigger_id, old.silent
     )
     SELECT DISTINCT watcher_id, trigger_id FROM heard WHERE silent`,
    [monitor_ids, tag_ids, now],
  );
}

/** Closes these triggers' active no_data alerts at `end`, those of which no series is silent any more; answers what it closed. */
export async function closeNoDataAlerts(q: Sql, keys: { watcher_id: string; trigger_id: string }[], end: number): Promise<{ alert_id: string; severity: number }[]> {
  return rows(
    q,
    `WITH k AS (SELECT * FROM unnest($1::uuid[], $2::text[]) AS k(watcher_id, trigger_id)),
     closed AS (
       UPDATE alerts a SET state = 'closed', end_ts = GREATEST($3::bigint, a.start_ts)
         FROM k
        WHERE a.watcher_id = k.watcher_id AND a.trigger_id = k.trigger_id AND a.state = 'active' AND a.reason = 'no_data'
          AND NOT EXISTS (SELECT 1 FROM no_data_series n WHERE n.watcher_id = k.watcher_id AND n.trigger_id = k.trigger_id AND n.silent)
        RETURNING a.alert_id, a.severity, a.end_ts
     ), logged AS (
       INSERT INTO alert_history (alert_id, at, "by", action) SELECT alert_id, end_ts, NULL, 'closed' FROM closed
     )
     SELECT alert_id, severity FROM closed`,
    [keys.map((k) => k.watcher_id), keys.map((k) => k.trigger_id), end],
  );
}

/** The gateways of the series due at `now` (not locked: their pipelines' status is asked before the claim). */
export async function dueSilentGateways(q: Sql, now: number): Promise<string[]> {
  const found = await rows<{ gateway_id: string }>(
    q,
    `SELECT DISTINCT w.gateway_id FROM no_data_series n JOIN watchers w USING (watcher_id) WHERE NOT n.silent AND n.due_at <= $1`,
    [now],
  );
  return found.map((r) => r.gateway_id);
}

/**
 * Claims up to `limit` series due at `now` on these gateways for the caller's transaction: locked,
 * and skipped by every other replica's claim (SKIP LOCKED) until that transaction ends.
 */
export async function claimSilentSeries(tx: Sql, now: number, gateway_ids: string[], limit: number): Promise<WatchedSeries[]> {
  const found = await rows<WatchedSeries & { no_data_ms: string; last_seen: string; due_at: string }>(
    tx,
    `SELECT n.watcher_id, n.trigger_id, n.monitor_id, n.tag_id, n.no_data_ms, n.last_seen, n.due_at, w.gateway_id
       FROM no_data_series n JOIN watchers w USING (watcher_id)
      WHERE NOT n.silent AND n.due_at <= $1 AND w.gateway_id = ANY($2::text[])
      ORDER BY n.due_at
      LIMIT $3
        FOR UPDATE OF n SKIP LOCKED`,
    [now, gateway_ids, limit],
  );
  return found.map((r) => ({ ...r, no_data_ms: Number(r.no_data_ms), last_seen: Number(r.last_seen), due_at: Number(r.due_at) }));
}

/** Claimed series: silent (`due_at` null) or due again at `due_at`. */
export async function settleSeries(tx: Sql, series: { s: WatchedSeries; due_at: number | null }[]): Promise<void> {
  if (series.length === 0) return;
  await tx.query(
    `UPDATE no_data_series n SET silent = (x.due_at IS NULL), due_at = COALESCE(x.due_at, n.due_at)
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bigint[]) AS x(watcher_id, trigger_id, monitor_id, tag_id, due_at)
      WHERE n.watcher_id = x.watcher_id AND n.trigger_id = x.trigger_id AND n.monitor_id = x.monitor_id AND n.tag_id = x.tag_id`,
    [
      series.map((x) => x.s.watcher_id),
      series.map((x) => x.s.trigger_id),
      series.map((x) => x.s.monitor_id),
      series.map((x) => x.s.tag_id),
      series.map((x) => x.due_at),
    ],
  );
}

/** Triggers' evaluation rows, not locked (the no_data job needs their rule only). */
export async function triggerRows(q: Sql, keys: { watcher_id: string; trigger_id: string }[]): Promise<TriggerRow[]> {
  return rows<TriggerRow>(
    q,
    `SELECT watcher_id, trigger_id, rule, state FROM triggers WHERE (watcher_id, trigger_id) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))`,
    [keys.map((k) => k.watcher_id), keys.map((k) => k.trigger_id)],
  );
}
