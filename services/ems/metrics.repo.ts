/** The SQL of the metrics: the rollups folded into the buckets an operation answers with. */
import type { Queryable } from "./port";
import { INCREASE_SQL, STEP_SQL } from "./rollups.repo";
import { bucketStart, nextBucket } from "./time";

/** Per monitor, tag and trend bucket: the counter's increase (rollup.ts's rules) and the readings' count and sum. */
export interface BucketAggregate {
  monitor_id: string;
  tag_id: string;
  /** Index into the trend buckets' starts. */
  i: number;
  increase: number;
  n: number;
  sum: number;
}

/**
 * The monitors' tags in [starts[0], end), folded into the trend buckets that begin at `starts`,
 * in the database: one row a bucket comes back, however long the range. With `days` (trend
 * buckets made of whole local days of `days.tz`), the whole days in the range are read from the
 * daily rows of the monitors whose daily rows are in that zone, and the rest from the quarter
 * hours. The increase is each segment's own (rollup.ts's rules) plus the step from the segment
 * before it; the e2e tests hold it to the pure reference.
 */
export async function aggregate(
  db: Queryable,
  monitorIds: string[],
  tagIds: string[],
  starts: number[],
  end: number,
  days?: { tz: string },
): Promise<BucketAggregate[]> {
  if (monitorIds.length === 0 || tagIds.length === 0 || starts.length === 0) return [];
  const start = starts[0];
  let dayFrom = end;
  let dayTo = end;
  let zoned: string[] = [];
  if (days) {
    const first = bucketStart(start, "daily", days.tz);
    dayFrom = first === start ? start : nextBucket(first, "daily", days.tz);
    dayTo = bucketStart(end, "daily", days.tz);
    if (dayFrom < dayTo) {
      const rows: { monitor_id: string }[] = await db.query(
        `SELECT monitor_id::text FROM monitor_zones WHERE monitor_id = ANY($1::uuid[]) AND tz = $2`,
        [monitorIds, days.tz],
      );
      zoned = rows.map((r) => r.monitor_id);
    } else {
      dayFrom = dayTo = end;
    }
  }
  const unzoned = monitorIds.filter((m) => !zoned.includes(m));
  const quarter = (monitors: number, from: number, to: number) =>
    `SELECT monitor_id, tag_id, bucket, n, sum, first_value, last_value, ${INCREASE_SQL} AS within
       FROM rollups WHERE monitor_id = ANY($${monitors}::uuid[]) AND tag_id = ANY($3::text[]) AND bucket >= $${from} AND bucket < $${to}`;
  return db.query(
    `WITH seg AS (
       ${quarter(1, 5, 6)}
       UNION ALL ${quarter(2, 5, 7)}
       UNION ALL ${quarter(2, 8, 6)}
       UNION ALL
       SELECT monitor_id, tag_id, day, n, sum, first_value, last_value, increase
         FROM rollups_daily WHERE monitor_id = ANY($2::uuid[]) AND tz = $9 AND tag_id = ANY($3::text[]) AND day >= $7 AND day < $8
     ), r AS (
       SELECT monitor_id, tag_id, bucket, n, sum, within + ${STEP_SQL} AS increase
         FROM seg WINDOW w AS (PARTITION BY monitor_id, tag_id ORDER BY bucket))
     SELECT monitor_id::text, tag_id, width_bucket(bucket, $4::bigint[]) - 1 AS i,
            sum(increase) AS increase, sum(n)::float8 AS n, sum(sum) AS sum
       FROM r GROUP BY 1, 2, 3`,
    [unzoned, zoned, tagIds, starts, start, end, dayFrom, dayTo, days?.tz ?? ""],
  );
}
