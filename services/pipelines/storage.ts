/**
 * Readings on disk: daily partitions (UTC) of the raw `readings` table, which days a batch
 * touches, the retention plan (pure; their SQL in readings.repo.ts, the per-process knowledge of
 * which partitions exist in partitions.ts), and what a site's readings cost (`GET /_config/storage`,
 * EXTENSIONS §7; storage.repo.ts).
 */
import { DomainError } from "../../lib/errors";
import { DAY_MS } from "../../lib/time";
import type { Reading } from "./contract";
import { MSG } from "./messages";
import type { PipelinesPort } from "./port";
import * as storageRepo from "./storage.repo";

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

export interface SiteStorage {
  site_id: string;
  site_name: string;
  readings: number;
  compressed_readings: number;
  bytes: number;
  bytes_per_reading: number | null;
  oldest: number | null;
  newest: number | null;
  retention_period: number;
}

/**
 * Per site, what its readings cost: every table of readings (raw, chunks, the series dictionary,
 * minute and hour rollups), indexes and TOAST included, shared out among the sites by their
 * readings in it (chunks by their bytes). The figures add up to the tables' whole size.
 * saas-admin: every site; site-admin: its own; anyone else 403.
 */
export async function storageFigures(port: PipelinesPort, params: { site_id?: string }): Promise<{ sites: SiteStorage[] }> {
  const user = port.user;
  if (user.user_type !== "saas-admin" && user.user_type !== "site-admin") throw new DomainError(403, MSG.unauthorizedOperation);
  const own = user.user_type === "site-admin" ? (user.site_id ?? "") : undefined;
  if (params.site_id !== undefined && own !== undefined && params.site_id !== own) throw new DomainError(400, MSG.invalidSiteId(params.site_id), "site_id");
  const wanted = params.site_id ?? own;
  const [shares, readings] = await Promise.all([storageRepo.tableShares(port.db), storageRepo.siteReadings(port.db)]);
  const bytes = new Map<string, number>();
  const add = (site_id: string, b: number) => bytes.set(site_id, (bytes.get(site_id) ?? 0) + b);
  let unowned = 0;
  for (const t of shares) {
    const total = t.sites.reduce((n, s) => n + s.readings, 0);
    if (total === 0) unowned += t.bytes;
    else for (const s of t.sites) add(s.site_id, (t.bytes * s.readings) / total);
  }
  // A table left with no rows still takes its pages until vacuumed (raw partitions after a compression): shared by readings held.
  const held = readings.reduce((n, r) => n + r.readings, 0);
  if (held > 0) for (const r of readings) add(r.site_id, (unowned * r.readings) / held);
  const ids = [...new Set([...bytes.keys(), ...readings.map((r) => r.site_id)])].filter((id) => wanted === undefined || id === wanted);
  const sites: SiteStorage[] = [];
  for (const site_id of ids) {
    const site = await port.config.site(site_id);
    if (!site) continue;
    const r = readings.find((x) => x.site_id === site_id);
    const b = Math.round(bytes.get(site_id) ?? 0);
    const n = r?.readings ?? 0;
    sites.push({
      site_id,
      site_name: site.site_name,
      readings: n,
      compressed_readings: r?.compressed_readings ?? 0,
      bytes: b,
      bytes_per_reading: n > 0 ? Math.round((b / n) * 100) / 100 : null,
      oldest: r?.oldest ?? null,
      newest: r?.newest ?? null,
      retention_period: site.retention_period,
    });
  }
  if (params.site_id !== undefined && sites.length === 0) {
    // A site with no readings yet is answered with zeros; one that does not exist is not a site.
    const site = await port.config.site(params.site_id);
    if (!site) throw new DomainError(400, MSG.invalidSiteId(params.site_id), "site_id");
    sites.push({ site_id: site.site_id, site_name: site.site_name, readings: 0, compressed_readings: 0, bytes: 0, bytes_per_reading: null, oldest: null, newest: null, retention_period: site.retention_period });
  }
  return { sites: sites.sort((a, b) => a.site_name.localeCompare(b.site_name)) };
}
