/**
 * The SQL of the notebooks table: who sees which, the Notebook rows with what their runs tell,
 * creation, renaming, deletion and the owners' records; schedules.repo.ts holds the schedule's
 * columns, runs.repo.ts the runs table.
 */
import type { DataSource, EntityManager } from "typeorm";
import type { Principal } from "../../lib/access";
import type { Day } from "./schedule";

/** The database or one of its transactions: what a repo function takes first (runs.repo.ts and schedules.repo.ts too). */
export type Queryable = DataSource | EntityManager;

/** TypeORM answers an UPDATE or DELETE with [rows, affected]. */
export type Affected<T = unknown> = [T[], number];

/**
 * Who sees which notebooks. A user sees and changes its own; a site admin also those of its
 * site's users, a plant admin those of its plant's users (by the owner's scope stored at
 * creation); a SaaS admin every one. Everyone else, a support analyst included, only its own.
 * A SQL condition on the `notebooks` row aliased `n`, with its parameters numbered from `first`.
 */
export function visibleWhere(user: Principal, first: number): { sql: string; params: unknown[] } {
  const p = (i: number) => `$${first + i}`;
  switch (user.user_type) {
    case "saas-admin":
      return { sql: "TRUE", params: [] };
    case "site-admin":
      return { sql: `(n.owner = ${p(0)} OR n.site_id = ${p(1)})`, params: [user.username, user.site_id ?? ""] };
    case "plant-admin":
      return {
        sql: `(n.owner = ${p(0)} OR (n.site_id = ${p(1)} AND n.plant_id = ${p(2)}))`,
        params: [user.username, user.site_id ?? "", user.plant_id ?? ""],
      };
    default:
      return { sql: `n.owner = ${p(0)}`, params: [user.username] };
  }
}

export interface NotebookRow {
  notebook_id: string;
  owner: string;
  /** The owner's user record (its creation time, bigint as text); null for notebooks made before it was kept. */
  owner_since: string | null;
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

export async function findVisible(db: Queryable, user: Principal, ids: string[]): Promise<NotebookRow[]> {
  if (ids.length === 0) return [];
  const v = visibleWhere(user, 2);
  return db.query(`SELECT n.* FROM notebooks n WHERE n.notebook_id = ANY($1::uuid[]) AND ${v.sql}`, [ids, ...v.params]);
}

export async function getVisible(db: Queryable, user: Principal, id: string): Promise<NotebookWithRuns | undefined> {
  const v = visibleWhere(user, 2);
  const rows: NotebookWithRuns[] = await db.query(`${WITH_RUNS} WHERE n.notebook_id = $1 AND ${v.sql}`, [id, ...v.params]);
  return rows[0];
}

export async function listVisible(
  db: Queryable,
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

export async function countVisible(db: Queryable, user: Principal, now = Date.now()): Promise<{ total: number; scheduled: number }> {
  const v = visibleWhere(user, 2);
  const [row] = (await db.query(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE n.until_at >= $1)::int AS scheduled FROM notebooks n WHERE ${v.sql}`,
    [now, ...v.params],
  )) as { total: number; scheduled: number }[];
  return row ?? { total: 0, scheduled: 0 };
}

export async function namesOf(db: Queryable, owner: string): Promise<Set<string>> {
  const rows: { notebook_name: string }[] = await db.query(`SELECT notebook_name FROM notebooks WHERE owner = $1`, [owner]);
  return new Set(rows.map((r) => r.notebook_name));
}

export async function insertNotebook(
  db: Queryable,
  nb: { notebook_id: string; owner: string; owner_since: number | null; site_id: string | null; plant_id: string | null; notebook_name: string; now: number },
): Promise<void> {
  await db.query(
    `INSERT INTO notebooks (notebook_id, owner, owner_since, site_id, plant_id, notebook_name, created_at, updated_at, created_by, updated_by)
     VALUES ($1, $2, $7, $3, $4, $5, $6, $6, $2, $2)`,
    [nb.notebook_id, nb.owner, nb.site_id, nb.plant_id, nb.notebook_name, nb.now, nb.owner_since],
  );
}

export async function touch(db: Queryable, ids: string[], by: string, now: number): Promise<void> {
  await db.query(`UPDATE notebooks SET updated_at = $2, updated_by = $3 WHERE notebook_id = ANY($1::uuid[])`, [ids, now, by]);
}

/** The number of notebook rows deleted (0: another request deleted it first). */
export async function deleteNotebook(db: Queryable, id: string): Promise<number> {
  const [, affected] = (await db.query(`DELETE FROM notebooks WHERE notebook_id = $1`, [id])) as Affected;
  return affected;
}

/** Where a notebook's file is, as its row names it: the owner's folder and the file name. */
export interface NotebookFileName {
  owner: string;
  notebook_name: string;
}

/**
 * Renames a notebook under its row's lock, so one rename of a notebook runs at a time on any
 * replica: the row's name and the file change together, and a throw of `moveFile` (or a taken
 * name: the unique violation is thrown as it is) rolls the row back untouched. `moveFile` is
 * given the transaction, for what must commit with the rename (its audit entry).
 */
export async function renameLocked(
  db: DataSource,
  rename: { id: string; name: string; by: string; now: number },
  moveFile: (current: NotebookFileName, tx: EntityManager) => Promise<void>,
): Promise<"renamed" | "unchanged" | "missing"> {
  return db.transaction(async (tx) => {
    const [current] = (await tx.query(`SELECT notebook_name, owner FROM notebooks WHERE notebook_id = $1 FOR UPDATE`, [
      rename.id,
    ])) as NotebookFileName[];
    if (!current) return "missing";
    if (current.notebook_name === rename.name) return "unchanged";
    await tx.query(`UPDATE notebooks SET notebook_name = $2, updated_at = $3, updated_by = $4 WHERE notebook_id = $1`, [
      rename.id,
      rename.name,
      rename.now,
      rename.by,
    ]);
    await moveFile(current, tx);
    return "renamed";
  });
}

/** The owners of notebooks, each with the user records its notebooks belong to (null: not known). */
export async function owners(db: Queryable): Promise<{ owner: string; owner_since: string | null }[]> {
  return db.query(`SELECT DISTINCT owner, owner_since FROM notebooks ORDER BY owner`);
}

/**
 * Deletes the notebooks (their runs and schedules go with them) of `owner` that belonged to a
 * user record made at or before `until` (null: every record of that name), and those whose record
 * is not known when `unknownToo`; answers what was deleted and whether others of the name remain.
 */
export async function deleteOwnerNotebooks(
  db: Queryable,
  owner: string,
  until: number | null,
  unknownToo: boolean,
): Promise<{ deleted: NotebookFileName[]; othersRemain: boolean }> {
  const deleted: NotebookFileName[] = await db.query(
    `WITH d AS (DELETE FROM notebooks
                 WHERE owner = $1 AND (owner_since IS NULL AND $3 OR owner_since IS NOT NULL AND ($2::bigint IS NULL OR owner_since <= $2::bigint))
                RETURNING owner, notebook_name)
     SELECT owner, notebook_name FROM d`,
    [owner, until, unknownToo],
  );
  const [left] = (await db.query(`SELECT count(*)::int AS n FROM notebooks WHERE owner = $1`, [owner])) as { n: number }[];
  return { deleted, othersRemain: (left?.n ?? 0) > 0 };
}
