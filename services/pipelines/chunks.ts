/**
 * The historian (docs/architecture.md, "The historian"): readings older than
 * HISTORY_COMPRESS_AFTER move out of the raw `readings` rows into one chunk per series and hour,
 * encoded by lib/historian/codec.ts, lossless to the float64 and the millisecond.
 *
 * - The compression job takes whole hours that ended before the cutoff, as the rollups' fold marked
 *   them (`compress_due`: no scan of the raw readings to find them): their raw rows are deleted
 *   and their chunk written in one transaction, so a read (one snapshot: history.repo.ts) sees each
 *   reading once, raw or compressed, never both or neither.
 * - A reading that arrives late for a compressed hour is stored raw like any other and read beside
 *   the chunk; the next run merges it into the chunk (decoded, merged, encoded again).
 * - Within a series, readings are kept in the raw reads' order: time, then batch and place in it;
 *   a late reading at an instant the chunk already has comes after the chunk's.
 * - A compressed hour's minute rollups are dropped: history.repo.ts reads its minutes from the chunk.
 * - A day partition of raw readings left empty is truncated: deleted rows leave their index at
 *   its full size until retention drops the day, which would cost more than the chunks.
 */
import type { DataSource, EntityManager } from "typeorm";
import { decodeChunk, encodeChunk, summarizeChunk } from "../../lib/historian/codec";
import { HOUR_MS, MINUTE_MS } from "../../lib/time";
import * as repo from "./chunks.repo";
import type { HourOfSeries, TakenReading } from "./chunks.repo";

/** Series-hours compressed in one transaction: about 360,000 readings of 1 Hz tags, a few seconds' work. */
export const HOURS_PER_ROUND = 100;

/** The hour from which readings stay raw at `now`: the start of the hour HISTORY_COMPRESS_AFTER back. */
export const compressCutoff = (now: number, afterMs: number): number => Math.floor((now - afterMs) / HOUR_MS) * HOUR_MS;

export interface Readings {
  timestamps: number[];
  values: number[];
}

/** The readings of a chunk and of raw rows after them (late ones), in time order; a stable merge. */
export function mergeReadings(first: Readings, then: Readings): Readings {
  const n = first.timestamps.length + then.timestamps.length;
  const timestamps = new Array<number>(n);
  const values = new Array<number>(n);
  let i = 0;
  let j = 0;
  for (let k = 0; k < n; k++) {
    const takeFirst = j >= then.timestamps.length || (i < first.timestamps.length && first.timestamps[i]! <= then.timestamps[j]!);
    if (takeFirst) {
      timestamps[k] = first.timestamps[i]!;
      values[k] = first.values[i++]!;
    } else {
      timestamps[k] = then.timestamps[j]!;
      values[k] = then.values[j++]!;
    }
  }
  return { timestamps, values };
}

/** Raw rows of one series in the raw reads' order (time, batch, place in the batch). */
export function rawOrder(rows: TakenReading[]): Readings {
  const sorted = [...rows].sort((a, b) => a.ts - b.ts || (a.batch_id < b.batch_id ? -1 : a.batch_id > b.batch_id ? 1 : 0) || a.idx - b.idx);
  return { timestamps: sorted.map((r) => Number(r.ts)), values: sorted.map((r) => r.value) };
}

/**
 * Compresses every series-hour that ended before the cutoff, HOURS_PER_ROUND at a time; answers how
 * many series-hours it wrote. A replica finding another at it leaves the work to that one.
 */
export async function compressReadings(db: DataSource, now: number, afterMs: number): Promise<number> {
  const cutoff = compressCutoff(now, afterMs);
  const due = await repo.hoursDue(db, cutoff);
  let written = 0;
  for (let i = 0; i < due.length; i += HOURS_PER_ROUND) {
    const done = await db.transaction((tx) => compressRound(tx, due.slice(i, i + HOURS_PER_ROUND), cutoff));
    if (done < 0) break;
    written += done;
  }
  // The minute rollups of what was compressed were deleted: their pages go back now, not at autovacuum's next turn.
  if (written > 0) await repo.vacuumMinuteRollups(db);
  // A day wholly compressed: its partition emptied at once (chunks.repo.ts truncateIfEmpty).
  for (const partition of await repo.fullDayPartitions(db, cutoff)) {
    await db.transaction((tx) => repo.truncateIfEmpty(tx, partition)).catch(() => false);
  }
  return written;
}

