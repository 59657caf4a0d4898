/**
 * The SQL of the rollups: the energy tags' readings as received (their key: hours.ts keeps it
 * compressed past HISTORY_COMPRESS_AFTER), their quarter-hour rollups, the local-day rows of each
 * monitor's zone, and retention's marks.
 */
import type { DataSource, EntityManager } from "typeorm";
import { decodeHour, hourKey, hourOf } from "./hours";
import * as hours from "./hours.repo";
import type { Queryable } from "./port";
import { rollupReadings, type Reading, type Rollup } from "./rollup";
import { bucketStart, bucketStarts, nextBucket } from "./time";

/** The counter's increase within a quarter-hour row plus the step from the row before it (rollup.ts's rules, in SQL). */
export const INCREASE_SQL = `CASE WHEN last_value >= first_value THEN last_value - first_value ELSE max - first_value + last_value END`;
export const STEP_SQL = `CASE WHEN lag(last_value) OVER w IS NULL THEN 0
                       WHEN first_value >= lag(last_value) OVER w THEN first_value - lag(last_value) OVER w
                       ELSE first_value END`;

/**
 * Stores readings and folds the new ones into the quarter-hour rollups and the local-day rows
 * of each monitor's zone (`zones`: monitor id → IANA zone), in one transaction: a reading seen
 * before is skipped by the readings key, raw or in its hour's compressed row (hours.ts), so
 * redelivery never counts twice (and one from before what retention deleted is not taken: its key
 * is gone). A lock per monitor
 * makes replicas take turns on a monitor, so a day is always refolded from every committed
 * quarter hour; locks and rows are taken in key order, so they cannot deadlock.
 */
export async function applyReadings(db: DataSource, readings: Reading[], zones: Map<string, string>): Promise<number> {
  if (readings.length === 0) return 0;
  const sorted = [...readings].sort(
    (a, b) => a.monitor_id.localeCompare(b.monitor_id) || a.tag_id.localeCompare(b.tag_id) || a.ts - b.ts,
  );
  const monitors = [...new Set(sorted.map((r) => r.monitor_id))];
  return db.transaction(async (tx) => {
    for (const m of monitors) await hours.lockMonitor(tx, m);
    const fresh = await storeNew(tx, sorted);
    const rollups = rollupReadings(fresh).sort(
      (a, b) => a.monitor_id.localeCompare(b.monitor_id) || a.tag_id.localeCompare(b.tag_id) || a.bucket - b.bucket,
    );
    if (rollups.length === 0) return 0;
    const col = <K extends keyof Rollup>(k: K) => rollups.map((r) => r[k]);
    await tx.query(
      `INSERT INTO rollups AS r (monitor_id, tag_id, bucket, n, sum, min, max, first_ts, first_value, last_ts, last_value)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::int[], $5::float8[], $6::float8[], $7::float8[],
                            $8::bigint[], $9::float8[], $10::bigint[], $11::float8[])
       ON CONFLICT (monitor_id, tag_id, bucket) DO UPDATE SET
         n = r.n + excluded.n,
         sum = r.sum + excluded.sum,
         min = LEAST(r.min, excluded.min),
         max = GREATEST(r.max, excluded.max),
         first_value = CASE WHEN excluded.first_ts < r.first_ts THEN excluded.first_value ELSE r.first_value END,
         first_ts = LEAST(r.first_ts, excluded.first_ts),
         last_value = CASE WHEN excluded.last_ts > r.last_ts THEN excluded.last_value ELSE r.last_value END,
         last_ts = GREATEST(r.last_ts, excluded.last_ts)`,
      [
        col("monitor_id"),
        col("tag_id"),
        col("bucket"),
        col("n"),
        col("sum"),
        col("min"),
        col("max"),
        col("first_ts"),
        col("first_value"),
        col("last_ts"),
        col("last_value"),
      ],
    );
    for (const m of [...new Set(rollups.map((r) => r.monitor_id))]) {
      const tz = zones.get(m) ?? "UTC";
      const [zone]: { tz: string }[] = await tx.query(`SELECT tz FROM monitor_zones WHERE monitor_id = $1`, [m]);
      if (zone?.tz === tz) {
        const days = [...new Set(rollups.filter((r) => r.monitor_id === m).map((r) => bucketStart(r.bucket, "daily", tz)))];
        await foldDays(tx, m, tz, days.sort((a, b) => a - b));
      } else {
        await refoldAllDays(tx, m, tz);
      }
    }
    return fresh.length;
  });
}

/**
 * Stores the batch's readings not seen before (sorted by monitor, tag and time) and answers them:
 * a reading was seen when its key is in the raw rows (the insert's conflict) or among its hour's
 * instants when the hour is compressed (hours.ts); one from before retention's mark is not taken.
 * A batch of fresh readings touches no compressed hour: the look-up of its few hours (an index
 * probe each) finds none, and the insert is as it always was.
 */
