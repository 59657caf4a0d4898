/** The queries of the runs table: queueing, claiming and recording runs, and claiming schedule slots. */
import { newId } from "../../lib/ids";
import type { RunOutcome } from "./kernel";
import type { Affected, NotebookFileName, Queryable } from "./notebooks.repo";

export async function queueRuns(db: Queryable, ids: string[], module: string, by: string, now: number): Promise<void> {
  await db.query(
    `INSERT INTO runs (run_id, notebook_id, module, requested_by, status, queued_at)
     SELECT run_id, notebook_id, $3, $4, 'queued', $5 FROM unnest($1::uuid[], $2::uuid[]) AS t(run_id, notebook_id)`,
    [ids.map(() => newId()), ids, module, by, now],
  );
}

/** A queued run this replica claimed, with the file it runs. */
export interface ClaimedRun extends NotebookFileName {
  run_id: string;
  /** The owner's user record (its creation time; bigint as text), null for notebooks made before it was kept. */
  owner_since: string | null;
}

/** Claims the oldest queued run for this node; FOR UPDATE SKIP LOCKED hands each run to exactly one replica. */
export async function claimNextRun(db: Queryable, nodeId: string, now: number): Promise<ClaimedRun | undefined> {
  const [rows] = (await db.query(
    `UPDATE runs r SET status = 'running', started_at = $1, node_id = $2
       FROM notebooks n
      WHERE n.notebook_id = r.notebook_id
        AND r.run_id = (SELECT run_id FROM runs WHERE status = 'queued' ORDER BY queued_at LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING r.run_id, n.owner, n.notebook_name, n.owner_since`,
    [now, nodeId],
  )) as Affected<ClaimedRun>;
  return rows[0];
}

/** Records how a run ended; 0 when its record is gone (the notebook was deleted while it ran). */
export async function recordRunOutcome(
  db: Queryable,
  runId: string,
  outcome: RunOutcome,
  now: number,
): Promise<number> {
  const result = (await db.query(`UPDATE runs SET status = $2, error = $3, ended_at = $4 WHERE run_id = $1`, [
    runId,
    outcome.status,
    outcome.error,
    now,
  ])) as Affected;
  return Number(result[1] ?? 0);
}

/** Runs still `running` that started before `startedBefore` end as failed with `error`. */
export async function failStaleRuns(db: Queryable, startedBefore: number, error: string, now: number): Promise<void> {
  await db.query(`UPDATE runs SET status = 'failed', error = $1, ended_at = $2 WHERE status = 'running' AND started_at < $3`, [
    error,
    now,
    startedBefore,
  ]);
}

/**
 * Claims a schedule's slot by inserting its run: the unique key on (notebook_id, slot_time) lets
 * exactly one replica win. 1 when this call claimed it; 0 when it was claimed before, or the
 * notebook was deleted since it was read (nothing to run).
 */
export async function claimSlot(db: Queryable, notebookId: string, module: string, slot: number, now: number): Promise<number> {
  try {
    const inserted: unknown[] = await db.query(
      `INSERT INTO runs (run_id, notebook_id, module, slot_time, status, queued_at)
       VALUES ($1, $2, $3, $4, 'queued', $5)
       ON CONFLICT (notebook_id, slot_time) DO NOTHING RETURNING run_id`,
      [newId(), notebookId, module, slot, now],
    );
    return inserted.length;
  } catch (err) {
    if ((err as { driverError?: { code?: string } }).driverError?.code !== "23503") throw err;
    return 0;
  }
}
