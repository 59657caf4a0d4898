/**
 * The energy metrics operations: a monitor's metrics, those of a function's or an asset's
 * monitors, and a monitor's trend (metrics.ts).
 */
import type { Context } from "moleculer";
import type { RequestMeta } from "../../lib/contract";
import { PAGE_FIELDS, PAGE_PARAMS } from "../../lib/paging";
import { MAX_TEXT } from "../../lib/validation";
import type { EmsActions } from "./ems.types";
import { TREND_METRICS } from "./figures";
import { MSG } from "./messages";
import * as metrics from "./metrics";
import type { AllParams, MonitorParams, TrendParams } from "./metrics";
import { ENERGY_METRICS_EXAMPLE, MONITOR_ID_FIELD, RANGE_FIELDS } from "./openapi";
import { INTERVALS } from "./time";

// Every input is optional text to the validator: the domain answers the spec's own message for a missing one.
const optionalText = { type: "string", max: MAX_TEXT, optional: true } as const;

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
    handler(ctx: Context<MonitorParams, RequestMeta>) {
      return metrics.monitorMetrics(this.use(ctx), ctx.params);
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
    handler(ctx: Context<AllParams, RequestMeta>) {
      return metrics.allMetrics(this.use(ctx), ctx.params);
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
    handler(ctx: Context<TrendParams, RequestMeta>) {
      return metrics.trend(this.use(ctx), ctx.params);
    },
  },
};