async function storeNew(tx: EntityManager, batch: Reading[]): Promise<Reading[]> {
  const touched: { monitor_id: string; tag_id: string; start: number }[] = [];
  for (const r of batch) {
    const start = hourOf(r.ts);
    const last = touched[touched.length - 1];
    if (last?.start !== start || last.tag_id !== r.tag_id || last.monitor_id !== r.monitor_id) touched.push({ monitor_id: r.monitor_id, tag_id: r.tag_id, start });
  }
  let unseen = batch;
  const compressed = await hours.hoursOf(tx, touched);
  if (compressed.length > 0) {
    const seen = new Set<string>();
    for (const h of compressed) for (const ts of decodeHour(h.data)) seen.add(hourKey(h.monitor_id, h.tag_id, ts));
    unseen = batch.filter((r) => !seen.has(hourKey(r.monitor_id, r.tag_id, r.ts)));
  }
  if (unseen.length === 0) return [];
  return tx.query(
    `INSERT INTO readings (monitor_id, tag_id, ts, value)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::float8[]) AS u(monitor_id, tag_id, ts, value)
      WHERE NOT EXISTS (SELECT 1 FROM retained_from k WHERE k.monitor_id = u.monitor_id AND u.ts < k.ts)
     ON CONFLICT DO NOTHING
     RETURNING monitor_id::text, tag_id, ts::float8 AS ts, value`,
    [unseen.map((r) => r.monitor_id), unseen.map((r) => r.tag_id), unseen.map((r) => r.ts), unseen.map((r) => r.value)],
  );
}

/** Refolds the given local days of a monitor from its quarter hours. */
async function foldDays(tx: EntityManager, monitorId: string, tz: string, days: number[]): Promise<void> {
  for (let i = 0; i < days.length; i += 1000) {
    const chunk = days.slice(i, i + 1000);
    await tx.query(
      `INSERT INTO rollups_daily AS d (monitor_id, tag_id, tz, day, n, sum, first_value, last_value, increase)
       SELECT $1::uuid, q.tag_id, $2, day.start, sum(q.n)::int, sum(q.sum),
              (array_agg(q.first_value ORDER BY q.bucket))[1], (array_agg(q.last_value ORDER BY q.bucket DESC))[1], sum(q.increase)
         FROM unnest($3::bigint[], $4::bigint[]) AS day(start, finish)
         CROSS JOIN LATERAL (
           SELECT tag_id, bucket, n, sum, first_value, last_value, ${INCREASE_SQL} + ${STEP_SQL} AS increase
             FROM rollups WHERE monitor_id = $1 AND bucket >= day.start AND bucket < day.finish
           WINDOW w AS (PARTITION BY tag_id ORDER BY bucket)) q
        GROUP BY q.tag_id, day.start
       ON CONFLICT (monitor_id, tz, tag_id, day) DO UPDATE SET
         n = excluded.n, sum = excluded.sum, first_value = excluded.first_value, last_value = excluded.last_value,
         increase = excluded.increase`,
      [monitorId, tz, chunk, chunk.map((d) => nextBucket(d, "daily", tz))],
    );
  }
}

/** A monitor's site is (newly) in `tz`: its daily rows are rebuilt in that zone. */
async function refoldAllDays(tx: EntityManager, monitorId: string, tz: string): Promise<void> {
  await tx.query(`DELETE FROM rollups_daily WHERE monitor_id = $1`, [monitorId]);
  const [span]: { first: number | null; last: number | null }[] = await tx.query(
    `SELECT min(bucket)::float8 AS first, max(bucket)::float8 AS last FROM rollups WHERE monitor_id = $1`,
    [monitorId],
  );
  if (span?.first != null && span.last != null) await foldDays(tx, monitorId, tz, bucketStarts(span.first, span.last + 1, "daily", tz));
  await tx.query(
    `INSERT INTO monitor_zones (monitor_id, tz) VALUES ($1, $2) ON CONFLICT (monitor_id) DO UPDATE SET tz = excluded.tz`,
    [monitorId, tz],
  );
}

/** The monitors ems keeps readings of: each has its zone row from its first readings' transaction on. */
export async function readingMonitors(db: Queryable): Promise<string[]> {
  const rows: { monitor_id: string }[] = await db.query(`SELECT monitor_id::text FROM monitor_zones ORDER BY monitor_id`);
  return rows.map((r) => r.monitor_id);
}

/**
 * Retention: the monitor's readings before `before` go; the rollups stay. Under the monitor's
 * lock, with the mark that keeps an older reading out from then on, so a redelivery racing the
 * deletion either finds its key (before) or the mark (after), never neither.
 */
export async function deleteReadingsBefore(db: DataSource, monitor_id: string, before: number): Promise<number> {
  return db.transaction(async (tx) => {
    await hours.lockMonitor(tx, monitor_id);
    await tx.query(
      `INSERT INTO retained_from (monitor_id, ts) VALUES ($1, $2)
       ON CONFLICT (monitor_id) DO UPDATE SET ts = GREATEST(retained_from.ts, excluded.ts)`,
      [monitor_id, before],
    );
    const res = (await tx.query(`DELETE FROM readings WHERE monitor_id = $1 AND ts < $2`, [monitor_id, before])) as [unknown, number];
    return (res[1] ?? 0) + (await hours.deleteHoursBefore(tx, monitor_id, before));
  });
}

export async function forgetMonitor(db: Queryable, monitor_id: string): Promise<void> {
  await db.query(`DELETE FROM retained_from WHERE monitor_id = $1`, [monitor_id]);
  await db.query(`DELETE FROM rollups_daily WHERE monitor_id = $1`, [monitor_id]);
  await db.query(`DELETE FROM monitor_zones WHERE monitor_id = $1`, [monitor_id]);
  await db.query(`DELETE FROM rollups WHERE monitor_id = $1`, [monitor_id]);
  await db.query(`DELETE FROM readings WHERE monitor_id = $1`, [monitor_id]);
  await db.query(`DELETE FROM compressed_hours WHERE monitor_id = $1`, [monitor_id]);
}
