/** The resources ems answers with, and the docs of its fields (the resources are announced in the service's `openapi` setting). */
import { measured, obj, str, strings } from "../../lib/openapi-schema";
import type { FieldDoc } from "../../lib/operations";

export const EMS_SCHEMAS = {
  EnergyMetrics: obj({
    ...strings("monitor_id", "monitor_name", "function_id", "function_name", "plant_id", "plant_name", "site_id", "site_name"),
    energy_unit: { ...str, enum: ["MWh"], description: "unit of total_consumption and total_energy" },
    current_unit: { ...str, enum: ["A"], description: "unit of Current" },
    power_unit: { ...str, enum: ["KW"], description: "unit of Power (kilowatts, spelt as the spec does)" },
    voltage_unit: { ...str, enum: ["V"], description: "unit of Voltage" },
    total_consumption: measured("number", "MWh", "the monitor's energy counter's increase over the range"),
    percent_of_total: measured("number", "%", "share of the consumption of its function's energy monitors (0 when they used none)"),
    total_energy: measured("number", "MWh", "consumption of all energy monitors of the monitor's function over the range"),
    Voltage: measured("number", "V", "mean over the range"),
    Current: measured("number", "A", "mean over the range"),
    Power: measured("number", "KW", "mean over the range"),
  }),
  EnergyTrendPoint: obj({
    Date: { ...str, description: "the bucket's start, ISO 8601 in the site's time zone", examples: ["2026-01-01T00:00:00+05:30"] },
    Energy: { type: ["number", "null"], description: "the bucket's consumption (summed) or mean, in unit; null without readings (power, voltage, current)" },
    unit: { ...str, enum: ["MWh", "KW", "V", "A"], description: "the metric's unit" },
  }),
};

/** What an answer of the monitor and all operations looks like. */
export const ENERGY_METRICS_EXAMPLE = {
  monitor_id: "6f1d2c3b-4a5e-4f60-8a71-92b3c4d5e6f7",
  monitor_name: "Main incomer",
  function_id: "2b7f6c1d-5e42-4a4e-9d0b-3f1c2a9e8a61",
  function_name: "Utilities",
  plant_id: "9d0b2b7f-6c1d-4e42-8a61-3f1c2a9e4a4e",
  plant_name: "Plant 1",
  site_id: "3f1c2a9e-8a61-4a4e-9d0b-2b7f6c1d5e42",
  site_name: "Pune Works",
  total_consumption: 41.25,
  percent_of_total: 62.5,
  total_energy: 66,
  energy_unit: "MWh",
  current_unit: "A",
  power_unit: "KW",
  Voltage: 415.2,
  voltage_unit: "V",
  Current: 78.4,
  Power: 55.3,
};

export const MONITOR_ID_FIELD: FieldDoc = {
  description: "the energy monitor's id (a monitor of type energy-monitor)",
  example: ENERGY_METRICS_EXAMPLE.monitor_id,
};

/** `from` and `to` of every ems operation. */
export const RANGE_FIELDS: Record<"from" | "to", FieldDoc> = {
  from: { required: true, description: "start of the range, ISO 8601", example: "2026-01-01T00:00:00+05:30" },
  to: { required: true, description: "end of the range (excluded), ISO 8601", example: "2026-02-01T00:00:00+05:30" },
};
