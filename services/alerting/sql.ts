/**
 * The database as alerting's repos use it (the *.repo.ts files): raw SQL on the service's own
 * schema (search_path), every value a bound parameter, through the TypeORM DataSource's `query()`
 * (no entities). The alerts stream's outbox (stream_outbox) is written by the stream layer
 * (lib/streams/outbox.ts), not here.
 */
import type { DataSource } from "typeorm";
import type { Scope } from "../../lib/access";

export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

/** The database as the evaluation uses it: transactions, and the hot path's prepared read. */
export interface Transactional extends Queryable {
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** The same as `query`, as a named prepared statement: planned once per connection (the hot path's read). */
  prepared?(name: string, sql: string, params: unknown[]): Promise<unknown[]>;
}

interface PgPool {
  query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

export function transactional(db: DataSource): Transactional {
  // TypeORM's postgres driver keeps node-postgres' pool as `master`; named statements go through it.
  const pool = (db.driver as unknown as { master?: PgPool }).master;
  return {
    transaction: (work) => db.transaction((m) => work(m)),
    query: (sql, params) => db.query(sql, params),
    prepared: pool ? async (name, text, values) => (await pool.query({ name, text, values })).rows : undefined,
  };
}

export const rows = async <T>(q: Queryable, sql: string, params: unknown[] = []): Promise<T[]> => (await q.query(sql, params)) as T[];

/** `AND site_id = $n [AND plant_id = $m]` for a caller's scope; appends its values to `params`. */
export function scopeClause(scope: Scope, params: unknown[], prefix = ""): string {
  if (scope.kind === "all") return "";
  params.push(scope.site_id);
  let clause = ` AND ${prefix}site_id = $${params.length}`;
  if (scope.kind === "plant") {
    params.push(scope.plant_id);
    clause += ` AND ${prefix}plant_id = $${params.length}`;
  }
  return clause;
}
