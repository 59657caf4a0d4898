/**
 * Raw readings on disk, the rules: daily partitions (UTC) of the `readings` table, which days a
 * batch touches, and the retention plan. Pure; their SQL is in readings.repo.ts, the per-process
 * knowledge of which partitions exist in partitions.ts. What they cost: footprint.ts.
 */
import { DAY_MS } from "../../lib/time";
import type { Reading } from "./contract";

export { DAY_MS };

/** `20251122` for any ms of that UTC day. */
export const dayKey = (ms: number): string => new Date(ms).toISOString().slice(0, 10).replace(/-/g, "");
/** The first ms of a day `20251122` (UTC). */
export const dayStart = (day: string): number => Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8)));

/** The days a batch touches (by day number first: a date string per reading costs more than the insert's own work). */
export function daysOf(readings: Reading[]): string[] {
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
