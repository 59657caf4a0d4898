/**
 * The SQL of the historian's compressed readings (chunks.ts has the rules): the series dictionary,
 * the raw readings a compression takes out of `readings`, the chunks (one row per series and
 * hour), and what reads and retention ask of them.
 */
import type { DataSource, EntityManager } from "typeorm";
import type { ChunkSummary } from "../../lib/historian/codec";
import { HOUR_MS } from "../../lib/time";
import { arrayText, rowsOf, type Queryable } from "./sql";

/** A series' hour whose raw readings are due for compression. */
export interface HourOfSeries {
  monitor_id: string;
  tag_id: string;
  site_id: string;
  /** The hour's first ms. */
  start: number;
}

/** A raw reading as the compression takes it out of `readings`, in the order raw reads keep (ts, batch_id, idx). */
export interface TakenReading {
  monitor_id: string;
  tag_id: string;
  ts: number;
  value: number;
  batch_id: string;
  idx: number;
}

export interface ChunkRow {
  series_id: number;
  start: number;
  data: Buffer;
}

/** A reading's time back in epoch ms, as history.repo.ts reads it. */
const MS = `round(extract(epoch FROM ts) * 1000)::float8`;

/**
 * One replica compresses at a time (the lock is the transaction's): two compressing the same hour
 * would each merge what the other did not see. Answers false while another replica holds it.
 */
export async function claimCompression(tx: EntityManager): Promise<boolean> {
  const [row] = (await tx.query(`SELECT pg_try_advisory_xact_lock(hashtext('ims:pipelines:compress')) AS ok`)) as { ok: boolean }[];
  return row?.ok === true;
}

/** The series' hours marked as holding raw readings (history.repo.ts's fold marks them), before `cutoff`, oldest first. */
export async function hoursDue(db: Queryable, cutoff: number): Promise<HourOfSeries[]> {
  const rows = (await db.query(`SELECT monitor_id, tag_id, site_id, start::float8 AS start FROM compress_due WHERE start < $1 ORDER BY start, monitor_id, tag_id`, [
    cutoff,
  ])) as HourOfSeries[];
  return rows.map((r) => ({ ...r, start: Number(r.start) }));
}

/**
 * Takes the hours' marks, first in the compression's transaction: a fold marking one of them
 * again meanwhile (a late reading) waits for this transaction and marks it anew for the next run.
 */
export async function unmarkHours(tx: EntityManager, hours: HourOfSeries[]): Promise<void> {
  await tx.query(
    `DELETE FROM compress_due d USING unnest($1::uuid[], $2::text[], $3::bigint[]) AS h(m, g, s) WHERE d.monitor_id = h.m AND d.tag_id = h.g AND d.start = h.s`,
    [`{${hours.map((h) => h.monitor_id).join(",")}}`, `{${hours.map((h) => arrayText(h.tag_id)).join(",")}}`, `{${hours.map((h) => h.start).join(",")}}`],
  );
}

/** The series ids of these monitors' tags, made where missing. */
export async function seriesIds(tx: EntityManager, hours: HourOfSeries[]): Promise<Map<string, number>> {
  const rows = (await tx.query(
    `WITH wanted AS (SELECT DISTINCT ON (m, g) m, g, s FROM unnest($1::uuid[], $2::text[], $3::uuid[]) AS w(m, g, s)),
          made AS (INSERT INTO series (monitor_id, tag_id, site_id) SELECT m, g, s FROM wanted ON CONFLICT (monitor_id, tag_id) DO NOTHING RETURNING series_id, monitor_id, tag_id)
     SELECT series_id, monitor_id, tag_id FROM made
     UNION ALL SELECT x.series_id, x.monitor_id, x.tag_id FROM series x JOIN wanted w ON x.monitor_id = w.m AND x.tag_id = w.g`,
    [`{${hours.map((h) => h.monitor_id).join(",")}}`, `{${hours.map((h) => arrayText(h.tag_id)).join(",")}}`, `{${hours.map((h) => h.site_id).join(",")}}`],
  )) as { series_id: number; monitor_id: string; tag_id: string }[];
  return new Map(rows.map((r) => [seriesKey(r.monitor_id, r.tag_id), r.series_id]));
}

export const seriesKey = (monitor_id: string, tag_id: string): string => `${monitor_id}\u0000${tag_id}`;

/** Deletes the hours' raw readings (before `cutoff` only) and answers them, ordered as raw reads order them. */
export async function takeRaw(tx: EntityManager, hours: HourOfSeries[], cutoff: number): Promise<TakenReading[]> {
  const res = await tx.query(
    `DELETE FROM readings r USING unnest($1::uuid[], $2::text[], $3::float8[]) AS h(m, g, s)
      WHERE r.monitor_id = h.m AND r.tag_id = h.g
        AND r.ts >= to_timestamp(h.s / 1000) AND r.ts < to_timestamp((h.s + ${HOUR_MS}) / 1000) AND r.ts < to_timestamp($4::float8 / 1000)
      RETURNING r.monitor_id, r.tag_id, ${MS.replace(/ts/g, "r.ts")} AS ts, r.value, r.batch_id, r.idx`,
    [`{${hours.map((h) => h.monitor_id).join(",")}}`, `{${hours.map((h) => arrayText(h.tag_id)).join(",")}}`, `{${hours.map((h) => h.start).join(",")}}`, cutoff],
  );
  return rowsOf<TakenReading>(res);
}

