/** The SQL of the latest values: the newest reading of each tag, with the asset it counts for. */
import type { Queryable } from "./port";

export interface LatestValue {
  monitor_id: string;
  tag_id: string;
  ts: number;
  value: number;
  asset_id: string | null;
}

/** Keeps the newest value per tag; an older or redelivered reading changes nothing. */
export async function upsertLatest(db: Queryable, values: LatestValue[]): Promise<void> {
  if (values.length === 0) return;
  await db.query(
    `INSERT INTO latest_values (monitor_id, tag_id, ts, value, asset_id)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::float8[], $5::uuid[])
     ON CONFLICT (monitor_id, tag_id) DO UPDATE
       SET ts = excluded.ts, value = excluded.value, asset_id = excluded.asset_id
       WHERE excluded.ts >= latest_values.ts`,
    [
      values.map((v) => v.monitor_id),
      values.map((v) => v.tag_id),
      values.map((v) => v.ts),
      values.map((v) => v.value),
      values.map((v) => v.asset_id),
    ],
  );
}

type LatestDbRow = Omit<LatestValue, "ts"> & { ts: string };
const toLatest = (r: LatestDbRow): LatestValue => ({ ...r, ts: Number(r.ts) });

export async function latestOfMonitors(db: Queryable, monitor_ids: string[]): Promise<LatestValue[]> {
  if (monitor_ids.length === 0) return [];
  const rows: LatestDbRow[] = await db.query(`SELECT * FROM latest_values WHERE monitor_id = ANY($1::uuid[])`, [monitor_ids]);
  return rows.map(toLatest);
}

export async function latestOfAsset(db: Queryable, asset_id: string): Promise<LatestValue[]> {
  const rows: LatestDbRow[] = await db.query(`SELECT * FROM latest_values WHERE asset_id = $1`, [asset_id]);
  return rows.map(toLatest);
}

export async function moveMonitor(db: Queryable, monitor_id: string, asset_id: string | null): Promise<void> {
  await db.query(`UPDATE latest_values SET asset_id = $2 WHERE monitor_id = $1`, [monitor_id, asset_id]);
}

export async function forgetMonitor(db: Queryable, monitor_id: string): Promise<void> {
  await db.query(`DELETE FROM latest_values WHERE monitor_id = $1`, [monitor_id]);
}