async function compressRound(tx: EntityManager, hours: HourOfSeries[], cutoff: number): Promise<number> {
  if (!(await repo.claimCompression(tx))) return -1;
  await repo.unmarkHours(tx, hours);
  const ids = await repo.seriesIds(tx, hours);
  const taken = await repo.takeRaw(tx, hours, cutoff);
  const bySeriesHour = new Map<string, TakenReading[]>();
  for (const r of taken) {
    const key = `${ids.get(repo.seriesKey(r.monitor_id, r.tag_id))}:${Math.floor(Number(r.ts) / HOUR_MS) * HOUR_MS}`;
    let list = bySeriesHour.get(key);
    if (!list) bySeriesHour.set(key, (list = []));
    list.push(r);
  }
  const keys = [...bySeriesHour.keys()].map((k) => {
    const [series_id, start] = k.split(":").map(Number) as [number, number];
    return { series_id, start };
  });
  const existing = new Map((await repo.chunksForUpdate(tx, keys)).map((c) => [`${c.series_id}:${c.start}`, c]));
  const writes: repo.ChunkWrite[] = [];
  for (const { series_id, start } of keys) {
    const key = `${series_id}:${start}`;
    const raw = rawOrder(bySeriesHour.get(key)!);
    const old = existing.get(key);
    const all = old ? mergeReadings(decodeChunk(old.data), raw) : raw;
    writes.push({ series_id, start, summary: summarizeChunk(all.timestamps, all.values), data: encodeChunk(all.timestamps, all.values) });
  }
  await repo.upsertChunks(tx, writes);
  // Only hours that now have a chunk: a mark whose raw readings retention took leaves its minutes (rollups outlive readings).
  const written = new Set(writes.map((w) => `${w.series_id}:${w.start}`));
  await repo.dropMinuteRollups(
    tx,
    hours.filter((h) => written.has(`${ids.get(repo.seriesKey(h.monitor_id, h.tag_id))}:${h.start}`)),
  );
  return writes.length;
}

/** The readings of these chunks within [from, to], oldest first (chunks in time order). */
export function readingsOfChunks(chunks: { data: Buffer }[], from: number, to: number): Readings {
  const out: Readings = { timestamps: [], values: [] };
  for (const c of chunks) {
    const { timestamps, values } = decodeChunk(c.data);
    for (let i = 0; i < timestamps.length; i++) {
      const ts = timestamps[i]!;
      if (ts < from || ts > to) continue;
      out.timestamps.push(ts);
      out.values.push(values[i]!);
    }
  }
  return out;
}

/** Count, sum and extremes of readings per epoch-aligned bucket of `size` ms (those `keep` takes), by bucket start. */
export function bucketsOf(r: Readings, size: number, keep: (ts: number) => boolean = () => true): { start: number; n: number; sum: number; min: number; max: number }[] {
  const out = new Map<number, { start: number; n: number; sum: number; min: number; max: number }>();
  for (let i = 0; i < r.timestamps.length; i++) {
    const ts = r.timestamps[i]!;
    if (!keep(ts)) continue;
    const start = Math.floor(ts / size) * size;
    const v = r.values[i]!;
    const m = out.get(start);
    if (!m) out.set(start, { start, n: 1, sum: v, min: v, max: v });
    else {
      m.n++;
      m.sum += v;
      m.min = Math.min(m.min, v);
      m.max = Math.max(m.max, v);
    }
  }
  return [...out.values()];
}

/** Chunks retention looks at in one transaction. */
const RETENTION_BATCH = 200;

/**
 * Retention of compressed readings: a site's readings before `before` go; a chunk straddling it
 * keeps its later readings. Where the minute rollups outlive the readings (`keepMinutes`), the
 * minutes of what goes are written back as rollups, so a trend keeps its minutes for as long as
 * it did before compression (history.ts, ROLLUPS_KEPT_DAYS). Answers how many readings went.
 */
export async function deleteCompressedBefore(db: DataSource, site_id: string, before: number, keepMinutes: boolean): Promise<number> {
  let deleted = 0;
  for (;;) {
    const n = await db.transaction(async (tx) => {
      const batch = await repo.chunksOfSiteBefore(tx, site_id, before, RETENTION_BATCH);
      const gone: { series_id: number; start: number }[] = [];
      const kept: repo.ChunkWrite[] = [];
      const minutes: repo.MinuteRollup[] = [];
      let count = 0;
      for (const c of batch) {
        const old = readingsOfChunks([c], -Infinity, before - 1);
        count += old.timestamps.length;
        if (keepMinutes) for (const m of bucketsOf(old, MINUTE_MS)) minutes.push({ monitor_id: c.monitor_id, tag_id: c.tag_id, site_id, ...m });
        if (c.last_ts < before) gone.push(c);
        else {
          const rest = readingsOfChunks([c], before, Infinity);
          kept.push({ series_id: c.series_id, start: c.start, summary: summarizeChunk(rest.timestamps, rest.values), data: encodeChunk(rest.timestamps, rest.values) });
        }
      }
      await repo.deleteChunks(tx, gone);
      await repo.upsertChunks(tx, kept);
      await repo.putMinuteRollups(tx, minutes);
      deleted += count;
      return batch.length;
    });
    if (n < RETENTION_BATCH) break;
  }
  return deleted;
}
