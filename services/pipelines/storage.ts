/**
 * Raw readings on disk: daily partitions (UTC) of the `readings` table, batch inserts through
 * `unnest` (one statement, one round trip for up to 10,000 readings), and the retention plan.
 */
import type { DataSource, EntityManager } from "typeorm";
import type { AcceptedReading } from "./rules";

const DAY_MS = 24 * 3600 * 1000;

/** `20251122` for any ms of that UTC day. */
export const dayKey = (ms: number): string => new Date(ms).toISOString().slice(0, 10).replace(/-/g, "");
const dayStart = (day: string): number => Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8)));
const iso = (ms: number): string => new Date(ms).toISOString();

export const partitionName = (day: string): string => `readings_${day}`;

export function partitionDdl(day: string): string {
  const from = dayStart(day);
  return `CREATE TABLE IF NOT EXISTS ${partitionName(day)} PARTITION OF readings FOR VALUES FROM ('${iso(from)}') TO ('${iso(from + DAY_MS)}')`;
}

/** The days a batch touches (by day number first: a date string per reading costs more than the insert's own work). */
export function daysOf(readings: AcceptedReading[]): string[] {
  const days = new Set<number>();
  for (const r of readings) days.add(Math.floor(r.ts / DAY_MS));
  return [...days].map((d) => dayKey(d * DAY_MS));
}

/** The days from yesterday to `ahead` days on: made in advance so the hot path never creates one. */
export function daysAround(now: number, ahead = 3): string[] {
  const out: string[] = [];
  for (let d = -1; d <= ahead; d++) out.push(dayKey(now + d * DAY_MS));
  return out;
}

/** What this process knows of the partitions; creating one takes a lock, so it is done once. */
export class Partitions {
  private known = new Set<string>();

  async refresh(db: DataSource): Promise<void> {
    const rows = (await db.query(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'readings'::regclass`,
    )) as { name: string }[];
    this.known = new Set(rows.map((r) => r.name.replace(/^readings_/, "")));
  }

  has(day: string): boolean {
    return this.known.has(day);
  }

  all(): string[] {
    return [...this.known].sort();
  }

  /** Creates the missing partitions; replicas serialize on an advisory lock and skip what exists. */
  async ensure(db: DataSource, days: string[]): Promise<void> {
    const missing = days.filter((d) => !this.known.has(d));
    if (missing.length === 0) return;
    await db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('ims:pipelines:partitions'))`);
      for (const day of missing) await tx.query(partitionDdl(day));
    });
    for (const day of missing) this.known.add(day);
  }

  forget(day: string): void {
    this.known.delete(day);
  }
}

export interface BatchPlace {
  batch_id: string;
  pipeline_id: string;
  site_id: string;
}

/**
 * One statement for the whole batch; `idx` is the reading's place in the batch (its stable id).
 * The arrays go as ready-made PostgreSQL array literals: uuids and numbers need no quoting, and
 * pg's generic per-element escaping was a tenth of the ingest path's CPU.
 */
export async function insertReadings(tx: EntityManager, place: BatchPlace, readings: AcceptedReading[]): Promise<void> {
  const n = readings.length;
  const monitors = new Array<string>(n);
  const tags = new Array<string>(n);
  const ts = new Array<number>(n);
  const values = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const r = readings[i] as AcceptedReading;
    monitors[i] = r.monitor_id;
    tags[i] = arrayText(r.tag_id);
    ts[i] = r.ts;
    values[i] = r.value;
  }
  await tx.query(
    `INSERT INTO readings (ts, pipeline_id, site_id, monitor_id, tag_id, value, batch_id, idx)
     SELECT to_timestamp(u.t / 1000), $1, $2, u.m, u.g, u.v, $3, (u.i - 1)::int
       FROM unnest($4::uuid[], $5::text[], $6::float8[], $7::float8[]) WITH ORDINALITY AS u(m, g, t, v, i)`,
    [place.pipeline_id, place.site_id, place.batch_id, `{${monitors.join(",")}}`, `{${tags.join(",")}}`, `{${ts.join(",")}}`, `{${values.join(",")}}`],
  );
}

/** An element of a text[] literal: always quoted, with `"` and `\` escaped. */
export const arrayText = (s: string): string => `"${/["\\]/.test(s) ? s.replace(/(["\\])/g, "\\$1") : s}"`;

/** PostgreSQL's answer to a row no partition takes (a partition dropped or not made yet). */
export function isNoPartition(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string }; message?: string };
  const code = e?.code ?? e?.driverError?.code;
  return code === "23514" && /no partition/i.test(e?.message ?? "");
}

export interface RetentionPlan {
  /** Days whose partition holds nothing any site still keeps. */
  drop: string[];
  /** Per site, rows before this instant go (in the partitions that stay). */
  deleteBefore: { site_id: string; before: number }[];
}

/**
 * Which partitions go whole and what is deleted row by row: a day is dropped when it ended
 * before the cutoff of every site (the site keeping data longest decides); the rest is deleted
 * per site, reaching only partitions that overlap the site's cutoff.
 */
export function retentionPlan(now: number, days: string[], sites: { site_id: string; retention_days: number }[]): RetentionPlan {
  if (sites.length === 0) return { drop: [], deleteBefore: [] };
  const cutoffs = sites.map((s) => ({ site_id: s.site_id, before: now - s.retention_days * DAY_MS }));
  const earliest = Math.min(...cutoffs.map((c) => c.before));
  const drop = days.filter((d) => dayStart(d) + DAY_MS <= earliest);
  const oldestKept = days.filter((d) => !drop.includes(d)).map(dayStart);
  const firstDay = oldestKept.length ? Math.min(...oldestKept) : Infinity;
  return { drop, deleteBefore: cutoffs.filter((c) => c.before > firstDay) };
}
