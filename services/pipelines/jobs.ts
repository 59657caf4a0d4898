/**
 * The pipelines service's periodic work, safe with any number of replicas:
 * - the action timeout sweep (a status-guarded UPDATE: each overdue action fails once);
 * - partitions made ahead for the coming days;
 * - the daily retention run, claimed through lib/daily-job, so one replica runs it once a day.
 */
import type { Context } from "moleculer";
import { config } from "../../lib/config";
import { runDaily } from "../../lib/daily-job";
import { resolveSite } from "./config-client";
import type { PipelinesEnv } from "./context";
import * as repo from "./repo";
import { DAY_MS, daysAround, DEFAULT_RETENTION_DAYS, retentionPlan } from "./storage";

export async function sweepOverdueActions(env: PipelinesEnv): Promise<string[]> {
  const failed = await repo.failOverdueActions(env.db, config().pipelineActionTimeoutMs, Date.now());
  if (failed.length) env.logger.warn(`pipeline actions timed out; pipelines in error: ${failed.join(", ")}`);
  return failed;
}

export async function makePartitionsAhead(env: PipelinesEnv): Promise<void> {
  await env.partitions.refresh(env.db);
  await env.partitions.ensure(env.db, daysAround(Date.now()));
}

export interface RetentionReport {
  ran: boolean;
  dropped: string[];
  deleted: number;
}

/**
 * Deletes readings (and waveforms) older than their site's retention period, once a day on one
 * replica (lib/daily-job). `force` runs it even when it ran less than a day ago (tests, operators).
 */
export async function runRetention(env: PipelinesEnv, ctx: Pick<Context, "call">, force = false): Promise<RetentionReport> {
  const report = await runDaily(env.db, { service: "pipelines", job: "retention" }, force, (now) => deleteExpired(env, ctx, now));
  return report ?? { ran: false, dropped: [], deleted: 0 };
}

/** The work runs outside the claim, so a DROP's lock on `readings` is held only for itself. */
async function deleteExpired(env: PipelinesEnv, ctx: Pick<Context, "call">, now: number): Promise<RetentionReport> {
  const siteIds = await repo.retentionSiteIds(env.db);
  const sites = await Promise.all(
    siteIds.map(async (site_id) => {
      // Config unreachable fails the run (its claim is given back): guessing the default could
      // delete a longer-kept site's data. A site config no longer knows gets the default.
      const site = await resolveSite(ctx, site_id);
      return { site_id, retention_days: site?.retention_period ?? DEFAULT_RETENTION_DAYS };
    }),
  );
  await env.partitions.refresh(env.db);
  const plan = retentionPlan(now, env.partitions.all(), sites);
  for (const day of plan.drop) {
    await repo.dropPartition(env.db, day);
    env.partitions.forget(day);
  }
  let deleted = 0;
  for (const { site_id, before } of plan.deleteBefore) deleted += await repo.deleteReadingsBefore(env.db, site_id, before);
  for (const { site_id, retention_days } of sites) await repo.deleteWaveformsBefore(env.db, site_id, now - retention_days * DAY_MS);
  if (plan.drop.length || deleted) env.logger.info(`retention: dropped ${plan.drop.length} day partitions, deleted ${deleted} readings`);
  return { ran: true, dropped: plan.drop, deleted };
}
