/**
 * What a site's readings cost on disk (`GET /_config/storage`; docs/architecture.md, "The
 * historian"); footprint.repo.ts reads the tables' sizes and the sites' shares.
 */
import { DomainError } from "../../lib/errors";
import type { MonitorBytes } from "../ems/contract";
import * as footprintRepo from "./footprint.repo";
import { MSG } from "./messages";
import type { PipelinesPort } from "./port";

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
 * ems's bytes per monitor (its readings key and rollups), or none when ems does not answer: a
 * cluster may run without it, and the route still answers pipelines' own figures.
 */
async function emsBytes(port: PipelinesPort): Promise<MonitorBytes[]> {
  try {
    return await port.ems.monitorBytes();
  } catch (err) {
    port.logger.warn(`storage: answered without ems's bytes (${err instanceof Error ? err.message : String(err)})`);
    return [];
  }
}

/** ems's bytes per site: a monitor's site as pipelines knows it (footprint.repo.ts), else as config does. */
async function emsSiteBytes(port: PipelinesPort, monitors: MonitorBytes[]): Promise<Map<string, number>> {
  const ids = monitors.map((m) => m.monitor_id);
  const sites = await footprintRepo.monitorSites(port.db, ids);
  const unknown = ids.filter((id) => !sites.has(id));
  if (unknown.length > 0) for (const [id, m] of await port.config.monitors(unknown)) sites.set(id, m.site_id);
  const out = new Map<string, number>();
  for (const m of monitors) {
    const site_id = sites.get(m.monitor_id);
    if (site_id !== undefined) out.set(site_id, (out.get(site_id) ?? 0) + m.bytes);
  }
  return out;
}

/**
 * Per site, what its readings cost: every table of readings (raw, chunks, the series dictionary,
 * minute and hour rollups), indexes and TOAST included, shared out among the sites by their
 * readings in it (chunks by their bytes), and ems's tables of the sites' monitors (its readings
 * key and rollups: ems's storage.ts). The figures add up to the tables' whole size.
 * saas-admin: every site; site-admin: its own; anyone else 403.
 */
export async function storageFigures(port: PipelinesPort, params: { site_id?: string }): Promise<{ sites: SiteStorage[] }> {
  const user = port.user;
  if (user.user_type !== "saas-admin" && user.user_type !== "site-admin") throw new DomainError(403, MSG.unauthorizedOperation);
  const own = user.user_type === "site-admin" ? (user.site_id ?? "") : undefined;
  if (params.site_id !== undefined && own !== undefined && params.site_id !== own) throw new DomainError(400, MSG.invalidSiteId(params.site_id), "site_id");
  const wanted = params.site_id ?? own;
  const [shares, readings, ems] = await Promise.all([footprintRepo.tableShares(port.db), footprintRepo.siteReadings(port.db), emsBytes(port)]);
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
  for (const [site_id, b] of await emsSiteBytes(port, ems)) add(site_id, b);
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
