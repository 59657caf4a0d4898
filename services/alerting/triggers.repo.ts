/**
 * The triggers' evaluation state: each trigger's compiled rule and state (table `triggers`), the
 * series each one reads (`trigger_series`) and the series clocks (`series_clock`).
 */
import type { TriggerRule, TriggerState } from "./evaluator";
import { rows, type Queryable, type Transactional } from "./sql";

/** A series: a monitor's tag. */
export interface Series {
  monitor_id: string;
  tag_id: string;
}

/** A watcher's triggers' evaluation rows. */
export async function watcherTriggers(q: Queryable, watcher_id: string): Promise<Omit<TriggerRow, "watcher_id">[]> {
  return rows<Omit<TriggerRow, "watcher_id">>(q, `SELECT trigger_id, rule, state FROM triggers WHERE watcher_id = $1`, [watcher_id]);
}

export async function deleteTriggers(q: Queryable, watcher_id: string, trigger_ids: string[]): Promise<void> {
  await q.query(`DELETE FROM triggers WHERE watcher_id = $1 AND trigger_id = ANY($2::text[])`, [watcher_id, trigger_ids]);
}

/** A trigger's evaluation row, and the series (monitor, tag) it reads, for the batch's read to find it. */
export async function insertTrigger(q: Queryable, watcher_id: string, trigger_id: string, rule: TriggerRule, state: TriggerState, series: Series[]): Promise<void> {
  await q.query(`INSERT INTO triggers (watcher_id, trigger_id, rule, state) VALUES ($1, $2, $3, $4)`, [watcher_id, trigger_id, JSON.stringify(rule), JSON.stringify(state)]);
  if (series.length === 0) return;
  await q.query(
    `INSERT INTO trigger_series (monitor_id, tag_id, watcher_id, trigger_id)
     SELECT m, t, $3, $4 FROM unnest($1::text[], $2::text[]) AS s(m, t)`,
    [series.map((s) => s.monitor_id), series.map((s) => s.tag_id), watcher_id, trigger_id],
  );
}

/** A series' clock: the newest reading timestamp taken of a monitor's tag (epoch ms). */
export interface SeriesClock extends Series {
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
export async function advanceClocks(q: Queryable, clocks: SeriesClock[]): Promise<void> {
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
export async function lockTriggers(tx: Queryable, keys: { watcher_id: string; trigger_id: string }[]): Promise<TriggerRow[]> {
  return rows<TriggerRow>(
    tx,
    `SELECT watcher_id, trigger_id, rule, state FROM triggers
      WHERE (watcher_id, trigger_id) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))
      ORDER BY watcher_id, trigger_id FOR UPDATE`,
    [keys.map((c) => c.watcher_id), keys.map((c) => c.trigger_id)],
  );
}

export async function writeTriggerStates(tx: Queryable, triggers: TriggerRow[]): Promise<void> {
  await tx.query(
    `UPDATE triggers t SET state = s.state
       FROM unnest($1::uuid[], $2::text[], $3::jsonb[]) AS s(watcher_id, trigger_id, state)
      WHERE t.watcher_id = s.watcher_id AND t.trigger_id = s.trigger_id`,
    [triggers.map((c) => c.watcher_id), triggers.map((c) => c.trigger_id), triggers.map((c) => JSON.stringify(c.state))],
  );
}

/** Triggers' evaluation rows, not locked (the no_data job needs their rule only). */
export async function triggerRows(q: Queryable, keys: { watcher_id: string; trigger_id: string }[]): Promise<TriggerRow[]> {
  return rows<TriggerRow>(
    q,
    `SELECT watcher_id, trigger_id, rule, state FROM triggers WHERE (watcher_id, trigger_id) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))`,
    [keys.map((k) => k.watcher_id), keys.map((k) => k.trigger_id)],
  );
}
