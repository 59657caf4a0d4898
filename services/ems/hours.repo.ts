/**
 * The SQL of the compressed readings key (hours.ts has the rules): the monitor's lock that
 * ingestion, compression and retention take turns on, the raw rows a compression takes, and the
 * compressed hours' rows.
 */
import type { EntityManager } from "typeorm";
import { HOUR_MS } from "../../lib/time";
import type { Queryable } from "./port";

/** A monitor's tag whose raw readings are due for compression. */
export interface SeriesDue {
  monitor_id: string;
  tag_id: string;
}

/** A compressed hour's row: its timestamps, encoded (hours.ts). */
export interface HourRow {
  monitor_id: string;
  tag_id: string;
  start: number;
  data: Buffer;
}

/**
 * The monitor's lock, held to the end of the transaction: a batch's readings, a compression and
 * retention of one monitor take turns, so a reading is always in the raw rows or its hour's row
 * (never neither) when a batch looks for it. Taken in monitor order, so locks cannot deadlock.
 */
export async function lockMonitor(tx: EntityManager, monitor_id: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`ems:monitor:${monitor_id}`]);
}

/** One replica compresses at a time (the lock is the transaction's); false while another holds it. */
export async function claimCompression(tx: EntityManager): Promise<boolean> {
  const [row] = (await tx.query(`SELECT pg_try_advisory_xact_lock(hashtext('ims:ems:compress')) AS ok`)) as { ok: boolean }[];
  return row?.ok === true;
}

/**
 * The monitors' tags with raw readings before `cutoff`: a skip scan of the readings key (one
 * index probe per tag, however many readings each holds).
 */
export async function seriesDue(db: Queryable, cutoff: number): Promise<SeriesDue[]> {
  return db.query(
    `WITH RECURSIVE s AS (
       (SELECT monitor_id, tag_id FROM readings ORDER BY monitor_id, tag_id LIMIT 1)
       UNION ALL
       SELECT n.monitor_id, n.tag_id FROM s CROSS JOIN LATERAL (
         SELECT r.monitor_id, r.tag_id FROM readings r WHERE (r.monitor_id, r.tag_id) > (s.monitor_id, s.tag_id)
          ORDER BY r.monitor_id, r.tag_id LIMIT 1) n)
     SELECT s.monitor_id::text, s.tag_id FROM s
      WHERE (SELECT min(r.ts) FROM readings r WHERE r.monitor_id = s.monitor_id AND r.tag_id = s.tag_id) < $1
      ORDER BY 1, 2`,
    [cutoff],
  );
}

/** A tag's oldest raw reading before `cutoff` (epoch ms), or null. */
export async function oldestRaw(tx: EntityManager, s: SeriesDue, cutoff: number): Promise<number | null> {
  const [row] = (await tx.query(`SELECT min(ts)::float8 AS ts FROM readings WHERE monitor_id = $1 AND tag_id = $2 AND ts < $3`, [
    s.monitor_id,
    s.tag_id,
    cutoff,
  ])) as { ts: number | null }[];
  return row?.ts ?? null;
}

/** Deletes a tag's raw readings in [from, to) and answers their timestamps. */
export async function takeRaw(tx: EntityManager, s: SeriesDue, from: number, to: number): Promise<number[]> {
  const rows = (await tx.query(
    `WITH taken AS (DELETE FROM readings WHERE monitor_id = $1 AND tag_id = $2 AND ts >= $3 AND ts < $4 RETURNING ts)
     SELECT ts::float8 AS ts FROM taken`,
    [s.monitor_id, s.tag_id, from, to],
  )) as { ts: number }[];
  return rows.map((r) => r.ts);
}

/** The compressed rows of these hours of the monitors' tags (those that exist). */
export async function hoursOf(db: Queryable, keys: { monitor_id: string; tag_id: string; start: number }[]): Promise<HourRow[]> {
  if (keys.length === 0) return [];
  const rows = (await db.query(
    `SELECT h.monitor_id::text, h.tag_id, h.start::float8 AS start, h.data
       FROM compressed_hours h JOIN unnest($1::uuid[], $2::text[], $3::bigint[]) AS k(m, g, s) ON h.monitor_id = k.m AND h.tag_id = k.g AND h.start = k.s`,
    [keys.map((k) => k.monitor_id), keys.map((k) => k.tag_id), keys.map((k) => k.start)],
  )) as HourRow[];
  return rows;
}

/** Writes a tag's compressed hours whole (a merged one replaces its row). */
export async function putHours(tx: EntityManager, s: SeriesDue, hours: { start: number; n: number; data: Buffer }[]): Promise<void> {
  if (hours.length === 0) return;
  await tx.query(
    `INSERT INTO compressed_hours (monitor_id, tag_id, start, n, data)
     SELECT $1, $2, * FROM unnest($3::bigint[], $4::int[], $5::bytea[])
     ON CONFLICT (monitor_id, tag_id, start) DO UPDATE SET n = excluded.n, data = excluded.data`,
    [s.monitor_id, s.tag_id, hours.map((h) => h.start), hours.map((h) => h.n), hours.map((h) => h.data)],
  );
}

/**
 * Retention: a monitor's compressed hours that ended by `before` go (retention's mark keeps their
 * readings out from then on); answers how many readings they held. An hour straddling `before`
 * stays whole: its later readings are still the key of what may be delivered again.
 */
export async function deleteHoursBefore(tx: EntityManager, monitor_id: string, before: number): Promise<number> {
  const [row] = (await tx.query(
    `WITH gone AS (DELETE FROM compressed_hours WHERE monitor_id = $1 AND start <= $2::bigint - ${HOUR_MS} RETURNING n)
     SELECT coalesce(sum(n), 0)::float8 AS n FROM gone`,
    [monitor_id, before],
  )) as { n: number }[];
  return row?.n ?? 0;
}
