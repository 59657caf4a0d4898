/** Queries of the notebooks schema, and the Notebook object of the spec made from a row. */
import type { DataSource, EntityManager } from "typeorm";
import type { Principal } from "../../lib/access";
import { newId } from "../../lib/ids";
import { visibleWhere } from "./access";
import { executedName, relativePath } from "./names";
import type { Day, Schedule } from "./schedule";

type Db = DataSource | EntityManager;

export interface NotebookRow {
  notebook_id: string;
  owner: string;
  site_id: string | null;
  plant_id: string | null;
  notebook_name: string;
  created_at: string;
  updated_at: string;
  created_by: string;
  updated_by: string;
  schedule_period: Day | null;
  schedule_time: string | null;
  schedule_until: string | null;
  until_at: string | null;
  scheduled_at: string | null;
}

/** A row with what its runs tell: the count and start of finished runs, and the latest run's outcome. */
export interface NotebookWithRuns extends NotebookRow {
  no_of_runs: number;
  last_run_at: string | null;
  last_status: string | null;
  last_error: string | null;
}

export type NotebookStatus = "Scheduled" | "Not Scheduled";

export interface NotebookView {
  notebook_id: string;
  notebook_name: string;
  status: NotebookStatus;
  created_at: number;
  updated_at: number;
  created_by: string;
  updated_by: string;
  last_run: string | null;
  no_of_runs: number;
  schedule: { period: Day | null; until: string | null; time: string | null };
  attributes: {
    path: string;
    executed_path: string | null;
    last_run_status: string | null;
    last_run_error: string | null;
  };
}

/** Run counts are read from the run records, so they cannot drift from them. */
const WITH_RUNS = `
  SELECT n.*, r.no_of_runs, r.last_run_at, l.status AS last_status, l.error AS last_error
    FROM notebooks n
    LEFT JOIN LATERAL (
      SELECT count(*)::int AS no_of_runs, max(started_at) AS last_run_at
        FROM runs WHERE notebook_id = n.notebook_id AND status IN ('succeeded', 'failed')
    ) r ON TRUE
    LEFT JOIN LATERAL (
      SELECT status, error FROM runs WHERE notebook_id = n.notebook_id ORDER BY queued_at DESC LIMIT 1
    ) l ON TRUE`;

/** A schedule whose `until` has passed is over even before a scheduler tick clears it. */
export function isScheduled(row: Pick<NotebookRow, "until_at">, now = Date.now()): boolean {
  return row.until_at !== null && Number(row.until_at) >= now;
}

export function notebookView(row: NotebookWithRuns, now = Date.now()): NotebookView {
  const scheduled = isScheduled(row, now);
  const ran = row.last_status === "succeeded" || row.last_status === "failed" || row.no_of_runs > 0;
  return {
    notebook_id: row.notebook_id,
    notebook_name: row.notebook_name,
    status: scheduled ? "Scheduled" : "Not Scheduled",
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    created_by: row.created_by,
    updated_by: row.updated_by,
    last_run: row.last_run_at === null ? null : new Date(Number(row.last_run_at)).toISOString(),
    no_of_runs: row.no_of_runs,
    schedule: scheduled
      ? { period: row.schedule_period, until: row.schedule_until, time: row.schedule_time }
      : { period: null, until: null, time: null },
    attributes: {
      path: relativePath(row.owner, row.notebook_name),
      executed_path: ran ? relativePath(row.owner, executedName(row.notebook_name)) : null,
      last_run_status: row.last_status,
      last_run_error: row.last_error,
    },
  };
}

export async function findVisible(db: Db, user: Principal, ids: string[]): Promise<NotebookRow[]> {
  if (ids.length === 0) return [];
  const v = visibleWhere(user, 2);
  return db.query(`SELECT n.* FROM notebooks n WHERE n.notebook_id = ANY($1::uuid[]) AND ${v.sql}`, [ids, ...v.params]);
}

