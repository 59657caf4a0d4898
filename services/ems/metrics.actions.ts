/**
 * The energy metrics operations: a monitor's metrics, those of a function's or an asset's
 * monitors, and a monitor's trend. Each handler checks its inputs in the spec's order (its
 * messages say which input is missing), finds the caller's monitors through config, and reads
 * the rollups through the service's methods and repo.
 */
import type { Context } from "moleculer";
import type { RequestMeta } from "../../lib/contract";
import { DomainError } from "../../lib/errors";
import { PAGE_FIELDS, PAGE_PARAMS, pageOf } from "../../lib/paging";
import { MAX_TEXT } from "../../lib/validation";
import { listMonitorIds, resolveMonitors, visibleAsset, visibleFunction, visibleMonitor } from "../config/contract";
import type { EmsActions } from "./ems.types";
import { hasData, roleTags, seriesOf, toTrendValue, TREND_METRICS } from "./figures";
import { MSG } from "./messages";
import { isEnergyMonitor } from "./metrics";
import { ENERGY_METRICS_EXAMPLE, MONITOR_ID_FIELD, RANGE_FIELDS } from "./openapi";
import * as repo from "./repo";
import { bucketStarts, formatLocal, INTERVALS, nextBucket, parseIsoDate, zoneOf, type Range } from "./time";

/** Most trend buckets one answer holds (hourly over about 11 years). */
export const MAX_TREND_BUCKETS = 100_000;

// Every input is optional text to the validator: the handler answers the spec's own message for a missing one.
const optionalText = { type: "string", max: MAX_TEXT, optional: true } as const;

/** `from` and `to` present and ISO 8601, `from` before `to`. */
function rangeOf(params: { from?: string; to?: string }): Range {
  if (!params.from || !params.to) throw new DomainError(400, MSG.insufficientDates);
  const from = parseIsoDate(params.from);
  const to = parseIsoDate(params.to);
  if (from === undefined || to === undefined || from >= to) throw new DomainError(400, MSG.invalidDate);
  return { from, to };
}

interface MonitorParams {
  monitor_id?: string;
  from?: string;
  to?: string;
}

interface AllParams {
  function_id?: string;
  from?: string;
  to?: string;
  label?: string;
  limit?: number;
  offset?: number;
}

interface TrendParams {
  monitor_id?: string;
  from?: string;
  to?: string;
  metric?: string;
  interval?: string;
}

export const metricsActions: EmsActions = {
  monitor: {
    http: {
      op: 75,
      // Without the id too, so that the spec's `Monitor id not given` is what it answers (not 404).
      routes: ["GET /_ems/monitor/:monitor_id", "GET /_ems/monitor"],
      group: "ems",
      summary: "Energy metrics of a monitor",
      description: "Consumption, its share of the function's energy monitors, and mean voltage, current and power over a range.",
      fields: { monitor_id: MONITOR_ID_FIELD, ...RANGE_FIELDS },
      answer: { schema: "$EnergyMetrics", example: ENERGY_METRICS_EXAMPLE },
      errors: [[400, MSG.monitorIdNotGiven], [400, MSG.monitorIdInvalid], [400, MSG.insufficientDates], [400, MSG.invalidDate]],
    },
    params: { monitor_id: optionalText, from: optionalText, to: optionalText },
    async handler(ctx: Context<MonitorParams, RequestMeta>) {
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

  /** `function_id` holds a function's id, or an asset's when `label` is `asset`. */
  all: {
    http: {
      op: 76,
      routes: ["GET /_ems/monitor/_all"],
      group: "ems",
      summary: "Energy metrics of a function's or an asset's monitors",
      description: "One metrics object per energy monitor; percent_of_total is a share of the whole function's consumption, for an asset's monitors too.",
      fields: {
        function_id: {
          required: true,
          description: "a function's id, or an asset's when label is asset",
          example: ENERGY_METRICS_EXAMPLE.function_id,
        },
        label: { required: true, enum: ["function", "asset"], description: "what function_id names", example: "function" },
        ...RANGE_FIELDS,
        ...PAGE_FIELDS,
      },
      answer: { schema: "$EnergyMetrics[]", example: [ENERGY_METRICS_EXAMPLE] },
      errors: [
        [400, MSG.functionOrAssetNotGiven],
        [400, MSG.functionNotFound],
        [400, MSG.insufficientDates],
        [400, MSG.invalidDate],
        [400, MSG.invalidInput("label")],
        [400, MSG.excessInputs],
      ],
    },
    params: {
      function_id: optionalText,
      from: optionalText,
      to: optionalText,
      label: optionalText,
      ...PAGE_PARAMS,
      $$messages: { unknown: MSG.excessInputs },
    },
    async handler(ctx: Context<AllParams, RequestMeta>) {
      const { function_id: id, label } = ctx.params;
      if (!id) throw new DomainError(400, MSG.functionOrAssetNotGiven);
      if (!label) throw new DomainError(400, MSG.insufficientInputs);
      if (label !== "function" && label !== "asset") throw new DomainError(400, MSG.invalidInput("label"));
      const range = rangeOf(ctx.params);
      const parent = label === "function" ? await visibleFunction(ctx, ctx.meta.user, id) : await visibleAsset(ctx, ctx.meta.user, id);
      if (!parent) throw new DomainError(400, MSG.functionNotFound);
      const filter = label === "function" ? { function_id: id } : { asset_id: id };
      const monitors = [...(await resolveMonitors(ctx, await listMonitorIds(ctx, filter))).values()].filter(isEnergyMonitor);
      // percent_of_total is a share of the function's consumption (contract), an asset's monitors included:
      // they are figured among all of their function's energy monitors, as the monitor operation figures one.
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

  /** Whole local buckets overlapping [from, to), in the site's time zone. */
  trend: {
    http: {
      op: 77,
      // Without the id too: `Monitor id not given`, and not `_trend` read as the monitor operation's id.
      routes: ["GET /_ems/monitor/_trend/:monitor_id", "GET /_ems/monitor/_trend"],
      group: "ems",
      summary: "Energy trend of a monitor",
      description:
        "One point per hour, day, week (from Monday) or month of the site's time zone that overlaps the range: " +
        "consumption summed in MWh, power (KW), voltage (V) and current (A) as means.",
      fields: {
        monitor_id: MONITOR_ID_FIELD,
        ...RANGE_FIELDS,
        metric: { required: true, enum: Object.keys(TREND_METRICS), description: "what is trended", example: "consumption_chart" },
        interval: {
          required: true,
          enum: Object.keys(INTERVALS),
          description: "bucket size in the site's time zone (month is monthly, day is daily …)",
          example: "daily",
        },
      },
      answer: { schema: "$EnergyTrendPoint[]", example: [{ Date: "2026-01-01T00:00:00+05:30", Energy: 0.4125, unit: "MWh" }] },
      errors: [
        [400, MSG.monitorIdNotGiven],
        [400, MSG.metricNotGiven],
        [400, MSG.monitorNotFound],
        [400, MSG.insufficientDates],
        [400, MSG.invalidDate],
        [400, MSG.insufficientInputs],
        [400, MSG.invalidInput("metric")],
        [400, MSG.invalidInput("interval")],
        [400, MSG.noEnergyData],
      ],
    },
    params: { monitor_id: optionalText, from: optionalText, to: optionalText, metric: optionalText, interval: optionalText },
    async handler(ctx: Context<TrendParams, RequestMeta>) {
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
};
