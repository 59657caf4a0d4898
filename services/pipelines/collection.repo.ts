/**
 * The SQL of the pipelines the service collects itself (docs/collectors.md): which ones to
 * collect, where each collection is, its counts, and the cause of its latest failure.
 */
import type { EntityManager } from "typeorm";
import type { CollectionPosition } from "./contract";
import type { PipelineRow } from "./pipelines.repo";
import { rowsOf, type Queryable } from "./sql";

/** A pipeline to collect: its row, its latest action, and its collection's stored position (null: none yet). */
export type CollectedRow = Pick<PipelineRow, "pipeline_id" | "site_id" | "plant_id" | "data_source_subtype" | "settings" | "tags"> & {
  action: "start" | "stop";
  position: CollectionPosition | null;
  epoch: number | null;
};

/** A collection's stored position and its epoch. */
export interface StoredPosition {
  position: CollectionPosition;
  epoch: number;
}

/** `data_source` `Cloud` or `Third-Party-Apps`, of these subtypes, whose latest action is a start or a pending stop. */
export async function collectedPipelines(db: Queryable, subtypes: string[]): Promise<CollectedRow[]> {
  return (await db.query(
    `SELECT p.pipeline_id, p.site_id, p.plant_id, p.data_source_subtype, p.settings, p.tags, a.action, c.position, c.epoch
       FROM pipelines p
       JOIN LATERAL (SELECT action, status FROM pipeline_actions WHERE pipeline_id = p.pipeline_id ORDER BY issued_at DESC, action_id LIMIT 1) a ON true
       LEFT JOIN pipeline_collections c ON c.pipeline_id = p.pipeline_id
      WHERE lower(p.data_source) IN ('cloud', 'third-party-apps') AND upper(p.data_source_subtype) = ANY($1::text[])
        AND (a.action = 'start' OR a.status = 'in_progress')
      ORDER BY p.pipeline_id`,
    [subtypes.map((s) => s.toUpperCase())],
  )) as CollectedRow[];
}

/** The stored position of a pipeline's collection, its row locked until the transaction ends. */
export async function lockedPosition(tx: EntityManager, pipeline_id: string): Promise<StoredPosition | null> {
  const rows = (await tx.query(`SELECT position, epoch FROM pipeline_collections WHERE pipeline_id = $1 FOR UPDATE`, [pipeline_id])) as StoredPosition[];
  return rows[0] ?? null;
}

/** A page stored: the new position, the counts, and `settings.config.last_collected` (what a user reads) moved with it. */
export async function advance(
  tx: EntityManager,
  pipeline_id: string,
  to: StoredPosition,
  collected: number,
  rejected: number,
  now: number,
): Promise<void> {
  await tx.query(
    `INSERT INTO pipeline_collections AS c (pipeline_id, position, epoch, collected, rejected, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (pipeline_id) DO UPDATE SET position = excluded.position, epoch = excluded.epoch, collected = c.collected + excluded.collected,
       rejected = c.rejected + excluded.rejected, updated_at = excluded.updated_at`,
    [pipeline_id, JSON.stringify(to.position), to.epoch, collected, rejected, now],
  );
  if (to.position.last !== null) {
    await tx.query(
      `UPDATE pipelines SET settings = jsonb_set(settings, '{config,last_collected}', to_jsonb($2::text))
        WHERE pipeline_id = $1 AND jsonb_typeof(settings -> 'config') = 'object'`,
      [pipeline_id, to.position.last],
    );
  }
}

/** Counts of readings collected and rejected, by pipeline (those with a collection). */
export async function collectionCounts(db: Queryable, ids: string[]): Promise<Map<string, { collected: number; rejected: number }>> {
  const out = new Map<string, { collected: number; rejected: number }>();
  if (ids.length === 0) return out;
  const rows = (await db.query(`SELECT pipeline_id, collected, rejected FROM pipeline_collections WHERE pipeline_id = ANY($1::uuid[])`, [ids])) as {
    pipeline_id: string;
    collected: string;
    rejected: string;
  }[];
  for (const r of rows) out.set(r.pipeline_id, { collected: Number(r.collected), rejected: Number(r.rejected) });
  return out;
}

/**
 * The source failed: the latest action, when it is a start, carries the cause (failed if it was
 * still pending) and the pipeline is in error; true when it moved.
 */
export async function failCollection(tx: EntityManager, pipeline_id: string, cause: string, now: number): Promise<boolean> {
  const rows = rowsOf<{ action_id: string }>(
    await tx.query(
      `WITH latest AS (SELECT action_id FROM pipeline_actions WHERE pipeline_id = $1 ORDER BY issued_at DESC, action_id LIMIT 1)
       UPDATE pipeline_actions a SET error = $2,
              completed_at = CASE WHEN a.status = 'in_progress' THEN $3 ELSE a.completed_at END,
              status = CASE WHEN a.status = 'in_progress' THEN 'failed' ELSE a.status END
         FROM latest l WHERE a.action_id = l.action_id AND a.action = 'start'
       RETURNING a.action_id`,
      [pipeline_id, cause, now],
    ),
  );
  if (rows.length === 0) return false;
  const moved = rowsOf(await tx.query(`UPDATE pipelines SET status = 'error' WHERE pipeline_id = $1 AND status <> 'error' RETURNING pipeline_id`, [pipeline_id]));
  return moved.length > 0;
}

/** A good collection after a failure: the cause is no longer what the pipeline's actions say. */
export async function clearCause(db: Queryable, pipeline_id: string): Promise<void> {
  await db.query(`UPDATE pipeline_actions SET error = NULL WHERE pipeline_id = $1 AND error IS NOT NULL`, [pipeline_id]);
}
