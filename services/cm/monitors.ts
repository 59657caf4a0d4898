/**
 * The latest tag values of monitors: kept from the readings (the newest per tag), read back per
 * monitor and per asset, and moved or forgotten when config changes a monitor.
 */
import { DomainError } from "../../lib/errors";
import { parseIsoDate } from "../../lib/time";
import type { MonitorEvent, ResolvedMonitor } from "../config/contract";
import type { Reading } from "../pipelines/contract";
import { evaluateAssets } from "./assets";
import * as latestValues from "./latest-values.repo";
import { MSG } from "./messages";
import type { CmPort } from "./port";
import * as spectra from "./spectra.repo";
import { monitorColorsView, monitorValuesView } from "./views";

export interface MonitorsListParams {
  asset_id: string;
  from?: string;
  to?: string;
  limit?: number;
  offset?: number;
}

/** A monitor the caller may see, else the operation's 400. */
export async function monitorOrFail(port: CmPort, id: string): Promise<ResolvedMonitor> {
  const monitor = await port.config.visibleMonitor(id);
  if (!monitor) throw new DomainError(400, MSG.invalidMonitorId);
  return monitor;
}

/** `from` and `to` as epoch ms, each where given. */
function windowOf(params: Pick<MonitorsListParams, "from" | "to">): { from?: number; to?: number } {
  const window: { from?: number; to?: number } = {};
  for (const key of ["from", "to"] as const) {
    const raw = params[key];
    if (raw === undefined) continue;
    const ts = parseIsoDate(raw);
    if (ts === undefined) throw new DomainError(400, MSG.invalidInput(key));
    window[key] = ts;
  }
  return window;
}

/** Op 71: the latest value of each of the monitor's tags. */
export async function getMonitor(port: CmPort, monitor_id: string) {
  const monitor = await monitorOrFail(port, monitor_id);
  return monitorValuesView(monitor, await latestValues.latestOfMonitors(port.db, [monitor.monitor_id]));
}

/** Op 72: per monitor of the asset, its latest values and their colours; one outside from..to reads null. */
export async function listMonitors(port: CmPort, params: MonitorsListParams) {
  const window = windowOf(params);
  const asset = await port.config.visibleAsset(params.asset_id);
  if (!asset) throw new DomainError(400, MSG.invalidAssetId);
  const monitors = port.page([...(await port.config.resolveMonitors(await port.config.monitorIds({ asset_id: asset.asset_id }))).values()], params);
  const latest = await latestValues.latestOfMonitors(port.db, monitors.map((m) => m.monitor_id));
  return monitors.map((m) => monitorColorsView(m, latest, window));
}

/** Latest value per tag, then the status of every asset the batch touched. Idempotent. */
export async function storeReadings(port: CmPort, readings: Reading[]): Promise<number> {
  const monitors = await port.config.resolveMonitors(readings.map((r) => r.monitor_id));
  const newest = new Map<string, latestValues.LatestValue>();
  for (const r of readings) {
    const m = monitors.get(r.monitor_id);
    if (!m || !Number.isFinite(r.value)) continue;
    const key = `${r.monitor_id}|${r.tag_id}`;
    const seen = newest.get(key);
    // Of two readings with one timestamp, the one sent last stands (a gateway's correction).
    if (!seen || r.ts >= seen.ts) newest.set(key, { ...r, asset_id: m.asset_id });
  }
  await latestValues.upsertLatest(port.db, [...newest.values()]);
  const assets = new Set([...newest.values()].map((v) => v.asset_id).filter((a): a is string => !!a));
  await evaluateAssets(port, assets);
  return newest.size;
}

/** A monitor moved to another asset or had its thresholds changed: both assets are re-read. */
export async function monitorUpdated(port: CmPort, event: MonitorEvent): Promise<void> {
  const before = await latestValues.latestOfMonitors(port.db, [event.monitor_id]);
  await latestValues.moveMonitor(port.db, event.monitor_id, event.asset_id ?? null);
  const assets = new Set(before.map((v) => v.asset_id).filter((a): a is string => !!a));
  if (event.asset_id) assets.add(event.asset_id);
  await evaluateAssets(port, assets);
}

/** A monitor deleted: its latest values and spectra go, and its asset is re-read. */
export async function monitorDeleted(port: CmPort, event: MonitorEvent): Promise<void> {
  await latestValues.forgetMonitor(port.db, event.monitor_id);
  await spectra.forgetMonitor(port.db, event.monitor_id);
  if (event.asset_id) await evaluateAssets(port, [event.asset_id]);
}
