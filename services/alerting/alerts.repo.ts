/** The alerts' SQL (table `alerts`), with the history entries a statement writes with its change. */
import type { Scope } from "../../lib/access";
import type { AckState, LifecycleState } from "./lifecycle";
import type { SeverityKey } from "./severity";
import { rows, scopeClause, type Queryable } from "./sql";

/** An alert as stored (table `alerts`). */
export interface AlertRow {
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
  state: "active" | "closed";
  start_ts: string | number;
  end_ts: string | number | null;
  note: string;
  // Alarm management (docs/api-tour.md); times epoch ms (bigint, read as text).
  ack_state: AckState;
  acked_by: string | null;
  acked_at: string | number | null;
  shelved_until: string | number | null;
  assignee: string | null;
  suppressed: boolean;
  reason: "condition" | "no_data";
  /** The names as they were when it opened (evaluation.ts). */
  details: object;
  opened_at: string | number;
}


/** Closes a trigger's active condition alert at `end` (never before its start); answers what it closed. A no_data alert closes on its own (closeNoDataAlerts). */
export async function closeTriggerAlert(tx: Queryable, watcher_id: string, trigger_id: string, end: number): Promise<{ alert_id: string; severity: number }[]> {
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

/** An alert as it opens: its names as they are now; the operator's columns start empty. */
export type OpeningAlert = Omit<AlertRow, "state" | "end_ts" | "note" | "ack_state" | "acked_by" | "acked_at" | "shelved_until" | "assignee" | "start_ts" | "opened_at" | "reason" | "suppressed"> & {
  start_ts: number;
  opened_at: number;
  /** `condition` (default) or `no_data` (docs/api-tour.md, "Alarm management"). */
  reason?: AlertRow["reason"];
  /** Opened inside a maintenance window of its watcher (default false). */
  suppressed?: boolean;
};

/** Opens an alert and records `opened` in its history; false when the trigger has an active one already (its unique index). */
export async function insertAlert(tx: Queryable, a: OpeningAlert): Promise<boolean> {
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

export async function closeActiveAlerts(q: Queryable, watcher_id: string, trigger_ids: string[] | null, now: number): Promise<void> {
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

export async function countAlerts(q: Queryable, p: AlertQuery): Promise<{ severity: number; n: number }[]> {
  const params: unknown[] = [];
  const where = alertWhere(p, params);
  return rows(q, `SELECT severity, count(*)::int AS n FROM alerts WHERE ${where} GROUP BY severity`, params);
}

export async function listAlerts(q: Queryable, p: AlertQuery & { limit?: number; offset?: number }): Promise<{ rows: AlertRow[]; total: number }> {
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

export async function alertStarts(q: Queryable, p: AlertQuery): Promise<{ start: number; severity: number }[]> {
  const params: unknown[] = [];
  const where = alertWhere(p, params);
  const found = await rows<{ start_ts: string; severity: number }>(q, `SELECT start_ts, severity FROM alerts WHERE ${where}`, params);
  return found.map((r) => ({ start: Number(r.start_ts), severity: r.severity }));
}

/**
 * The caller's active alerts, newest first, at most `limit` (the console's alarm summary): read
 * through the partial indexes on active alerts, so its cost follows the alerts standing, not the history.
 */
export async function activeAlerts(q: Queryable, scope: Scope, limit: number): Promise<AlertRow[]> {
  const params: unknown[] = [];
  const where = `state = 'active'${scopeClause(scope, params)}`;
  params.push(limit);
  return rows<AlertRow>(q, `SELECT * FROM alerts WHERE ${where} ORDER BY start_ts DESC, alert_id LIMIT $${params.length}`, params);
}

/** The caller's active alerts counted by severity, acknowledgement and whether shelved at `now`. */
export async function activeCounts(q: Queryable, scope: Scope, now: number): Promise<{ severity: number; unacknowledged: boolean; shelved: boolean; n: number }[]> {
  const params: unknown[] = [now];
  return rows(
    q,
    `SELECT severity, ack_state = 'unacknowledged' AS unacknowledged, coalesce(shelved_until > $1, false) AS shelved, count(*)::int AS n
       FROM alerts WHERE state = 'active'${scopeClause(scope, params)} GROUP BY 1, 2, 3`,
    params,
  );
}

export async function getAlert(q: Queryable, alert_id: string): Promise<AlertRow | null> {
  const found = await rows<AlertRow>(q, `SELECT * FROM alerts WHERE alert_id = $1`, [alert_id]);
  return found[0] ?? null;
}

/** An alert row locked for a lifecycle change (the evaluator's close waits, or is waited for). */
export async function lockAlert(tx: Queryable, alert_id: string): Promise<AlertRow | null> {
  const found = await rows<AlertRow>(tx, `SELECT * FROM alerts WHERE alert_id = $1 FOR UPDATE`, [alert_id]);
  return found[0] ?? null;
}

/**
 * Writes an operator's lifecycle change. Only the operator's columns: the process state (state,
 * end_ts) is the evaluator's, which closes alerts in its own transactions.
 */
export async function writeLifecycle(tx: Queryable, alert_id: string, s: LifecycleState): Promise<void> {
  await tx.query(
    `UPDATE alerts SET ack_state = $2, acked_by = $3, acked_at = $4, shelved_until = $5, assignee = $6 WHERE alert_id = $1`,
    [alert_id, s.ack_state, s.acked_by, s.acked_at, s.shelved_until, s.assignee],
  );
}

/**
 * Acknowledges, in one statement, those of the ids that exist, are in the caller's scope and are
 * still unacknowledged, with their history entries; answers how many became acknowledged.
 */
/** The alerts it acknowledged, with their place (the audit trail's entries). */
export async function acknowledgeAlerts(
  q: Queryable,
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

/** Replaces the note and records `noted` (the note as its detail) in one statement. */
export async function setNote(q: Queryable, alert_id: string, note: string, by: string | null = null, at = Date.now()): Promise<void> {
  await q.query(
    `WITH noted AS (UPDATE alerts SET note = $2 WHERE alert_id = $1 RETURNING alert_id)
     INSERT INTO alert_history (alert_id, at, "by", action, detail) SELECT alert_id, $4, $3, 'noted', $2 FROM noted`,
    [alert_id, note, by, at],
  );
}

/** Closes these triggers' active no_data alerts at `end`, those of which no series is silent any more; answers what it closed. */
export async function closeNoDataAlerts(q: Queryable, keys: { watcher_id: string; trigger_id: string }[], end: number): Promise<{ alert_id: string; severity: number }[]> {
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

export async function alertStats(q: Queryable, watcher_ids: string[]): Promise<Map<string, { total: number; latest: number | null }>> {
  const found = await rows<{ watcher_id: string; total: number; latest: string | null }>(
    q,
    `SELECT watcher_id, count(*)::int AS total, max(start_ts) AS latest FROM alerts WHERE watcher_id = ANY($1::uuid[]) GROUP BY watcher_id`,
    [watcher_ids],
  );
  return new Map(found.map((r) => [r.watcher_id, { total: r.total, latest: r.latest === null ? null : Number(r.latest) }]));
}
