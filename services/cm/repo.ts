/** cm's queries on its own schema. */
import type { DataSource, EntityManager } from "typeorm";
import type { Peak } from "./peaks";

type Db = DataSource | EntityManager;

export interface SpectrumRow {
  monitor_id: string;
  tag: string;
  axis: string;
  ts: number;
  sample_rate_hz: number;
  samples: number;
  df: number;
  amplitudes: Buffer;
  peaks: Peak[];
}

interface SpectrumDbRow extends Omit<SpectrumRow, "ts"> {
  ts: string;
}

const toSpectrum = (r: SpectrumDbRow): SpectrumRow => ({ ...r, ts: Number(r.ts) });

/** A capture is stored once: a redelivered waveform finds its row and changes nothing. */
export async function insertSpectrum(db: Db, s: SpectrumRow): Promise<boolean> {
  const rows: unknown[] = await db.query(
    `INSERT INTO spectra (monitor_id, tag, axis, ts, sample_rate_hz, samples, df, amplitudes, peaks, created_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)
     ON CONFLICT DO NOTHING RETURNING 1`,
    [s.monitor_id, s.tag, s.axis, s.ts, s.sample_rate_hz, s.samples, s.df, s.amplitudes, JSON.stringify(s.peaks), Date.now()],
  );
  return rows.length > 0;
}

export async function spectrumAt(db: Db, monitor_id: string, tag: string, axis: string, ts: number): Promise<SpectrumRow | undefined> {
  const rows: SpectrumDbRow[] = await db.query(
    `SELECT * FROM spectra WHERE monitor_id = $1 AND tag = $2 AND axis = $3 AND ts = $4`,
    [monitor_id, tag, axis, ts],
  );
  return rows[0] ? toSpectrum(rows[0]) : undefined;
}

/**
 * The capture of (monitor, tag, axis) nearest to `ts`, either side; of two equally near, the
 * earlier. Two probes of spectra_latest (one step each way), then the one row's bins.
 */
export async function spectrumNearest(db: Db, monitor_id: string, tag: string, axis: string, ts: number): Promise<SpectrumRow | undefined> {
  const rows: SpectrumDbRow[] = await db.query(
    `SELECT * FROM spectra WHERE monitor_id = $1 AND tag = $2 AND axis = $3 AND ts = (
       SELECT near.ts FROM (
         (SELECT ts FROM spectra WHERE monitor_id = $1 AND tag = $2 AND axis = $3 AND ts <= $4::bigint ORDER BY ts DESC LIMIT 1)
         UNION ALL
         (SELECT ts FROM spectra WHERE monitor_id = $1 AND tag = $2 AND axis = $3 AND ts > $4::bigint ORDER BY ts LIMIT 1)
       ) near ORDER BY abs(near.ts - $4::bigint), near.ts LIMIT 1)`,
    [monitor_id, tag, axis, ts],
  );
  return rows[0] ? toSpectrum(rows[0]) : undefined;
}

/** Bounds of a timestamps read: `from`/`to` inclusive (epoch ms), the newest `limit` of them. */
export interface TimestampsQuery {
  from?: number;
  to?: number;
  limit?: number;
}

/**
 * Capture times of a monitor, ascending. The primary key (monitor_id, ts, tag, axis) serves the
 * range either way: with a limit it is read backwards from `to` and stops after `limit` times.
 */
export async function spectrumTimestamps(db: Db, monitor_id: string, q: TimestampsQuery = {}): Promise<number[]> {
  const args: unknown[] = [monitor_id];
  let where = "monitor_id = $1";
  if (q.from !== undefined) where += ` AND ts >= $${args.push(q.from)}::bigint`;
  if (q.to !== undefined) where += ` AND ts <= $${args.push(q.to)}::bigint`;
  const sql =
    q.limit === undefined
      ? `SELECT DISTINCT ts FROM spectra WHERE ${where} ORDER BY ts`
      : `SELECT ts FROM (SELECT DISTINCT ts FROM spectra WHERE ${where} ORDER BY ts DESC LIMIT $${args.push(q.limit)}) newest ORDER BY ts`;
  const rows: { ts: string }[] = await db.query(sql, args);
  return rows.map((r) => Number(r.ts));
}

/** The latest spectrum of each (tag, axis) of the monitors, without the bins. */
export async function latestSpectra(db: Db, monitor_ids: string[]): Promise<Omit<SpectrumRow, "amplitudes">[]> {
  if (monitor_ids.length === 0) return [];
  const rows: SpectrumDbRow[] = await db.query(
    `SELECT DISTINCT ON (monitor_id, tag, axis) monitor_id, tag, axis, ts, sample_rate_hz, samples, df, peaks
       FROM spectra WHERE monitor_id = ANY($1::uuid[])
      ORDER BY monitor_id, tag, axis, ts DESC`,
    [monitor_ids],
  );
  return rows.map(toSpectrum);
}