/** The chunks of these series' hours, locked for the merge. */
export async function chunksForUpdate(tx: EntityManager, keys: { series_id: number; start: number }[]): Promise<ChunkRow[]> {
  const rows = (await tx.query(
    `SELECT c.series_id, c.start, c.data FROM chunks c JOIN unnest($1::int[], $2::bigint[]) AS k(s, t) ON c.series_id = k.s AND c.start = k.t
      ORDER BY 1, 2 FOR UPDATE OF c`,
    [keys.map((k) => k.series_id), keys.map((k) => k.start)],
  )) as ChunkRow[];
  return rows.map((r) => ({ ...r, start: Number(r.start) }));
}

export interface ChunkWrite {
  series_id: number;
  start: number;
  summary: ChunkSummary;
  data: Buffer;
}

/** Writes chunks whole (a merged one replaces its row). */
export async function upsertChunks(tx: EntityManager, chunks: ChunkWrite[]): Promise<void> {
  for (const c of chunks) {
    const s = c.summary;
    await tx.query(
      `INSERT INTO chunks (series_id, start, n, first_ts, last_ts, min, max, sum, first, last, data)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (series_id, start) DO UPDATE SET n = excluded.n, first_ts = excluded.first_ts, last_ts = excluded.last_ts,
         min = excluded.min, max = excluded.max, sum = excluded.sum, first = excluded.first, last = excluded.last, data = excluded.data`,
      [c.series_id, c.start, s.count, s.start, s.end, s.min, s.max, s.sum, s.first, s.last, c.data],
    );
  }
}

export async function deleteChunks(tx: EntityManager, keys: { series_id: number; start: number }[]): Promise<void> {
  if (keys.length === 0) return;
  await tx.query(`DELETE FROM chunks c USING unnest($1::int[], $2::bigint[]) AS k(s, t) WHERE c.series_id = k.s AND c.start = k.t`, [
    keys.map((k) => k.series_id),
    keys.map((k) => k.start),
  ]);
}

/**
 * The minute rollups of compressed hours go: the chunk answers them (history.repo.ts), and at one
 * row a minute they would cost more than the chunk itself.
 */
export async function dropMinuteRollups(tx: EntityManager, hours: HourOfSeries[]): Promise<void> {
  if (hours.length === 0) return;
  await tx.query(
    `DELETE FROM reading_minutes m USING unnest($1::uuid[], $2::text[], $3::bigint[]) AS h(mo, g, s)
      WHERE m.monitor_id = h.mo AND m.tag_id = h.g AND m.start >= h.s AND m.start < h.s + ${HOUR_MS}`,
    [`{${hours.map((h) => h.monitor_id).join(",")}}`, `{${hours.map((h) => arrayText(h.tag_id)).join(",")}}`, `{${hours.map((h) => h.start).join(",")}}`],
  );
}

/** Vacuums the minute rollups (skipping it while another holds the table), outside any transaction. */
export async function vacuumMinuteRollups(db: DataSource): Promise<void> {
  await db.query(`VACUUM (SKIP_LOCKED) reading_minutes`);
}

/** A series' chunks holding readings in any of the ranges ([from, to], ms), oldest first. */
export async function chunksOfSeries(db: Queryable, monitor_id: string, tag_id: string, ranges: { from: number; to: number }[]): Promise<ChunkRow[]> {
  if (ranges.length === 0) return [];
  const params: unknown[] = [monitor_id, tag_id];
  const overlaps = ranges
    .map((r) => {
      params.push(r.from, r.to);
      const [from, to] = [`$${params.length - 1}::bigint`, `$${params.length}::bigint`];
      return `(c.start <= ${to} AND c.start > ${from} - ${HOUR_MS} AND c.last_ts >= ${from} AND c.first_ts <= ${to})`;
    })
    .join(" OR ");
  const rows = (await db.query(
    `SELECT c.series_id, c.start, c.data FROM chunks c JOIN series s USING (series_id)
      WHERE s.monitor_id = $1 AND s.tag_id = $2 AND (${overlaps}) ORDER BY c.start`,
    params,
  )) as ChunkRow[];
  return rows.map((r) => ({ ...r, start: Number(r.start) }));
}

/** A monitor's chunks of one hour, with their tags. */
export async function chunksOfMonitorHour(db: Queryable, monitor_id: string, start: number): Promise<(ChunkRow & { tag_id: string })[]> {
  const rows = (await db.query(
    `SELECT c.series_id, c.start, c.data, s.tag_id FROM chunks c JOIN series s USING (series_id) WHERE s.monitor_id = $1 AND c.start = $2`,
    [monitor_id, start],
  )) as (ChunkRow & { tag_id: string })[];
  return rows.map((r) => ({ ...r, start: Number(r.start) }));
}

