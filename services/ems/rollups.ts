/**
 * The rollups: the readings of energy monitors' energy tags folded into quarter hours and local
 * days as they arrive, their raw readings dropped by the daily retention run, and everything of
 * a monitor config deleted.
 */
import { config } from "../../lib/config";
import type { MonitorEvent } from "../config/contract";
import { isEnergyMonitor } from "./energy";
import { roleTags } from "./figures";
import { compressReadings } from "./hours";
import type { EmsPort } from "./port";
import type { Reading } from "./rollup";
import * as rollups from "./rollups.repo";
import { zoneOf } from "./time";

/** Keeps the readings of energy monitors' energy tags; the rest of the stream is not ems's. Idempotent. */
export async function storeReadings(port: EmsPort, readings: Reading[]): Promise<number> {
  const monitors = await port.config.resolveMonitors(readings.map((r) => r.monitor_id));
  const energyTags = new Set<string>();
  for (const m of monitors.values()) {
    if (!isEnergyMonitor(m)) continue;
    for (const t of roleTags(m.tags)) energyTags.add(`${m.monitor_id}|${t.tag_id}`);
  }
  const mine = readings.filter((r) => Number.isFinite(r.value) && energyTags.has(`${r.monitor_id}|${r.tag_id}`));
  const zones = new Map([...monitors.values()].map((m) => [m.monitor_id, zoneOf(m)]));
  return rollups.applyReadings(port.db, mine, zones);
}

/**
 * The daily retention run: raw readings older than their site's retention go. The quarter-hour
 * and daily rollups stay: every operation reads them, not the readings, so figures and trends
 * over any range answer the same after the readings went.
 */
export async function deleteOldReadings(port: EmsPort, now: number): Promise<{ deleted: number }> {
  let deleted = 0;
  for (const cutoff of await port.config.retentionCutoffs(await rollups.readingMonitors(port.db), now)) {
    for (const m of cutoff.monitor_ids) deleted += await rollups.deleteReadingsBefore(port.db, m, cutoff.before);
  }
  if (deleted) port.logger.info(`retention: deleted ${deleted} readings`);
  return { deleted };
}

/** The compression job's run at `now` (hours.ts): answers the hours written. */
export function compressOldReadings(port: EmsPort, now: number): Promise<number> {
  return compressReadings(port.db, now, config().historyCompressAfterMs);
}

/** A monitor deleted: its readings, rollups and marks go. */
export async function monitorDeleted(port: EmsPort, event: MonitorEvent): Promise<void> {
  await rollups.forgetMonitor(port.db, event.monitor_id);
}
