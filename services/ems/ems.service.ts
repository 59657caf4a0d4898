/**
 * ems: energy metrics (operations 75-77). Fed by the readings stream: readings of an energy
 * monitor's kWh, kW, V and A tags are folded into quarter-hour rollups, and every answer reads
 * the rollups, so a year of minute data answers about as fast as a day. Names, tags and the
 * site's time zone come from config's actions.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { Principal } from "../../lib/access";
import { DomainError } from "../../lib/errors";
import { MAX_TEXT } from "../../lib/validation";
import { DailyJobMixin, type DailyJobEnv } from "../../mixins/daily-job.mixin";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import type { ReadingBatch } from "../pipelines/streams";
import {
  listMonitorIds,
  resolveMonitors,
  retentionCutoffs,
  visibleAsset,
  visibleFunction,
  visibleMonitor,
  type Caller,
  type ResolvedMonitor,
} from "../cm/config-client";
import { figuresOf, hasData, roleTags, seriesOf, toTrendValue, TREND_METRICS } from "./figures";
import { MSG } from "./messages";
import { ENERGY_MONITOR_TYPE, energyMetrics } from "./metrics";
import { migrations } from "./migrations";
import * as repo from "./repo";
import { quarterOf, type Reading } from "./rollup";
import { bucketStarts, formatLocal, INTERVALS, isTimeZone, nextBucket, parseIsoDate } from "./time";
import { PAGE_PARAMS, pageOf } from "../../lib/paging";

type Meta = { user: Principal };

/** Most trend buckets one answer holds (hourly over about 11 years). */
export const MAX_TREND_BUCKETS = 100_000;

interface EmsLocals {
  db: DataSource;
}

interface EmsMethods {
  storeReadings(caller: Caller, readings: Reading[]): Promise<number>;
  groupMetrics(monitors: ResolvedMonitor[], range: Range): Promise<ReturnType<typeof energyMetrics>>;
}

interface Range {
  from: number;
  to: number;
}

const optionalText = { type: "string", max: MAX_TEXT, optional: true } as const;

/** `from` and `to` present and ISO 8601, `from` before `to`. */
function rangeOf(params: { from?: string; to?: string }): Range {
  if (!params.from || !params.to) throw new DomainError(400, MSG.insufficientDates);
  const from = parseIsoDate(params.from);
  const to = parseIsoDate(params.to);
  if (from === undefined || to === undefined || from >= to) throw new DomainError(400, MSG.invalidDate);
  return { from, to };
}

const isEnergyMonitor = (m: ResolvedMonitor): boolean => m.monitor_type === ENERGY_MONITOR_TYPE;

