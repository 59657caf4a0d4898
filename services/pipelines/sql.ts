/** What every repo of the pipelines service takes: a pool or a transaction, and TypeORM's answers read as rows. */
import type { DataSource, EntityManager } from "typeorm";

/** A pool or a transaction. */
export type Queryable = DataSource | EntityManager;

/** TypeORM answers an UPDATE/DELETE with [rows, count] and anything else with rows. */
export function rowsOf<T>(result: unknown): T[] {
  const r = result as unknown[];
  return (r.length === 2 && Array.isArray(r[0]) && typeof r[1] === "number" ? r[0] : r) as T[];
}

/** An element of a text[] literal: always quoted, with `"` and `\\` escaped. */
export const arrayText = (s: string): string => `"${/["\\]/.test(s) ? s.replace(/(["\\])/g, "\\$1") : s}"`;
