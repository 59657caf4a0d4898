/** The SQL of the spectra: one row a capture, its bins, its samples and the peaks found at ingestion. */
import type { Band } from "./envelope";
import type { Peak } from "./peaks";
import type { Queryable } from "./port";

/** The envelope spectrum of the default band, as found at ingestion. */
export interface StoredEnvelope {
  band: Band;
  df: number;
  peaks: Peak[];
}

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
  /** The capture's samples as float32 bytes; null for captures stored before they were kept (and in reads that leave them out). */
  waveform: Buffer | null;
  envelope: StoredEnvelope | null;
}

/** Every column but the samples, which only an envelope read needs. */
const ROW = "monitor_id, tag, axis, ts, sample_rate_hz, samples, df, amplitudes, peaks, envelope";
const columns = (withWaveform: boolean): string => (withWaveform ? `${ROW}, waveform` : `${ROW}, NULL::bytea AS waveform`);

interface SpectrumDbRow extends Omit<SpectrumRow, "ts"> {
  ts: string;
}

const toSpectrum = (r: SpectrumDbRow): SpectrumRow => ({ ...r, ts: Number(r.ts) });

/** A capture is stored once: a redelivered waveform finds its row and changes nothing. */
export async function insertSpectrum(db: Queryable, s: SpectrumRow): Promise<boolean> {
  const rows: unknown[] = await db.query(
    `INSERT INTO spectra (monitor_id, tag, axis, ts, sample_rate_hz, samples, df, amplitudes, peaks, waveform, envelope, created_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)
     ON CONFLICT DO NOTHING RETURNING 1`,
    [
      s.monitor_id,
      s.tag,
      s.axis,
      s.ts,
      s.sample_rate_hz,
      s.samples,
      s.df,
      s.amplitudes,
      JSON.stringify(s.peaks),
      s.waveform,
      s.envelope && JSON.stringify(s.envelope),
      Date.now(),
    ],
  );
  return rows.length > 0;
}

export async function spectrumAt(db: Queryable, monitor_id: string, tag: string, axis: string, ts: number, withWaveform = false): Promise<SpectrumRow | undefined> {
  const rows: SpectrumDbRow[] = await db.query(
    `SELECT ${columns(withWaveform)} FROM spectra WHERE monitor_id = $1 AND tag = $2 AND axis = $3 AND ts = $4`,
    [monitor_id, tag, axis, ts],
  );
  return rows[0] ? toSpectrum(rows[0]) : undefined;
}

/**
 * The capture of (monitor, tag, axis) nearest to `ts`, either side; of two equally near, the
 * earlier. Two probes of spectra_latest (one step each way), then the one row's bins.
 */
export async function spectrumNearest(
  db: Queryable,
  monitor_id: string,
  tag: string,
  axis: string,
  ts: number,
  withWaveform = false,
): Promise<SpectrumRow | undefined> {
  const rows: SpectrumDbRow[] = await db.query(
    `SELECT ${columns(withWaveform)} FROM spectra WHERE monitor_id = $1 AND tag = $2 AND axis = $3 AND ts = (
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
export async function spectrumTimestamps(db: Queryable, monitor_id: string, q: TimestampsQuery = {}): Promise<number[]> {
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

/** The latest spectrum of each (tag, axis) of the monitors, without the bins and samples. */
export async function latestSpectra(db: Queryable, monitor_ids: string[]): Promise<Omit<SpectrumRow, "amplitudes" | "waveform">[]> {
  if (monitor_ids.length === 0) return [];
  const rows: SpectrumDbRow[] = await db.query(
    `SELECT DISTINCT ON (monitor_id, tag, axis) monitor_id, tag, axis, ts, sample_rate_hz, samples, df, peaks, envelope
       FROM spectra WHERE monitor_id = ANY($1::uuid[])
      ORDER BY monitor_id, tag, axis, ts DESC`,
    [monitor_ids],
  );
  return rows.map(toSpectrum);
}

/** The monitors that have spectra: one probe of the key a monitor (a loose index scan), not a read of every row. */
export async function spectraMonitors(db: Queryable): Promise<string[]> {
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
export async function deleteSpectraBefore(db: Queryable, monitor_ids: string[], before: number): Promise<number> {
  const res = (await db.query(`DELETE FROM spectra WHERE monitor_id = ANY($1::uuid[]) AND ts < $2`, [monitor_ids, before])) as [unknown, number];
  return res[1] ?? 0;
}

export async function forgetMonitor(db: Queryable, monitor_id: string): Promise<void> {
  await db.query(`DELETE FROM spectra WHERE monitor_id = $1`, [monitor_id]);
}
