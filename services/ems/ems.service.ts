/**
 * ems: energy metrics (operations 75-77). Fed by the readings stream: readings of an energy
 * monitor's kWh, kW, V and A tags are folded into quarter-hour rollups, and every answer reads
 * the rollups, so a year of minute data answers about as fast as a day. Names, tags and the
 * site's time zone come from config's actions.
 */
import type { ActionSchema, Context, Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import { DailyJobMixin, type DailyJobEnv } from "../../mixins/daily-job.mixin";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import type { ReadingBatch } from "../pipelines/streams";
import { resolveMonitors, retentionCutoffs, type Caller, type ResolvedMonitor } from "../cm/config-client";
import { figuresOf, roleTags } from "./figures";
import { ingestActions } from "./ingest.actions";
import { energyMetrics, isEnergyMonitor } from "./metrics";
import { metricsActions } from "./metrics.actions";
import { migrations } from "./migrations";
import { EMS_SCHEMAS } from "./openapi";
import * as repo from "./repo";
import { quarterOf, type Reading } from "./rollup";
import { zoneOf, type Range } from "./time";

interface EmsLocals {
  db: DataSource;
}

interface EmsMethods {
  storeReadings(caller: Caller, readings: Reading[]): Promise<number>;
  groupMetrics(monitors: ResolvedMonitor[], range: Range): Promise<ReturnType<typeof energyMetrics>>;
}

/** `this` in ems's handlers, events and methods. */
export type EmsThis = Service<ServiceSettingSchema> & EmsLocals & EmsMethods;

/** A group of the service's actions, spread into its schema's `actions`. */
export type EmsActions = Record<string, ActionSchema<EmsThis>>;

/**
 * The durable group "ems" on the readings stream. A redelivered batch is a no-op (readings are
 * keyed), so any order is safe; a throw leaves the batch to be delivered again.
 */
const streams: StreamConsumers = {
  readings: {
    group: "ems",
    concurrency: 4,
    async handler(this: unknown, batch: unknown) {
      const self = this as EmsMethods & { broker: Caller };
      await self.storeReadings(self.broker, (batch as ReadingBatch).readings);
    },
  },
};

/**
 * The daily retention run: raw readings older than their site's retention go. The quarter-hour
 * and daily rollups stay: every operation reads them, not the readings, so figures and trends
 * over any range answer the same after the readings went.
 */
async function deleteOldReadings(env: DailyJobEnv, now: number): Promise<{ deleted: number }> {
  let deleted = 0;
  for (const cutoff of await retentionCutoffs(env.caller, await repo.readingMonitors(env.db), now)) {
    for (const m of cutoff.monitor_ids) deleted += await repo.deleteReadingsBefore(env.db, m, cutoff.before);
  }
  if (deleted) env.logger.info(`retention: deleted ${deleted} readings`);
  return { deleted };
}

const EmsService: ServiceSchema<ServiceSettingSchema, EmsMethods, EmsLocals> & { streams: StreamConsumers } = {
  name: "ems",
  // The stream mixin first: the database opens before the consumer starts and closes after it stops.
  mixins: [StreamMixin(), DbMixin({ schema: "ems", migrations }), DailyJobMixin("retention", deleteOldReadings)],
  streams,
  settings: { openapi: { schemas: EMS_SCHEMAS } },

  actions: {
    ...ingestActions,
    ...metricsActions,
  },

  events: {
    "config.monitor.deleted": {
      async handler(ctx: Context<{ monitor_id: string }>) {
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