/** The site's zone, UTC when it has none the runtime knows. */
const zoneOf = (m: ResolvedMonitor): string => (m.timezone && isTimeZone(m.timezone) ? m.timezone : "UTC");

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

  actions: {
    /** Internal: a batch of readings, as the readings stream delivers it (tests and tools call it directly). */
    "ingest.readings": {
      visibility: "public",
      params: {
        readings: {
          type: "array",
          items: {
            type: "object",
            props: {
              monitor_id: { type: "string", max: MAX_TEXT },
              tag_id: { type: "string", max: MAX_TEXT },
              ts: { type: "number", integer: true },
              value: { type: "number" },
            },
          },
        },
      },
      async handler(ctx: Context<{ readings: Reading[] }>) {
        return { applied: await this.storeReadings(ctx, ctx.params.readings) };
      },
    },

    /** Op 75. */
    monitor: {
      params: { monitor_id: optionalText, from: optionalText, to: optionalText },
      async handler(ctx: Context<{ monitor_id?: string; from?: string; to?: string }, Meta>) {
        if (!ctx.params.monitor_id) throw new DomainError(400, MSG.monitorIdNotGiven);
        const range = rangeOf(ctx.params);
        const monitor = await visibleMonitor(ctx, ctx.meta.user, ctx.params.monitor_id);
        if (!monitor || !isEnergyMonitor(monitor)) throw new DomainError(400, MSG.monitorIdInvalid);
        // percent_of_total is the monitor's share of its function's energy monitors.
        const peers = await resolveMonitors(ctx, await listMonitorIds(ctx, { function_id: monitor.function_id }));
        peers.set(monitor.monitor_id, monitor);
        const metrics = await this.groupMetrics([...peers.values()].filter(isEnergyMonitor), range);
        return metrics.find((m) => m.monitor_id === monitor.monitor_id);
      },
    },

    /** Op 76. `function_id` holds a function's id, or an asset's when `label` is `asset`. */
    all: {
      params: {
        function_id: optionalText,
        from: optionalText,
        to: optionalText,
        label: optionalText,
        ...PAGE_PARAMS,
        $$messages: { unknown: MSG.excessInputs },
      },
      async handler(
        ctx: Context<{ function_id?: string; from?: string; to?: string; label?: string; limit?: number; offset?: number }, Meta>,
      ) {
        const { function_id: id, label } = ctx.params;
        if (!id) throw new DomainError(400, MSG.functionOrAssetNotGiven);
        if (!label) throw new DomainError(400, MSG.insufficientInputs);
        if (label !== "function" && label !== "asset") throw new DomainError(400, MSG.invalidInput("label"));
        const range = rangeOf(ctx.params);
        const parent =
          label === "function" ? await visibleFunction(ctx, ctx.meta.user, id) : await visibleAsset(ctx, ctx.meta.user, id);
        if (!parent) throw new DomainError(400, MSG.functionNotFound);
        const filter = label === "function" ? { function_id: id } : { asset_id: id };
        const monitors = [...(await resolveMonitors(ctx, await listMonitorIds(ctx, filter))).values()].filter(isEnergyMonitor);
        // percent_of_total is a share of the function's consumption (contract), an asset's monitors included:
        // they are figured among all of their function's energy monitors, as op 75 figures one.
        const peers = new Map(monitors.map((m) => [m.monitor_id, m]));
        if (label === "asset" && monitors.length) {
          for (const m of (await resolveMonitors(ctx, await listMonitorIds(ctx, { function_id: monitors[0].function_id }))).values()) {
            if (!peers.has(m.monitor_id) && isEnergyMonitor(m)) peers.set(m.monitor_id, m);
          }
        }
        const own = new Set(monitors.map((m) => m.monitor_id));
        const metrics = (await this.groupMetrics([...peers.values()], range)).filter((m) => own.has(m.monitor_id));
        return pageOf(ctx, metrics, ctx.params);
      },
    },

    /** Op 77. Whole local buckets overlapping [from, to), in the site's time zone. */
    trend: {
      params: {
        monitor_id: optionalText,
        from: optionalText,
        to: optionalText,
        metric: optionalText,
        interval: optionalText,
      },
      async handler(ctx: Context<{ monitor_id?: string; from?: string; to?: string; metric?: string; interval?: string }, Meta>) {
        const p = ctx.params;
        if (!p.monitor_id) throw new DomainError(400, MSG.monitorIdNotGiven);
        if (!p.metric) throw new DomainError(400, MSG.metricNotGiven);
        if (!p.from || !p.to) throw new DomainError(400, MSG.insufficientDates);
        if (!p.interval) throw new DomainError(400, MSG.insufficientInputs);
        const metric = TREND_METRICS[p.metric];
        if (!metric) throw new DomainError(400, MSG.invalidInput("metric"));
        const interval = INTERVALS[p.interval];
        if (!interval) throw new DomainError(400, MSG.invalidInput("interval"));
        const range = rangeOf(p);
        const monitor = await visibleMonitor(ctx, ctx.meta.user, p.monitor_id);
        if (!monitor || !isEnergyMonitor(monitor)) throw new DomainError(400, MSG.monitorNotFound);

        const tz = zoneOf(monitor);
        const starts = bucketStarts(range.from, range.to, interval, tz, MAX_TREND_BUCKETS);
        if (starts.length > MAX_TREND_BUCKETS) throw new DomainError(400, MSG.invalidInput("interval"));
        const end = nextBucket(starts[starts.length - 1], interval, tz);
        const tags = roleTags(monitor.tags);
        const tagIds = tags.filter((t) => t.role === metric.role).map((t) => t.tag_id);
        const days = interval === "hourly" ? undefined : { tz };
        const rows = await repo.aggregate(this.db, [monitor.monitor_id], tagIds, starts, end, days);
        if (!hasData(rows, monitor.monitor_id, tags, metric.role)) throw new DomainError(400, MSG.noEnergyData);
        const series = seriesOf(rows, monitor.monitor_id, tags, metric.role, starts.length);
        return starts.map((s, i) => ({ Date: formatLocal(s, tz), Energy: toTrendValue(metric.role, series[i]), unit: metric.unit }));
      },
    },
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
