/**
 * What every config repo (`<resource>.repo.ts`) shares: the database or a transaction
 * (`Queryable`), the scope as SQL parameters, and the few ways a statement's rows come back.
 * Raw parametrised statements through the TypeORM DataSource's `query()` (no entities), each
 * value a bound parameter; rows come back as PostgreSQL gives them (bigint as text) and the
 * domain modules shape them into the spec's objects.
 *
 * Free of the framework at run time (type imports only), so that the benchmark's bare baseline
 * (bench/baseline.ts, through queries.ts) runs the very statements the service runs.
 */
import type { DataSource, EntityManager } from "typeorm";

/** The database, or the transaction of an audited write. */
export type Queryable = DataSource | EntityManager;

/** The caller's scope as [site, plant] SQL parameters, null meaning "any" (rules.scopeParams). */
export type ScopeIds = [string | null, string | null];

export const rows = async <T>(db: Queryable, sql: string, params: unknown[] = []): Promise<T[]> => (await db.query(sql, params)) as T[];
export const first = async <T>(db: Queryable, sql: string, params: unknown[]): Promise<T | null> => (await rows<T>(db, sql, params))[0] ?? null;
export const count = async (db: Queryable, sql: string, params: unknown[]): Promise<number> => (await rows<{ n: number }>(db, sql, params))[0]!.n;
/** Runs `work` in the caller's transaction when `db` is one (an audited write's), else in a transaction of its own. */
export const inTransaction = <T>(db: Queryable, work: (tx: EntityManager) => Promise<T>): Promise<T> =>
  "queryRunner" in db && db.queryRunner?.isTransactionActive ? work(db) : db.transaction(work);
/** TypeORM answers an UPDATE or DELETE with [rows, rowCount]: the rows its RETURNING clause named. */
export const returned = async <T>(db: Queryable, sql: string, params: unknown[]): Promise<T[]> => ((await db.query(sql, params)) as [T[], number])[0];

/** True when a PostgreSQL error is a foreign key violation: a parent went away, or a child came, meanwhile. */
export function isForeignKeyViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string } };
  return (e?.code ?? e?.driverError?.code) === "23503";
}
