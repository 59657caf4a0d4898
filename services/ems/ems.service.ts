/**
 * ems: energy metrics (operations 75-77). Fed by the readings stream: readings of an energy
 * monitor's kWh, kW, V and A tags are folded into quarter-hour rollups, and every answer reads
 * the rollups, so a year of minute data answers about as fast as a day. Names, tags and the
 * site's time zone come from config's actions.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { EmsLocals, EmsMethods, EmsThis } from "./ems.types";
import { DAILY_CHECK_MS } from "../../lib/daily-job";
import { DbMixin } from "../../mixins/db.mixin";
import { PeriodicMixin, type JobCaller, type PeriodicJobs } from "../../mixins/periodic.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import type { Caller } from "../../lib/contract";
import { resolveMonitors, retentionCutoffs, type MonitorEvent, type ResolvedMonitor } from "../config/contract";
import type { PipelineStreams } from "../pipelines/contract";
import { figuresOf, roleTags } from "./figures";
import { ingestActions } from "./ingest.actions";
import { energyMetrics, isEnergyMonitor } from "./metrics";
import { metricsActions } from "./metrics.actions";
import { migrations } from "./migrations";
import { EMS_SCHEMAS } from "./openapi";
import * as repo from "./repo";
import { quarterOf, type Reading } from "./rollup";
import { zoneOf, type Range } from "./time";

/**
 * The durable group "ems" on the readings stream. A redelivered batch is a no-op (readings are
 * keyed), so any order is safe; a throw leaves the batch to be delivered again.
 */
const streams: StreamConsumers<EmsThis, PipelineStreams> = {
  readings: {
    group: "ems",
    concurrency: 4,
    async handler(batch) {
      await this.storeReadings(this.broker, batch.readings);
    },
  },
};

/**
 * The daily retention run: raw readings older than their site's retention go. The quarter-hour
 * and daily rollups stay: every operation reads them, not the readings, so figures and trends
 * over any range answer the same after the readings went.
 */
async function deleteOldReadings(this: EmsThis, caller: JobCaller, now: number): Promise<{ deleted: number }> {
  let deleted = 0;
  for (const cutoff of await retentionCutoffs(caller, await repo.readingMonitors(this.db), now)) {
    for (const m of cutoff.monitor_ids) deleted += await repo.deleteReadingsBefore(this.db, m, cutoff.before);
  }
  if (deleted) this.logger.info(`retention: deleted ${deleted} readings`);
  return { deleted };
}

const EmsService: ServiceSchema<ServiceSettingSchema, EmsMethods, EmsLocals> & { streams: StreamConsumers<EmsThis, PipelineStreams>; jobs: PeriodicJobs<EmsThis> } = {
  name: "ems",
  // The stream mixin first: the database opens before the consumer starts and closes after it stops.
  mixins: [PeriodicMixin(), StreamMixin(), DbMixin({ schema: "ems", migrations })],
  jobs: { retention: { everyMs: DAILY_CHECK_MS, daily: true, run: deleteOldReadings } },
  streams,
  settings: { openapi: { schemas: EMS_SCHEMAS } },

  actions: {
    ...ingestActions,
    ...metricsActions,
  },

  events: {
    "config.monitor.deleted": {
      async handler(ctx: Context<MonitorEvent>) {
        await repo.forgetMonitor(this.db, ctx.params.monitor_id);
      },
    },
  },

  methods: {
    /** Keeps the readings of energy monitors' energy tags; the rest of the stream is not ems's. Idempotent. */
    async storeReadings(caller: Caller, readings: Reading[]) {
      const monitors = await resolveMonitors(caller, readings.map((r) => r.monitor_id));
      const energyTags = new Set<string>();
      for (const m of monitors.values()) {
        if (!isEnergyMonitor(m)) continue;
        for (const t of roleTags(m.tags)) energyTags.add(`${m.monitor_id}|${t.tag_id}`);
      }
      const mine = readings.filter((r) => Number.isFinite(r.value) && energyTags.has(`${r.monitor_id}|${r.tag_id}`));
      const zones = new Map([...monitors.values()].map((m) => [m.monitor_id, zoneOf(m)]));
      return repo.applyReadings(this.db, mine, zones);
    },

    async groupMetrics(monitors: ResolvedMonitor[], range: Range) {
      const start = quarterOf(range.from);
      const tagsOf = new Map(monitors.map((m) => [m.monitor_id, roleTags(m.tags)]));
      const tagIds = [...new Set([...tagsOf.values()].flat().map((t) => t.tag_id))];
      // A function's monitors share its site's zone.
      const days = monitors.length ? { tz: zoneOf(monitors[0]) } : undefined;
      const rows = await repo.aggregate(this.db, [...tagsOf.keys()], tagIds, [start], range.to, days);
      return energyMetrics(
        monitors.map((m) => ({
          names: {
            monitor_id: m.monitor_id,
            monitor_name: m.monitor_name,
            function_id: m.function_id,
            function_name: m.function_name,
            plant_id: m.plant_id,
            plant_name: m.plant_name,
            site_id: m.site_id,
            site_name: m.site_name,
          },
          figures: figuresOf(rows, m.monitor_id, tagsOf.get(m.monitor_id) ?? []),
        })),
      );
    },
  },
};

export default EmsService;
