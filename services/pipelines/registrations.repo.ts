/**
 * The SQL of a pipeline's registrations: which monitors it feeds (one pipeline a monitor at most),
 * with their slave ids.
 */
import type { EntityManager } from "typeorm";
import { type Queryable } from "./sql";


/**
 * Replaces a pipeline's registrations. Returns false when a monitor is registered to another
 * pipeline (the primary key decides, so two gateways racing for one monitor cannot both win).
 */
export async function replaceRegistrations(tx: EntityManager, pipeline_id: string, slaves: Map<string, string | null>): Promise<boolean> {
  await tx.query(`DELETE FROM registrations WHERE pipeline_id = $1`, [pipeline_id]);
  if (slaves.size === 0) return true;
  const ids = [...slaves.keys()];
  const inserted = (await tx.query(
    `INSERT INTO registrations (monitor_id, pipeline_id, slave_id)
     SELECT m, $1, s FROM unnest($2::uuid[], $3::text[]) AS u(m, s)
     ON CONFLICT (monitor_id) DO NOTHING RETURNING monitor_id`,
    [pipeline_id, ids, ids.map((id) => slaves.get(id) ?? null)],
  )) as unknown[];
  return inserted.length === ids.length;
}

export interface Registration {
  monitor_id: string;
  pipeline_id: string;
  slave_id: string | null;
}

/** The pipeline a monitor is registered to, or null. */
export async function registrationOf(db: Queryable, monitor_id: string): Promise<Registration | null> {
  const rows = (await db.query(`SELECT monitor_id, pipeline_id, slave_id FROM registrations WHERE monitor_id::text = lower($1)`, [
    monitor_id,
  ])) as Registration[];
  return rows[0] ?? null;
}

export async function registeredMonitors(db: Queryable, pipeline_id: string): Promise<string[]> {
  const rows = (await db.query(`SELECT monitor_id FROM registrations WHERE pipeline_id = $1`, [pipeline_id])) as { monitor_id: string }[];
  return rows.map((r) => r.monitor_id);
}
