/**
 * Pages of a SQL source and the position between them (docs/collectors.md#pages-and-positions). Pure.
 *
 * The position is the time of the last rows stored and, for the rows at exactly that time, how
 * many of each fingerprint (a hash of the row's values read) were stored. The next page reads
 * from that time on (`>=`) and leaves out as many rows of each fingerprint as were stored: rows
 * sharing a time at a page's edge are neither skipped nor stored twice, a row inserted later at
 * that same time is still read, and no key of the table is needed (plant tables often have none).
 */
import { createHash } from "node:crypto";
import type { CollectedTag, CollectionPosition, Reading } from "../pipelines/contract";
import { epochMsOf } from "./time-value";

/** A row as read: its time as the server wrote it, and its columns' values in the page query's order. */
export interface SourceRow {
  time: string;
  values: unknown[];
  fingerprint: string;
}

/** 64 bits of sha256 of the values: what tells rows at one time apart. */
export function fingerprintOf(time: string, values: unknown[]): string {
  return createHash("sha256")
    .update(JSON.stringify([time, ...values.map((v) => (v === null || v === undefined ? null : String(v)))]))
    .digest("hex")
    .slice(0, 16);
}

export const seenCount = (p: CollectionPosition): number => Object.values(p.seen).reduce((n, k) => n + k, 0);

/** The rows of a page not stored before, and the position once they are. `rows` are in time order. */
export function pageOf(rows: SourceRow[], from: CollectionPosition): { fresh: SourceRow[]; to: CollectionPosition } {
  const left = { ...from.seen };
  const fresh: SourceRow[] = [];
  for (const row of rows) {
    if (from.last !== null && row.time === from.last && (left[row.fingerprint] ?? 0) > 0) {
      left[row.fingerprint]! -= 1;
      continue;
    }
    fresh.push(row);
  }
  if (fresh.length === 0) return { fresh, to: from };
  const last = fresh[fresh.length - 1]!.time;
  const seen: Record<string, number> = last === from.last ? { ...from.seen } : {};
  for (const row of fresh) if (row.time === last) seen[row.fingerprint] = (seen[row.fingerprint] ?? 0) + 1;
  return { fresh, to: { last, seen } };
}

/** A page's idempotency key: its pipeline, the position's epoch, and the positions it goes from and to. */
export function pageKey(pipeline_id: string, epoch: number, from: CollectionPosition, to: CollectionPosition): string {
  const canon = (p: CollectionPosition) => [p.last, Object.keys(p.seen).sort().map((k) => [k, p.seen[k]])];
  return `collector:${createHash("sha256").update(JSON.stringify([pipeline_id, epoch, canon(from), canon(to)])).digest("hex")}`;
}

/** A column's value as a reading's: numbers, numeric text and Booleans (true = 1); null when it is none. */
function valueOf(v: unknown): number | null | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === "boolean") return v ? 1 : 0;
  const n = typeof v === "number" ? v : typeof v === "bigint" || (typeof v === "string" && v.trim() !== "") ? Number(v) : NaN;
  return Number.isFinite(n) ? n : null;
}

/**
 * A page's rows as readings: each column of `columns` (in the page query's order after the time)
 * a reading of each of its tags at the row's time. A NULL is no reading; a value that is no
 * number, or a row whose time does not parse, counts as unreadable.
 */
export function readingsOf(
  rows: SourceRow[],
  columns: CollectedTag[][],
  time: { format?: string; timeZone: string; utc: boolean },
): { readings: Reading[]; unreadable: number } {
  const readings: Reading[] = [];
  let unreadable = 0;
  for (const row of rows) {
    const ts = epochMsOf(row.time, time);
    columns.forEach((tags, i) => {
      const value = valueOf(row.values[i]);
      if (value === undefined) return;
      if (value === null || ts === null) {
        unreadable += tags.length;
        return;
      }
      for (const t of tags) readings.push({ monitor_id: t.monitor_id, tag_id: t.tag_id, ts, value });
    });
  }
  return { readings, unreadable };
}
