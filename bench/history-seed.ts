/**
 * History seeded by SQL for the benchmarks (bench:history, bench:console): a tag's readings in the
 * service's day partitions, and the minute and hour rollups computed from them as the migration
 * PipelinesHistoryRollups folds existing readings.
 */
import type { Client } from "pg";
import { partitionDdl } from "../services/pipelines/readings.repo";
import { dayKey } from "../services/pipelines/storage";

const MIN = 60_000;
const DAY = 86_400_000;

export interface Series {
  label: string;
  monitor: string;
  tag_id: string;
  tag_name: string;
  from: number;
  step: number;
  count: number;
}

/** The day partitions of `days` days from `from`; answers their keys. */
export async function seedPartitions(pg: Client, from: number, days: number): Promise<string[]> {
  await pg.query(`SET search_path TO pipelines`); // the service's partition DDL names its tables unqualified
  const keys = [...new Set(Array.from({ length: days }, (_, d) => dayKey(from + d * DAY)))];
  for (const day of keys) await pg.query(partitionDdl(day));
  return keys;
}

/**
 * One tag's readings by SQL: a slow sine with a ripple and one spike (the spike must survive in
 * a bucket's max); batch ids of 10,000 readings as the ingest path would write them.
 */
export async function seedSeries(pg: Client, s: Series, site: string, pipeline: string): Promise<void> {
  await pg.query(
    `INSERT INTO pipelines.readings (ts, pipeline_id, site_id, monitor_id, tag_id, value, batch_id, idx)
     SELECT to_timestamp(($1::float8 + i * $2::float8) / 1000), $3, $4, $5, $6,
            CASE WHEN i = $7::int / 3 THEN 500 ELSE 50 + 10 * sin(i / 720.0) + (i % 97) / 97.0 END,
            md5($6 || (i / 10000))::uuid, i % 10000
       FROM generate_series(0, $7::int - 1) AS i`,
    [s.from, s.step, pipeline, site, s.monitor, s.tag_id, s.count],
  );
}

/** The minute and hour rollups of every reading, then VACUUM ANALYZE as autovacuum would leave them. */
export async function seedRollups(pg: Client): Promise<void> {
  for (const [table, size] of [
    ["reading_minutes", MIN],
    ["reading_hours", 60 * MIN],
  ] as const) {
    await pg.query(
      `INSERT INTO pipelines.${table} (monitor_id, tag_id, start, site_id, n, sum, min, max)
       SELECT monitor_id, tag_id, t - t % ${size}, min(site_id::text)::uuid, count(*), sum(value), min(value), max(value)
         FROM (SELECT monitor_id, tag_id, site_id, value, round(extract(epoch FROM ts) * 1000)::bigint AS t FROM pipelines.readings) r
        GROUP BY 1, 2, 3`,
    );
  }
  for (const table of ["readings", "reading_minutes", "reading_hours"]) await pg.query(`VACUUM ANALYZE pipelines.${table}`);
}
