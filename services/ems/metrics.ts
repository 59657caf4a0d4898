/**
 * The energy metrics operations: a monitor's metrics, those of a function's or an asset's
 * monitors, and a monitor's trend. Each checks its inputs in the spec's order (its messages say
 * which input is missing), finds the caller's monitors through config, and reads the rollups.
 */
import { DomainError } from "../../lib/errors";
import type { Page } from "../../lib/paging";
import type { ResolvedMonitor } from "../config/contract";
import { energyMetrics, isEnergyMonitor } from "./energy";
import { figuresOf, hasData, roleTags, seriesOf, toTrendValue, TREND_METRICS } from "./figures";
import { MSG } from "./messages";
import * as metrics from "./metrics.repo";
import type { EmsPort } from "./port";
import { quarterOf } from "./rollup";
import { bucketStarts, formatLocal, INTERVALS, nextBucket, parseIsoDate, zoneOf, type Range } from "./time";

/** Most trend buckets one answer holds (hourly over about 11 years). */
export const MAX_TREND_BUCKETS = 100_000;

export interface MonitorParams {
  monitor_id?: string;
  from?: string;
  to?: string;
}

export interface AllParams extends Page {
  function_id?: string;
  from?: string;
  to?: string;
  label?: string;
}

export interface TrendParams {
  monitor_id?: string;
  from?: string;
  to?: string;
  metric?: string;
  interval?: string;
}

/** `from` and `to` present and ISO 8601, `from` before `to`. */
function rangeOf(params: { from?: string; to?: string }): Range {
  if (!params.from || !params.to) throw new DomainError(400, MSG.insufficientDates);
  const from = parseIsoDate(params.from);
  const to = parseIsoDate(params.to);
  if (from === undefined || to === undefined || from >= to) throw new DomainError(400, MSG.invalidDate);
  return { from, to };
}

/** The metrics objects of a group of monitors over a range, read from the rollups. */
async function groupMetrics(port: EmsPort, monitors: ResolvedMonitor[], range: Range) {
  const start = quarterOf(range.from);
  const tagsOf = new Map(monitors.map((m) => [m.monitor_id, roleTags(m.tags)]));
  const tagIds = [...new Set([...tagsOf.values()].flat().map((t) => t.tag_id))];
  // A function's monitors share its site's zone.
  const days = monitors.length ? { tz: zoneOf(monitors[0]) } : undefined;
  const rows = await metrics.aggregate(port.db, [...tagsOf.keys()], tagIds, [start], range.to, days);
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
}

/** Op 75: percent_of_total is the monitor's share of its function's energy monitors. */
export async function monitorMetrics(port: EmsPort, params: MonitorParams) {
  if (!params.monitor_id) throw new DomainError(400, MSG.monitorIdNotGiven);
  const range = rangeOf(params);
  const monitor = await port.config.visibleMonitor(params.monitor_id);
  if (!monitor || !isEnergyMonitor(monitor)) throw new DomainError(400, MSG.monitorIdInvalid);
  const peers = await port.config.monitorsOf({ function_id: monitor.function_id });
  peers.set(monitor.monitor_id, monitor);
  const group = await groupMetrics(port, [...peers.values()].filter(isEnergyMonitor), range);
  return group.find((m) => m.monitor_id === monitor.monitor_id);
}

/** Op 76: `function_id` holds a function's id, or an asset's when `label` is `asset`. */
export async function allMetrics(port: EmsPort, params: AllParams) {
  const { function_id: id, label } = params;
  if (!id) throw new DomainError(400, MSG.functionOrAssetNotGiven);
  if (!label) throw new DomainError(400, MSG.insufficientInputs);
  if (label !== "function" && label !== "asset") throw new DomainError(400, MSG.invalidInput("label"));
  const range = rangeOf(params);
  const parent = label === "function" ? await port.config.visibleFunction(id) : await port.config.visibleAsset(id);
  if (!parent) throw new DomainError(400, MSG.functionNotFound);
  const filter = label === "function" ? { function_id: id } : { asset_id: id };
  const monitors = [...(await port.config.monitorsOf(filter)).values()].filter(isEnergyMonitor);
  // percent_of_total is a share of the function's consumption (contract), an asset's monitors included:
  // they are figured among all of their function's energy monitors, as the monitor operation figures one.
  const peers = new Map(monitors.map((m) => [m.monitor_id, m]));
  if (label === "asset" && monitors.length) {
    for (const m of (await port.config.monitorsOf({ function_id: monitors[0].function_id })).values()) {
      if (!peers.has(m.monitor_id) && isEnergyMonitor(m)) peers.set(m.monitor_id, m);
    }
  }
  const own = new Set(monitors.map((m) => m.monitor_id));
  const group = (await groupMetrics(port, [...peers.values()], range)).filter((m) => own.has(m.monitor_id));
  return port.page(group, params);
}

/** Op 77: whole local buckets overlapping [from, to), in the site's time zone. */
export async function trend(port: EmsPort, p: TrendParams) {
  if (!p.monitor_id) throw new DomainError(400, MSG.monitorIdNotGiven);
  if (!p.metric) throw new DomainError(400, MSG.metricNotGiven);
  if (!p.from || !p.to) throw new DomainError(400, MSG.insufficientDates);
  if (!p.interval) throw new DomainError(400, MSG.insufficientInputs);
  const metric = TREND_METRICS[p.metric];
  if (!metric) throw new DomainError(400, MSG.invalidInput("metric"));
  const interval = INTERVALS[p.interval];
  if (!interval) throw new DomainError(400, MSG.invalidInput("interval"));
  const range = rangeOf(p);
  const monitor = await port.config.visibleMonitor(p.monitor_id);
  if (!monitor || !isEnergyMonitor(monitor)) throw new DomainError(400, MSG.monitorNotFound);

  const tz = zoneOf(monitor);
  const starts = bucketStarts(range.from, range.to, interval, tz, MAX_TREND_BUCKETS);
  if (starts.length > MAX_TREND_BUCKETS) throw new DomainError(400, MSG.invalidInput("interval"));
  const end = nextBucket(starts[starts.length - 1], interval, tz);
  const tags = roleTags(monitor.tags);
  const tagIds = tags.filter((t) => t.role === metric.role).map((t) => t.tag_id);
  const days = interval === "hourly" ? undefined : { tz };
  const rows = await metrics.aggregate(port.db, [monitor.monitor_id], tagIds, starts, end, days);
  if (!hasData(rows, monitor.monitor_id, tags, metric.role)) throw new DomainError(400, MSG.noEnergyData);
  const series = seriesOf(rows, monitor.monitor_id, tags, metric.role, starts.length);
  return starts.map((s, i) => ({ Date: formatLocal(s, tz), Energy: toTrendValue(metric.role, series[i]), unit: metric.unit }));
}
