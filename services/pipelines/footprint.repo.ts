/**
 * The SQL of what a site's readings cost on disk (footprint.ts, `GET /_config/storage`): per table
 * its whole size (rows, indexes and TOAST: pg_total_relation_size) and each site's share of its
 * readings; footprint.ts shares each table's bytes out by those counts.
 */
import type { Queryable } from "./sql";

export interface TableShare {
  table: string;
  /** pg_total_relation_size: the table, its indexes and TOAST (a partitioned table's partitions summed). */
  bytes: number;
  /** Per site: the readings the table holds of it (rollup rows weigh their count). */
  sites: { site_id: string; readings: number }[];
}

export interface SiteReadings {
  site_id: string;
  readings: number;
  compressed_readings: number;
  oldest: number | null;
  newest: number | null;
}

const sizeOf = (table: string) =>
  `(SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::float8 FROM pg_class c
     WHERE c.oid = '${table}'::regclass OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = '${table}'::regclass))`;

/** Each table of readings with its size and the sites' shares (readings per site; rollups by their rows). */
export async function tableShares(db: Queryable): Promise<TableShare[]> {
  const per = async (table: string, bySite: string): Promise<TableShare> => {
    const [size] = (await db.query(`SELECT ${sizeOf(table)} AS bytes`)) as { bytes: number }[];
    const sites = (await db.query(bySite)) as { site_id: string; readings: number }[];
    return { table, bytes: size?.bytes ?? 0, sites: sites.map((s) => ({ site_id: s.site_id, readings: Number(s.readings) })) };
  };
  return Promise.all([
    per("readings", `SELECT site_id, count(*)::float8 AS readings FROM readings GROUP BY 1`),
    // A chunk's share is its bytes: a random-double chunk costs more than a steady temperature's.
    per("chunks", `SELECT s.site_id, sum(pg_column_size(c.data) + 80)::float8 AS readings FROM chunks c JOIN series s USING (series_id) GROUP BY 1`),
    per("series", `SELECT site_id, count(*)::float8 AS readings FROM series GROUP BY 1`),
    per("reading_minutes", `SELECT site_id, count(*)::float8 AS readings FROM reading_minutes GROUP BY 1`),
    per("reading_hours", `SELECT site_id, count(*)::float8 AS readings FROM reading_hours GROUP BY 1`),
  ]);
}

/** Per site: its readings raw and compressed, the oldest and newest instant of either. */
export async function siteReadings(db: Queryable): Promise<SiteReadings[]> {
  const rows = (await db.query(
    `SELECT site_id, sum(raw)::float8 AS raw, sum(compressed)::float8 AS compressed, min(oldest)::float8 AS oldest, max(newest)::float8 AS newest FROM (
       SELECT site_id, count(*) AS raw, 0 AS compressed, round(extract(epoch FROM min(ts)) * 1000) AS oldest, round(extract(epoch FROM max(ts)) * 1000) AS newest
         FROM readings GROUP BY 1
       UNION ALL
       SELECT s.site_id, 0, sum(c.n), min(c.first_ts), max(c.last_ts) FROM chunks c JOIN series s USING (series_id) GROUP BY 1
     ) x GROUP BY 1`,
  )) as { site_id: string; raw: number; compressed: number; oldest: number | null; newest: number | null }[];
  return rows.map((r) => ({ site_id: r.site_id, readings: r.raw + r.compressed, compressed_readings: r.compressed, oldest: r.oldest, newest: r.newest }));
}

/**
 * The site of each monitor among the ids that pipelines knows of: by its compressed series, else
 * by the pipeline it is registered to (ems's bytes are a monitor's: footprint.ts).
 */
export async function monitorSites(db: Queryable, monitor_ids: string[]): Promise<Map<string, string>> {
  if (monitor_ids.length === 0) return new Map();
  const rows = (await db.query(
    `SELECT m::text AS monitor_id,
            coalesce((SELECT s.site_id FROM series s WHERE s.monitor_id = m LIMIT 1),
                     (SELECT p.site_id FROM registrations r JOIN pipelines p USING (pipeline_id) WHERE r.monitor_id = m))::text AS site_id
       FROM unnest($1::uuid[]) AS m`,
    [monitor_ids],
  )) as { monitor_id: string; site_id: string | null }[];
  return new Map(rows.filter((r) => r.site_id !== null).map((r) => [r.monitor_id, r.site_id!]));
}
