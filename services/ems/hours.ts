/**
 * The readings key kept compressed (docs/architecture.md, "The historian"): ems keeps its energy
 * tags' readings only so that a redelivered one is not counted twice (rollups.repo.ts). Past
 * HISTORY_COMPRESS_AFTER, the raw rows of a monitor's tag and UTC hour give way to one row holding
 * the hour's timestamps, encoded by lib/historian/codec.ts: a steady 1 Hz hour costs a few bytes
 * instead of 100 a reading. Its values are not kept (all 0 in the chunk): every figure is read from
 * the rollups, which took each reading when it came.
 *
 * - The job (compressReadings) takes whole hours that ended before the cutoff: their raw rows are
 *   deleted and their hour's row written in one transaction, under the monitor's lock.
 * - A reading that arrives late for a compressed hour is stored raw (when its instant is not in the
 *   hour's row already: rollups.repo.ts) and merged into the row by the next run.
 */
import type { DataSource, EntityManager } from "typeorm";
import { decodeChunk, encodeChunk } from "../../lib/historian/codec";
import { HOUR_MS } from "../../lib/time";
import * as repo from "./hours.repo";

/** The UTC hour a reading's timestamp falls in (its first ms). */
export const hourOf = (ts: number): number => Math.floor(ts / HOUR_MS) * HOUR_MS;

/** The hour from which readings stay raw at `now`: hours that ended HISTORY_COMPRESS_AFTER ago are due. */
export const compressCutoff = (now: number, afterMs: number): number => hourOf(now - afterMs);

/** An hour's timestamps as the compressed row keeps them (ascending, each once). */
export function encodeHour(timestamps: number[]): Buffer {
  return encodeChunk(timestamps, new Float64Array(timestamps.length));
}

export function decodeHour(data: Uint8Array): number[] {
  return decodeChunk(data).timestamps;
}

/** Two ascending lists of timestamps as one, each instant once. */
export function mergeTimestamps(a: number[], b: number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const next = j >= b.length || (i < a.length && a[i]! <= b[j]!) ? a[i++]! : b[j++]!;
    if (out.length === 0 || out[out.length - 1] !== next) out.push(next);
  }
  return out;
}

/** The key of a monitor's tag's hour, as the maps of a batch hold it. */
export const hourKey = (monitor_id: string, tag_id: string, start: number): string => `${monitor_id}\u0000${tag_id}\u0000${start}`;

/** How often the job runs (docs/architecture.md, "The historian": at least every minute). */
export const COMPRESS_EVERY_MS = 30_000;

/** A tag's hours compressed in one transaction: about 360,000 readings of a 1 Hz tag, a second's work. */
export const HOURS_PER_ROUND = 100;

/**
 * The compression job: every monitor's tag's raw readings of hours that ended before the cutoff
 * move into their hours' rows (merged with the row an hour already has: late readings), deleted
 * and written in one transaction under the monitor's lock, so a batch finds each reading's key in
 * one place or the other. Answers the hours written; a replica finding another at it stops.
 */
export async function compressReadings(db: DataSource, now: number, afterMs: number): Promise<number> {
  const cutoff = compressCutoff(now, afterMs);
  let written = 0;
  for (const s of await repo.seriesDue(db, cutoff)) {
    for (;;) {
      const round = await db.transaction((tx) => compressRound(tx, s, cutoff));
      if (round === null) return written;
      written += round.hours;
      if (!round.more) break;
    }
  }
  return written;
}

async function compressRound(tx: EntityManager, s: repo.SeriesDue, cutoff: number): Promise<{ hours: number; more: boolean } | null> {
  if (!(await repo.claimCompression(tx))) return null;
  await repo.lockMonitor(tx, s.monitor_id);
  const oldest = await repo.oldestRaw(tx, s, cutoff);
  if (oldest === null) return { hours: 0, more: false };
  const from = hourOf(oldest);
  const to = Math.min(cutoff, from + HOURS_PER_ROUND * HOUR_MS);
  const byHour = new Map<number, number[]>();
  for (const ts of (await repo.takeRaw(tx, s, from, to)).sort((a, b) => a - b)) {
    const start = hourOf(ts);
    let list = byHour.get(start);
    if (!list) byHour.set(start, (list = []));
    list.push(ts);
  }
  const keys = [...byHour.keys()].map((start) => ({ ...s, start }));
  const existing = new Map((await repo.hoursOf(tx, keys)).map((h) => [Number(h.start), decodeHour(h.data)]));
  const writes = [...byHour].map(([start, raw]) => {
    const timestamps = mergeTimestamps(existing.get(start) ?? [], raw);
    return { start, n: timestamps.length, data: encodeHour(timestamps) };
  });
  await repo.putHours(tx, s, writes);
  return { hours: writes.length, more: to < cutoff };
}
