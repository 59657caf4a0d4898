/**
 * The SQL of the start/stop actions queued for a pipeline's gateway: queued, polled, acked, and
 * failed when overdue.
 */
import type { DataSource, EntityManager } from "typeorm";
import { rowsOf, type Queryable } from "./sql";
import type { PipelineStatus } from "./contract";

export type ActionName = "start" | "stop";
export type ActionStatus = "in_progress" | "completed" | "failed";

export interface ActionRow {
  action_id: string;
  pipeline_id: string;
  action: ActionName;
  status: ActionStatus;
  issued_at: string | number;
  completed_at: string | number | null;
  /** The cause in words of a collected pipeline's failure (docs/collectors.md); selected by `lastActions` only. */
  error?: string | null;
}



/** The last `perPipeline` actions of each pipeline, newest first. */
export async function lastActions(db: Queryable, ids: string[], perPipeline = 5): Promise<Map<string, ActionRow[]>> {
  const out = new Map<string, ActionRow[]>();
  if (ids.length === 0) return out;
  const rows = (await db.query(
    `SELECT action_id, pipeline_id, action, status, issued_at, completed_at, error FROM (
       SELECT a.*, row_number() OVER (PARTITION BY pipeline_id ORDER BY issued_at DESC, action_id) AS n
         FROM pipeline_actions a WHERE pipeline_id = ANY($1::uuid[])) x
      WHERE n <= $2 ORDER BY issued_at DESC, action_id`,
    [ids, perPipeline],
  )) as ActionRow[];
  for (const r of rows) {
    const list = out.get(r.pipeline_id) ?? [];
    list.push(r);
    out.set(r.pipeline_id, list);
  }
  return out;
}

/** Op 56 for one pipeline: the action supersedes one still pending, and the pipeline moves. */
export async function queueAction(
  tx: EntityManager,
  pipeline_id: string,
  action_id: string,
  action: ActionName,
  status: PipelineStatus,
  now: number,
): Promise<void> {
  // One queueing per pipeline at a time: without the lock two parallel requests both found no
  // pending action and the second insert broke the one-pending index (a 500).
  await tx.query(`SELECT 1 FROM pipelines WHERE pipeline_id = $1 FOR UPDATE`, [pipeline_id]);
  await tx.query(`UPDATE pipeline_actions SET status = 'failed', completed_at = $2 WHERE pipeline_id = $1 AND status = 'in_progress'`, [
    pipeline_id,
    now,
  ]);
  await tx.query(`INSERT INTO pipeline_actions (action_id, pipeline_id, action, status, issued_at) VALUES ($1, $2, $3, 'in_progress', $4)`, [
    action_id,
    pipeline_id,
    action,
    now,
  ]);
  await tx.query(`UPDATE pipelines SET status = $2 WHERE pipeline_id = $1`, [pipeline_id, status]);
}

export async function pendingActions(db: Queryable, pipeline_id: string): Promise<ActionRow[]> {
  return (await db.query(
    `SELECT action_id, pipeline_id, action, status, issued_at, completed_at FROM pipeline_actions
      WHERE pipeline_id = $1 AND status = 'in_progress' ORDER BY issued_at`,
    [pipeline_id],
  )) as ActionRow[];
}

/** Completes a pending action; null when there is no such pending action of the pipeline. */
export async function completeAction(
  tx: EntityManager,
  pipeline_id: string,
  action_id: string,
  status: "completed" | "failed",
  now: number,
): Promise<ActionRow | null> {
  const rows = rowsOf<ActionRow>(
    await tx.query(
      `UPDATE pipeline_actions SET status = $3, completed_at = $4
        WHERE action_id = $1 AND pipeline_id = $2 AND status = 'in_progress'
        RETURNING action_id, pipeline_id, action, status, issued_at, completed_at`,
      [action_id, pipeline_id, status, now],
    ),
  );
  return rows[0] ?? null;
}

export async function actionExists(db: Queryable, pipeline_id: string, action_id: string): Promise<boolean> {
  const rows = (await db.query(`SELECT 1 FROM pipeline_actions WHERE action_id = $1 AND pipeline_id = $2`, [action_id, pipeline_id])) as unknown[];
  return rows.length > 0;
}

/**
 * Fails every action older than the timeout and puts its pipeline in `error`, in one statement.
 * The status guard makes it happen once however many replicas sweep at the same moment: the
 * second UPDATE of a row finds it no longer `in_progress`.
 */
export async function failOverdueActions(db: DataSource, timeoutMs: number, now: number): Promise<string[]> {
  const rows = rowsOf<{ pipeline_id: string }>(
    await db.query(
    `WITH overdue AS (
       UPDATE pipeline_actions SET status = 'failed', completed_at = $2
        WHERE status = 'in_progress' AND issued_at <= $1
        RETURNING pipeline_id)
     UPDATE pipelines p SET status = 'error' FROM overdue o WHERE p.pipeline_id = o.pipeline_id
     RETURNING p.pipeline_id`,
    [now - timeoutMs, now],
    ),
  );
  return rows.map((r) => r.pipeline_id);
}
