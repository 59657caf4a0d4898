/** The series of triggers with `no_data` (table `no_data_series`): when each was last heard, when it goes silent. */
import { rows, type Queryable } from "./sql";
import type { Series } from "./triggers.repo";

/** A series of a trigger as the no_data job sees it (times epoch ms). */
export interface WatchedSeries {
  watcher_id: string;
  trigger_id: string;
  monitor_id: string;
  tag_id: string;
  no_data_ms: number;
  last_seen: number;
  due_at: number;
  /** The watcher's gateway: the pipeline whose status counts. */
  gateway_id: string;
}

/** A new trigger's series to watch for silence, heard last at `now` and due at `due_at`. */
export async function watchSeries(q: Queryable, watcher_id: string, trigger_id: string, series: Series[], no_data_ms: number, now: number, due_at: number): Promise<void> {
  await q.query(
    `INSERT INTO no_data_series (watcher_id, trigger_id, monitor_id, tag_id, no_data_ms, last_seen, due_at)
     SELECT $3, $4, m, t, $5, $6, $7 FROM unnest($1::text[], $2::text[]) AS s(m, t)`,
    [series.map((s) => s.monitor_id), series.map((s) => s.tag_id), watcher_id, trigger_id, no_data_ms, now, due_at],
  );
}

/**
 * The series of a batch were heard at `now` (arrival time): each due again `no_data` later, and
 * no longer silent. Answers the triggers of which a silent series was heard (their no_data alert
 * may close). One statement; rows locked in key order, and a row the job holds is waited for and
 * read as the job left it.
 */
export async function heardFrom(q: Queryable, monitor_ids: string[], tag_ids: string[], now: number): Promise<{ watcher_id: string; trigger_id: string }[]> {
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

/** The gateways of the series due at `now` (not locked: their pipelines' status is asked before the claim). */
export async function dueSilentGateways(q: Queryable, now: number): Promise<string[]> {
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
export async function claimSilentSeries(tx: Queryable, now: number, gateway_ids: string[], limit: number): Promise<WatchedSeries[]> {
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
export async function settleSeries(tx: Queryable, series: { s: WatchedSeries; due_at: number | null }[]): Promise<void> {
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
