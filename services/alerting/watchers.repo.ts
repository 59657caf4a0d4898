/** The watchers' SQL (table `watchers`). */
import { rows, type Queryable } from "./sql";
import type { TriggerBody } from "./triggers";

/** A watcher as stored (table `watchers`). */
export interface WatcherRow {
  watcher_id: string;
  watcher_name: string;
  function_id: string | null;
  plant_id: string;
  site_id: string;
  gateway_id: string;
  is_enabled: number;
  is_hidden: number;
  triggers: TriggerBody[];
  created_at_time: string | number;
  last_update_time: string | number;
}

export async function getWatcher(q: Queryable, watcher_id: string, lock = false): Promise<WatcherRow | null> {
  const found = await rows<WatcherRow>(q, `SELECT * FROM watchers WHERE watcher_id = $1${lock ? " FOR UPDATE" : ""}`, [watcher_id]);
  return found[0] ?? null;
}

export async function watcherOnGateway(q: Queryable, gateway_id: string, is_hidden: number): Promise<WatcherRow | null> {
  const found = await rows<WatcherRow>(q, `SELECT * FROM watchers WHERE gateway_id = $1 AND is_hidden = $2`, [gateway_id, is_hidden]);
  return found[0] ?? null;
}

export async function insertWatcher(q: Queryable, w: WatcherRow): Promise<void> {
  await q.query(
    `INSERT INTO watchers (watcher_id, watcher_name, function_id, plant_id, site_id, gateway_id, is_enabled, is_hidden, triggers, created_at_time, last_update_time)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [w.watcher_id, w.watcher_name, w.function_id, w.plant_id, w.site_id, w.gateway_id, w.is_enabled, w.is_hidden, JSON.stringify(w.triggers), w.created_at_time, w.last_update_time],
  );
}

export async function updateWatcher(q: Queryable, w: WatcherRow): Promise<void> {
  await q.query(
    `UPDATE watchers SET watcher_name = $2, function_id = $3, plant_id = $4, site_id = $5, gateway_id = $6,
            is_enabled = $7, triggers = $8, last_update_time = $9
      WHERE watcher_id = $1`,
    [w.watcher_id, w.watcher_name, w.function_id, w.plant_id, w.site_id, w.gateway_id, w.is_enabled, JSON.stringify(w.triggers), w.last_update_time],
  );
}

/** Its triggers' evaluation rows, series and maintenance windows go with it (ON DELETE CASCADE); its alerts stay. */
export async function deleteWatcher(q: Queryable, watcher_id: string): Promise<void> {
  await q.query(`DELETE FROM watchers WHERE watcher_id = $1`, [watcher_id]);
}

export interface WatcherQuery {
  function_id: string;
  is_hidden: number;
  limit?: number;
  offset?: number;
}

export async function listWatchers(q: Queryable, p: WatcherQuery): Promise<{ rows: WatcherRow[]; total: number }> {
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
export async function hiddenGatewaysWatching(q: Queryable, monitor_id: string): Promise<string[]> {
  const found = await rows<{ gateway_id: string }>(
    q,
    `SELECT DISTINCT w.gateway_id FROM trigger_series s JOIN watchers w USING (watcher_id)
      WHERE w.is_hidden = 1 AND s.monitor_id = $1`,
    [monitor_id],
  );
  return found.map((r) => r.gateway_id);
}

/** The watchers of the given ids, in no particular order. */
export async function watchersById(q: Queryable, watcher_ids: string[]): Promise<WatcherRow[]> {
  return rows<WatcherRow>(q, `SELECT * FROM watchers WHERE watcher_id = ANY($1::uuid[])`, [watcher_ids]);
}
