/**
 * The SQL of a tag's history (history.ts has the rules): the minute and hour rollups folded from
 * each readings batch once, the parts of a history's buckets from each tier, raw readings, the
 * export's cursor, and what retention removes of the rollups.
 */
import type { DataSource } from "typeorm";
import type { MsRange } from "../../lib/buckets";
import { HOUR_MS, MINUTE_MS } from "../../lib/time";
import type { ReadingBatch } from "./contract";
import { rollupsOf, type HistoryTiers, type Part, type Rollup } from "./history";
import { arrayText } from "./repo";

/** A bound in the readings' own terms: the insert's to_timestamp(ms / 1000), so equal ms compare equal. */
const TS = (n: number) => `to_timestamp($${n}::float8 / 1000)`;
/** A reading's time back in epoch ms. */
const MS = `round(extract(epoch FROM ts) * 1000)::float8`;

async function upsertRollups(tx: { query(sql: string, params: unknown[]): Promise<unknown> }, table: "reading_minutes" | "reading_hours", site_id: string, rows: Rollup[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO ${table} AS r (monitor_id, tag_id, start, site_id, n, sum, min, max)
     SELECT u.m, u.g, u.s, $1, u.n, u.sm, u.lo, u.hi
       FROM unnest($2::uuid[], $3::text[], $4::bigint[], $5::int[], $6::float8[], $7::float8[], $8::float8[]) AS u(m, g, s, n, sm, lo, hi)
     ON CONFLICT (monitor_id, tag_id, start) DO UPDATE SET
       n = r.n + excluded.n, sum = r.sum + excluded.sum, min = LEAST(r.min, excluded.min), max = GREATEST(r.max, excluded.max)`,
    [
      site_id,
      `{${rows.map((r) => r.monitor_id).join(",")}}`,
      `{${rows.map((r) => arrayText(r.tag_id)).join(",")}}`,
      `{${rows.map((r) => r.start).join(",")}}`,
      `{${rows.map((r) => r.n).join(",")}}`,
      `{${rows.map((r) => r.sum).join(",")}}`,
      `{${rows.map((r) => r.min).join(",")}}`,
      `{${rows.map((r) => r.max).join(",")}}`,
    ],
  );
}

/**
 * Folds a batch into the minute and hour rollups, once: the batch id is claimed in the same
 * transaction, so a redelivery (after a crash, a timeout) adds nothing. Rows are written in key
 * order, so two batches of overlapping tags cannot deadlock. The number of readings folded.
 */
export async function rollUp(db: DataSource, batch: ReadingBatch, now = Date.now()): Promise<number> {
  return db.transaction(async (tx) => {
    const claimed = (await tx.query(`INSERT INTO rolled_batches (batch_id, rolled_at) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING batch_id`, [batch.batch_id, now])) as unknown[];
    if (claimed.length === 0) return 0;
    await upsertRollups(tx, "reading_minutes", batch.site_id, rollupsOf(batch.readings, MINUTE_MS));
    await upsertRollups(tx, "reading_hours", batch.site_id, rollupsOf(batch.readings, HOUR_MS));
    return batch.readings.length;
  });
}

/** Per bucket of `bucket` ms, each tier's share of the range (history.ts, historyTiers). */
export async function historyParts(db: DataSource, monitor_id: string, tag_id: string, tiers: HistoryTiers, bucket: number): Promise<Part[]> {
  const params: unknown[] = [monitor_id, tag_id, bucket];
  const selects: string[] = [];
  const bucketOf = (t: string) => `(${t}::bigint / $3::bigint) * $3::bigint`;
  const spans = (column: string, list: { from: number; end: number }[]) =>
    list
      .map((x) => {
        params.push(x.from, x.end);
        return `(${column} >= $${params.length - 1} AND ${column} < $${params.length})`;
      })
      .join(" OR ");
  if (tiers.hours) {
    selects.push(`SELECT ${bucketOf("start")} AS bucket, sum(n)::int AS n, sum(sum) AS sum, min(min) AS min, max(max) AS max
                    FROM reading_hours WHERE monitor_id = $1 AND tag_id = $2 AND (${spans("start", [tiers.hours])}) GROUP BY 1`);
  }
  if (tiers.minutes.length > 0) {
    selects.push(`SELECT ${bucketOf("start")} AS bucket, sum(n)::int AS n, sum(sum) AS sum, min(min) AS min, max(max) AS max
                    FROM reading_minutes WHERE monitor_id = $1 AND tag_id = $2 AND (${spans("start", tiers.minutes)}) GROUP BY 1`);
  }
  if (tiers.raw.length > 0) {
    const ranges = tiers.raw
      .map((x) => {
        params.push(x.from, x.to);
        return `(ts >= ${TS(params.length - 1)} AND ts <= ${TS(params.length)})`;
      })
      .join(" OR ");
    selects.push(`SELECT ${bucketOf(`round(extract(epoch FROM ts) * 1000)`)} AS bucket, count(*)::int AS n, sum(value) AS sum, min(value) AS min, max(value) AS max
                    FROM readings WHERE monitor_id = $1 AND tag_id = $2 AND (${ranges}) GROUP BY 1`);
  }
  const rows = (await db.query(selects.join(" UNION ALL "), params)) as { bucket: string; n: number; sum: number; min: number; max: number }[];
  return rows.map((r) => ({ bucket: Number(r.bucket), n: r.n, sum: r.sum, min: r.min, max: r.max }));
}

/** A tag's raw readings in the range, oldest first, at most `limit`. */
export async function rawReadings(db: DataSource, monitor_id: string, tag_id: string, r: MsRange, limit: number): Promise<{ ts: number; value: number }[]> {
  return (await db.query(
    `SELECT ${MS} AS ts, value FROM readings
      WHERE monitor_id = $1 AND tag_id = $2 AND ts >= ${TS(3)} AND ts <= ${TS(4)}
      ORDER BY ts, batch_id, idx LIMIT $5`,
    [monitor_id, tag_id, r.from, r.to, limit],
  )) as { ts: number; value: number }[];
}

export interface ExportRow {
  ts: number;
  tag_id: string;
  value: number;
}

/**
 * A monitor's readings in the range by time then tag, fetched from a server-side cursor `chunk`
 * rows at a time: memory stays the same whatever the range. Stopping early (the client went)
 * closes the cursor and gives the connection back.
 */
export async function* exportRows(db: DataSource, monitor_id: string, r: MsRange, chunk = 5000): AsyncGenerator<ExportRow[]> {
  const runner = db.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    await runner.query(
      `DECLARE history_export NO SCROLL CURSOR FOR
         SELECT ${MS} AS ts, tag_id, value FROM readings
          WHERE monitor_id = $1 AND ts >= ${TS(2)} AND ts <= ${TS(3)}
          ORDER BY ts, tag_id, batch_id, idx`,
      [monitor_id, r.from, r.to],
    );
    for (;;) {
      const rows = (await runner.query(`FETCH ${chunk} FROM history_export`)) as ExportRow[];
      if (rows.length === 0) break;
      yield rows;
    }
    await runner.commitTransaction();
  } finally {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    await runner.release();
  }
}

/** Retention of the rollups: a site's minute and hour rows before `before`. */
export async function deleteRollupsBefore(db: DataSource, site_id: string, before: number): Promise<void> {
  await db.query(`DELETE FROM reading_minutes WHERE site_id = $1 AND start < $2`, [site_id, before]);
  await db.query(`DELETE FROM reading_hours WHERE site_id = $1 AND start < $2`, [site_id, before]);
}

/** Batch claims older than any redelivery can be (the stream keeps messages `maxAgeMs`). */
export async function forgetRolledBatches(db: DataSource, before: number): Promise<void> {
  await db.query(`DELETE FROM rolled_batches WHERE rolled_at < $1`, [before]);
}
