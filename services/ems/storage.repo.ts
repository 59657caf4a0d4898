/** The SQL of what ems's readings cost on disk (storage.ts): each table's whole size and each monitor's rows in it. */
import type { Queryable } from "./port";

/** Every table ems keeps of readings: the readings key, raw and compressed (hours.ts), and the rollups. */
export const STORAGE_TABLES = ["readings", "compressed_hours", "rollups", "rollups_daily"] as const;

export interface TableRows {
  table: string;
  /** pg_total_relation_size: the table, its indexes and TOAST. */
  bytes: number;
  monitors: { monitor_id: string; rows: number }[];
}

export async function tableRows(db: Queryable): Promise<TableRows[]> {
  return Promise.all(
    STORAGE_TABLES.map(async (table) => {
      const [size] = (await db.query(`SELECT pg_total_relation_size($1::regclass)::float8 AS bytes`, [table])) as { bytes: number }[];
      const monitors = (await db.query(`SELECT monitor_id::text, count(*)::float8 AS rows FROM ${table} GROUP BY 1`)) as { monitor_id: string; rows: number }[];
      return { table, bytes: size?.bytes ?? 0, monitors };
    }),
  );
}
