/** The SQL of the assets' events: at most one open an asset, opened, raised and closed under its lock. */
import type { DataSource, EntityManager } from "typeorm";
import type { Queryable } from "./port";

export interface EventRow {
  event_id: string;
  asset_id: string;
  event_start: number;
  event_severity: number;
  event_status: string;
  event_label: string;
  event_assignee: string;
}

export async function openEventOf(db: Queryable, asset_id: string): Promise<EventRow | undefined> {
  const rows: (Omit<EventRow, "event_start"> & { event_start: string })[] = await db.query(
    `SELECT event_id, asset_id, event_start, event_severity, event_status, event_label, event_assignee
       FROM events WHERE asset_id = $1 AND closed_at IS NULL`,
    [asset_id],
  );
  return rows[0] ? { ...rows[0], event_start: Number(rows[0].event_start) } : undefined;
}

/** Opens the asset's event unless one is open; an open one is raised to the worse severity (1 is worst). */
export async function openOrEscalate(db: Queryable, e: EventRow): Promise<void> {
  await db.query(
    `INSERT INTO events (event_id, asset_id, event_start, event_severity, event_status, event_label, event_assignee)
     VALUES ($1,$2,$3,$4,$5,$6,$7)
     ON CONFLICT (asset_id) WHERE closed_at IS NULL
       DO UPDATE SET event_severity = LEAST(events.event_severity, excluded.event_severity)`,
    [e.event_id, e.asset_id, e.event_start, e.event_severity, e.event_status, e.event_label, e.event_assignee],
  );
}

/**
 * Runs `work` in a transaction that holds the asset's advisory lock: replicas evaluating the
 * same asset take turns, so two never open two events or lower one's severity.
 */
export async function underAssetLock<T>(db: DataSource, asset_id: string, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`cm:asset:${asset_id}`]);
    return work(tx);
  });
}

export async function closeEvent(db: Queryable, asset_id: string, at: number): Promise<void> {
  await db.query(`UPDATE events SET closed_at = $2 WHERE asset_id = $1 AND closed_at IS NULL`, [asset_id, at]);
}
