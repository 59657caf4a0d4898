/**
 * The pipelines service's periodic work, safe with any number of replicas:
 * - partitions made ahead for the coming days;
 * - the daily retention run, claimed through lib/daily-job, so one replica runs it once a day;
 * - the history rollups' fold of staged batches (SKIP LOCKED: replicas fold different batches).
 * The service declares them as periodic jobs (mixins/periodic.mixin.ts), with the action timeout
 * sweep (actions.ts).
 */
import { DEFAULT_RETENTION_DAYS } from "../config/contract";
import { config } from "../../lib/config";
import { compressReadings, deleteCompressedBefore } from "./chunks";
import { ROLLUPS_KEPT_DAYS } from "./history";
import * as history from "./history.repo";
import * as readingsRepo from "./readings.repo";
import type { PipelinesEnv, SystemPort } from "./port";
import { DAY_MS, daysAround, retentionPlan } from "./storage";
import * as waveformsRepo from "./waveforms.repo";

export async function makePartitionsAhead(env: PipelinesEnv): Promise<void> {
  await env.partitions.refresh(env.db);
  await env.partitions.ensure(env.db, daysAround(Date.now()));
}

/** How often staged batches are folded into the rollups (history.ts reads the newest FRESH_MS raw meanwhile). */
export const ROLLUP_FOLD_MS = 1000;

/** Folds every staged batch (a few folds of FOLD_BATCHES when a backlog built up); answers how many. */
export async function foldRollups(env: PipelinesEnv): Promise<number> {
  let folded = 0;
  for (let i = 0; i < 20; i++) {
    const n = await history.foldStagedRollups(env.db);
    folded += n;
    if (n < history.FOLD_BATCHES) break;
  }
  return folded;
}

/** How often the historian's compression runs (docs/architecture.md, "The historian": at least every minute). */
export const COMPRESS_EVERY_MS = 30_000;

/** Compresses what HISTORY_COMPRESS_AFTER allows (chunks.ts); answers the series-hours written. */
export async function compressHistory(env: PipelinesEnv, now = Date.now()): Promise<number> {
  return compressReadings(env.db, now, config().historyCompressAfterMs);
}

export interface RetentionReport {
  dropped: string[];
  deleted: number;
}

/** What `retention.run` answers besides `ran: false` when another run has today's claim. */
export const NO_RETENTION: RetentionReport = { dropped: [], deleted: 0 };

/**
 * Deletes readings (and waveforms) older than their site's retention period, and history rollups
 * older than that or ROLLUPS_KEPT_DAYS, whichever is longer: the daily job, run
 * once a day on one replica. It runs outside the claim, so a DROP's lock on `readings` is held
 * only for itself.
 */
export async function runRetention(port: SystemPort, now: number): Promise<RetentionReport> {
  const siteIds = await readingsRepo.retentionSiteIds(port.db);
  const sites = await Promise.all(
    siteIds.map(async (site_id) => {
      // Config unreachable fails the run (its claim is given back): guessing the default could
      // delete a longer-kept site's data. A site config no longer knows gets the default.
      const site = await port.config.site(site_id);
      return { site_id, retention_days: site?.retention_period ?? DEFAULT_RETENTION_DAYS };
    }),
  );
  await port.partitions.refresh(port.db);
  const plan = retentionPlan(now, port.partitions.all(), sites);
  for (const day of plan.drop) {
    await readingsRepo.dropPartition(port.db, day);
    port.partitions.forget(day);
  }
  let deleted = 0;
  for (const { site_id, before } of plan.deleteBefore) deleted += await readingsRepo.deleteReadingsBefore(port.db, site_id, before);
  for (const { site_id, retention_days } of sites) {
    // Compressed readings (chunks.ts): the minutes of what goes stay as rollups where rollups outlive readings.
    deleted += await deleteCompressedBefore(port.db, site_id, now - retention_days * DAY_MS, retention_days < ROLLUPS_KEPT_DAYS);
    await waveformsRepo.deleteWaveformsBefore(port.db, site_id, now - retention_days * DAY_MS);
    // A tag's trend outlives its raw readings: the rollups stay for the longest history range at least.
    await history.deleteRollupsBefore(port.db, site_id, now - Math.max(retention_days, ROLLUPS_KEPT_DAYS) * DAY_MS);
  }
  if (plan.drop.length || deleted) port.logger.info(`retention: dropped ${plan.drop.length} day partitions, deleted ${deleted} readings`);
  return { dropped: plan.drop, deleted };
}