export async function getVisible(db: Db, user: Principal, id: string): Promise<NotebookWithRuns | undefined> {
  const v = visibleWhere(user, 2);
  const rows: NotebookWithRuns[] = await db.query(`${WITH_RUNS} WHERE n.notebook_id = $1 AND ${v.sql}`, [id, ...v.params]);
  return rows[0];
}

export async function listVisible(
  db: Db,
  user: Principal,
  page: { limit?: number; offset?: number },
): Promise<{ rows: NotebookWithRuns[]; total: number }> {
  const v = visibleWhere(user, 1);
  const [{ total }] = (await db.query(`SELECT count(*)::int AS total FROM notebooks n WHERE ${v.sql}`, v.params)) as {
    total: number;
  }[];
  const rows: NotebookWithRuns[] = await db.query(
    `${WITH_RUNS} WHERE ${v.sql} ORDER BY n.created_at, n.notebook_name
     LIMIT $${v.params.length + 1} OFFSET $${v.params.length + 2}`,
    [...v.params, page.limit ?? null, page.offset ?? 0],
  );
  return { rows, total };
}

export async function countVisible(db: Db, user: Principal, now = Date.now()): Promise<{ total: number; scheduled: number }> {
  const v = visibleWhere(user, 2);
  const [row] = (await db.query(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE n.until_at >= $1)::int AS scheduled FROM notebooks n WHERE ${v.sql}`,
    [now, ...v.params],
  )) as { total: number; scheduled: number }[];
  return row ?? { total: 0, scheduled: 0 };
}

export async function namesOf(db: Db, owner: string): Promise<Set<string>> {
  const rows: { notebook_name: string }[] = await db.query(`SELECT notebook_name FROM notebooks WHERE owner = $1`, [owner]);
  return new Set(rows.map((r) => r.notebook_name));
}

export async function insertNotebook(
  db: Db,
  nb: { notebook_id: string; owner: string; site_id: string | null; plant_id: string | null; notebook_name: string; now: number },
): Promise<void> {
  await db.query(
    `INSERT INTO notebooks (notebook_id, owner, site_id, plant_id, notebook_name, created_at, updated_at, created_by, updated_by)
     VALUES ($1, $2, $3, $4, $5, $6, $6, $2, $2)`,
    [nb.notebook_id, nb.owner, nb.site_id, nb.plant_id, nb.notebook_name, nb.now],
  );
}

export async function touch(db: Db, ids: string[], by: string, now: number): Promise<void> {
  await db.query(`UPDATE notebooks SET updated_at = $2, updated_by = $3 WHERE notebook_id = ANY($1::uuid[])`, [ids, now, by]);
}

export async function setSchedule(db: Db, ids: string[], s: Schedule, untilAt: number, by: string, now: number): Promise<void> {
  await db.query(
    `UPDATE notebooks SET schedule_period = $2, schedule_time = $3, schedule_until = $4, until_at = $5, scheduled_at = $6,
            updated_at = $6, updated_by = $7
      WHERE notebook_id = ANY($1::uuid[])`,
    [ids, s.period, s.time, s.until, untilAt, now, by],
  );
}

export async function clearSchedule(db: Db, ids: string[], by: string, now: number): Promise<void> {
  await db.query(
    `UPDATE notebooks SET schedule_period = NULL, schedule_time = NULL, schedule_until = NULL, until_at = NULL,
            scheduled_at = NULL, updated_at = $2, updated_by = $3
      WHERE notebook_id = ANY($1::uuid[])`,
    [ids, now, by],
  );
}

export async function queueRuns(db: Db, ids: string[], module: string, by: string, now: number): Promise<void> {
  await db.query(
    `INSERT INTO runs (run_id, notebook_id, module, requested_by, status, queued_at)
     SELECT run_id, notebook_id, $3, $4, 'queued', $5 FROM unnest($1::uuid[], $2::uuid[]) AS t(run_id, notebook_id)`,
    [ids.map(() => newId()), ids, module, by, now],
  );
}