/** The first hour at or after `from` (and not after `to`) where a monitor has readings, raw or compressed; null when none. */
export async function nextHourOfMonitor(db: Queryable, monitor_id: string, from: number, to: number): Promise<number | null> {
  const [row] = (await db.query(
    `SELECT least(
       (SELECT min(c.start) FROM chunks c JOIN series s USING (series_id) WHERE s.monitor_id = $1 AND c.start >= $2::bigint - $2::bigint % ${HOUR_MS} AND c.start <= $3),
       (SELECT (floor(extract(epoch FROM min(ts)) * 1000 / ${HOUR_MS}) * ${HOUR_MS})::float8 FROM readings
         WHERE monitor_id = $1 AND ts >= to_timestamp($2::float8 / 1000) AND ts <= to_timestamp($3::float8 / 1000))
     )::float8 AS start`,
    [monitor_id, from, to],
  )) as { start: number | null }[];
  return row?.start === null || row?.start === undefined ? null : Math.max(Number(row.start), from - (from % HOUR_MS));
}

/** Which of a series' hours in [from, to) have a chunk (their minute rollups are not read: chunks.ts). */
export const COMPRESSED_HOUR = (series: string, hourOf: string): string =>
  `EXISTS (SELECT 1 FROM chunks c WHERE c.series_id = (${series}) AND c.start = ${hourOf})`;

/** Up to `limit` of a site's chunks that hold readings before `before`, for retention. */
export async function chunksOfSiteBefore(
  db: Queryable,
  site_id: string,
  before: number,
  limit: number,
): Promise<(ChunkRow & { monitor_id: string; tag_id: string; last_ts: number })[]> {
  const rows = (await db.query(
    `SELECT c.series_id, c.start, c.data, c.last_ts, s.monitor_id, s.tag_id FROM chunks c JOIN series s USING (series_id)
      WHERE s.site_id = $1 AND c.first_ts < $2 ORDER BY c.series_id, c.start LIMIT $3`,
    [site_id, before, limit],
  )) as (ChunkRow & { monitor_id: string; tag_id: string; last_ts: number })[];
  return rows.map((r) => ({ ...r, start: Number(r.start), last_ts: Number(r.last_ts) }));
}

export interface MinuteRollup {
  monitor_id: string;
  tag_id: string;
  site_id: string;
  start: number;
  n: number;
  sum: number;
  min: number;
  max: number;
}

/** Minute rollups written whole from a chunk (what a late fold left of them is replaced). */
export async function putMinuteRollups(tx: EntityManager, rows: MinuteRollup[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <K extends keyof MinuteRollup>(k: K) => rows.map((r) => r[k]);
  await tx.query(
    `INSERT INTO reading_minutes (monitor_id, tag_id, start, site_id, n, sum, min, max)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::uuid[], $5::int[], $6::float8[], $7::float8[], $8::float8[])
     ON CONFLICT (monitor_id, tag_id, start) DO UPDATE SET n = excluded.n, sum = excluded.sum, min = excluded.min, max = excluded.max`,
    [col("monitor_id"), col("tag_id"), col("start"), col("site_id"), col("n"), col("sum"), col("min"), col("max")],
  );
}

/** The raw readings' day partitions ending at or before `cutoff` that still take pages (more than an empty table and index). */
export async function fullDayPartitions(db: Queryable, cutoff: number): Promise<string[]> {
  const rows = (await db.query(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'readings'::regclass AND pg_total_relation_size(c.oid) > 65536`,
  )) as { name: string; bound: string }[];
  return rows
    .filter((r) => {
      const to = /TO \('([^']+)'\)/.exec(r.bound)?.[1];
      return to !== undefined && Date.parse(to) <= cutoff;
    })
    .map((r) => r.name);
}

/**
 * Empties a day partition whose readings all went into chunks, giving its pages and its index's
 * back at once (a DELETE leaves the index its full size until the day is dropped). Under an
 * exclusive lock, so no late reading can arrive between the check and the truncation: one that
 * is there already keeps the partition for the next run. The lock is waited for briefly only
 * (readers and late inserts queue behind a waiting lock). A reading snapshot older than the
 * compression cannot miss the rows truncated away: every read of history.repo.ts touches the
 * partitions of its range in its first statement, so it holds them until it ends and the
 * truncation waits (and gives up). Answers whether it emptied it.
 */
export async function truncateIfEmpty(tx: EntityManager, partition: string): Promise<boolean> {
  await tx.query(`SET LOCAL lock_timeout = '200ms'`);
  try {
    await tx.query(`LOCK TABLE ${partition} IN ACCESS EXCLUSIVE MODE`);
  } catch {
    return false;
  }
  const [row] = (await tx.query(`SELECT EXISTS (SELECT 1 FROM ${partition}) AS has`)) as { has: boolean }[];
  if (row?.has) return false;
  await tx.query(`TRUNCATE ${partition}`);
  return true;
}
