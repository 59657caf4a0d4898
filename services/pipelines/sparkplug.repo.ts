/** The SQL of Sparkplug edge nodes: a pipeline found by its node id, and the status moves births and deaths make. */
import { normalisedMac, type PipelineRow } from "./pipelines.repo";
import { rowsOf, type Queryable as Db } from "./sql";

/** An edge pipeline whose MAC address, separators removed, is `edge_node` (lower-case hex), in one of `site_ids` (any when null). */
export async function pipelineOfEdgeNode(db: Db, edge_node: string, site_ids: string[] | null): Promise<PipelineRow | null> {
  const rows = (await db.query(
    `SELECT * FROM pipelines
      WHERE kind = 'edge' AND ${normalisedMac("mac_address")} = $1
        AND ($2::uuid[] IS NULL OR site_id = ANY($2::uuid[]))
      ORDER BY created_at LIMIT 1`,
    [edge_node, site_ids],
  )) as PipelineRow[];
  return rows[0] ?? null;
}

/** error → running when the pipeline's latest action is a start (it was started, then its node died); true when it moved. */
export async function resumeStarted(tx: Db, pipeline_id: string): Promise<boolean> {
  const rows = rowsOf(
    await tx.query(
    `UPDATE pipelines p SET status = 'running'
      WHERE p.pipeline_id = $1 AND p.status = 'error'
        AND (SELECT a.action FROM pipeline_actions a WHERE a.pipeline_id = p.pipeline_id ORDER BY a.issued_at DESC LIMIT 1) = 'start'
      RETURNING p.pipeline_id`,
    [pipeline_id],
  ),
  );
  return rows.length > 0;
}

/** running → error (a node's death); true when it moved. */
export async function failRunning(db: Db, pipeline_id: string): Promise<boolean> {
  const rows = rowsOf(await db.query(`UPDATE pipelines SET status = 'error' WHERE pipeline_id = $1 AND status = 'running' RETURNING pipeline_id`, [pipeline_id]));
  return rows.length > 0;
}

/** The pipeline's gateway connected as a Sparkplug node: from now on its stops complete at once while no node is connected. */
export async function markNode(db: Db, pipeline_id: string, ts: number): Promise<void> {
  await db.query(`UPDATE pipelines SET sparkplug_at = $2 WHERE pipeline_id = $1 AND sparkplug_at IS NULL`, [pipeline_id, ts]);
}

/**
 * True when the pipeline is a Sparkplug node's and no replica holds it present under `scope`
 * (lib/presence.ts): the exclusive lock taken then is held until `tx` ends, so a node connecting
 * meanwhile waits for the stop to be written.
 */
export async function noNodeConnected(tx: Db, pipeline_id: string, scope: string): Promise<boolean> {
  const rows = rowsOf<{ free: boolean }>(
    await tx.query(
      `SELECT CASE WHEN sparkplug_at IS NULL THEN false ELSE pg_try_advisory_xact_lock(hashtext($2), hashtext(pipeline_id::text)) END AS free
         FROM pipelines WHERE pipeline_id = $1`,
      [pipeline_id, scope],
    ),
  );
  return rows[0]?.free === true;
}