/** The monitors that have spectra: one probe of the key a monitor (a loose index scan), not a read of every row. */
export async function spectraMonitors(db: Db): Promise<string[]> {
  const rows: { monitor_id: string }[] = await db.query(
    `WITH RECURSIVE m AS (
       (SELECT monitor_id FROM spectra ORDER BY monitor_id LIMIT 1)
       UNION ALL
       SELECT (SELECT s.monitor_id FROM spectra s WHERE s.monitor_id > m.monitor_id ORDER BY s.monitor_id LIMIT 1)
         FROM m WHERE m.monitor_id IS NOT NULL)
     SELECT monitor_id::text FROM m WHERE monitor_id IS NOT NULL`,
  );
  return rows.map((r) => r.monitor_id);
}

/** Retention: the monitors' spectra captured before `before` go. */
export async function deleteSpectraBefore(db: Db, monitor_ids: string[], before: number): Promise<number> {
  const res = (await db.query(`DELETE FROM spectra WHERE monitor_id = ANY($1::uuid[]) AND ts < $2`, [monitor_ids, before])) as [unknown, number];
  return res[1] ?? 0;
}

export interface LatestValue {
  monitor_id: string;
  tag_id: string;
  ts: number;
  value: number;
  asset_id: string | null;
}

/** Keeps the newest value per tag; an older or redelivered reading changes nothing. */
export async function upsertLatest(db: Db, values: LatestValue[]): Promise<void> {
  if (values.length === 0) return;
  await db.query(
    `INSERT INTO latest_values (monitor_id, tag_id, ts, value, asset_id)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::float8[], $5::uuid[])
     ON CONFLICT (monitor_id, tag_id) DO UPDATE
       SET ts = excluded.ts, value = excluded.value, asset_id = excluded.asset_id
       WHERE excluded.ts >= latest_values.ts`,
    [
      values.map((v) => v.monitor_id),
      values.map((v) => v.tag_id),
      values.map((v) => v.ts),
      values.map((v) => v.value),
      values.map((v) => v.asset_id),
    ],
  );
}

type LatestDbRow = Omit<LatestValue, "ts"> & { ts: string };
const toLatest = (r: LatestDbRow): LatestValue => ({ ...r, ts: Number(r.ts) });

export async function latestOfMonitors(db: Db, monitor_ids: string[]): Promise<LatestValue[]> {
  if (monitor_ids.length === 0) return [];
  const rows: LatestDbRow[] = await db.query(`SELECT * FROM latest_values WHERE monitor_id = ANY($1::uuid[])`, [monitor_ids]);
  return rows.map(toLatest);
}

export async function latestOfAsset(db: Db, asset_id: string): Promise<LatestValue[]> {
  const rows: LatestDbRow[] = await db.query(`SELECT * FROM latest_values WHERE asset_id = $1`, [asset_id]);
  return rows.map(toLatest);
}

export async function moveMonitor(db: Db, monitor_id: string, asset_id: string | null): Promise<void> {
  await db.query(`UPDATE latest_values SET asset_id = $2 WHERE monitor_id = $1`, [monitor_id, asset_id]);
}

export async function forgetMonitor(db: Db, monitor_id: string): Promise<void> {
  await db.query(`DELETE FROM latest_values WHERE monitor_id = $1`, [monitor_id]);
  await db.query(`DELETE FROM spectra WHERE monitor_id = $1`, [monitor_id]);
}

export interface EventRow {
  event_id: string;
  asset_id: string;
  event_start: number;
  event_severity: number;
  event_status: string;
  event_label: string;
  event_assignee: string;
}

export async function openEventOf(db: Db, asset_id: string): Promise<EventRow | undefined> {
  const rows: (Omit<EventRow, "event_start"> & { event_start: string })[] = await db.query(
    `SELECT event_id, asset_id, event_start, event_severity, event_status, event_label, event_assignee
       FROM events WHERE asset_id = $1 AND closed_at IS NULL`,
    [asset_id],
  );
  return rows[0] ? { ...rows[0], event_start: Number(rows[0].event_start) } : undefined;
}

/** Opens the asset's event unless one is open; an open one is raised to the worse severity (1 is worst). */
export async function openOrEscalate(db: Db, e: EventRow): Promise<void> {
  await db.query(
    `INSERT INTO events (event_id, asset_id, event_start, event_severity, event_status, event_label, event_assignee)
     VALUES ($1,$2,$3,$4,$5,$6,$7)
     ON CONFLICT (asset_id) WHERE closed_at IS NULL
       DO UPDATE SET event_severity = LEAST(events.event_severity, excluded.event_severity)`,
    [e.event_id, e.asset_id, e.event_start, e.event_severity, e.event_status, e.event_label, e.event_assignee],
  );
}

/**
 * Runs `work` in a transaction that holds the asset's advisory lock: replicas evaluating the
 * same asset take turns, so two never open two events or lower one's severity.
 */
export async function underAssetLock<T>(db: DataSource, asset_id: string, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`cm:asset:${asset_id}`]);
    return work(tx);
  });
}

export async function closeEvent(db: Db, asset_id: string, at: number): Promise<void> {
  await db.query(`UPDATE events SET closed_at = $2 WHERE asset_id = $1 AND closed_at IS NULL`, [asset_id, at]);
}
