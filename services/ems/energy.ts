/**
 * The energy metrics object of the spec and the rules behind its numbers:
 * an energy monitor's tags are recognised by unit, consumption is the
 * counter's increase reported in MWh, Power, Voltage and Current are means over the range, and
 * percent_of_total is the monitor's share of the group: the energy monitors of its function.
 */
export type TagRole = "energy" | "power" | "voltage" | "current";

export const ENERGY_MONITOR_TYPE = "energy-monitor";

/** Energy monitors are the ones of type `energy-monitor` (contract); ems ignores the rest. */
export const isEnergyMonitor = (m: { monitor_type: string }): boolean => m.monitor_type === ENERGY_MONITOR_TYPE;

/** Role of a tag by its unit, and the factor to the role's base unit (kWh, kW, V, A). */
export function roleOfUnit(unit: string | null | undefined): { role: TagRole; factor: number } | undefined {
  switch ((unit ?? "").trim().toLowerCase()) {
    case "kwh":
      return { role: "energy", factor: 1 };
    case "wh":
      return { role: "energy", factor: 1e-3 };
    case "mwh":
      return { role: "energy", factor: 1e3 };
    case "kw":
      return { role: "power", factor: 1 };
    case "w":
      return { role: "power", factor: 1e-3 };
    case "mw":
      return { role: "power", factor: 1e3 };
    case "v":
      return { role: "voltage", factor: 1 };
    case "kv":
      return { role: "voltage", factor: 1e3 };
    case "a":
      return { role: "current", factor: 1 };
    default:
      return undefined;
  }
}

export const kwhToMwh = (kwh: number): number => kwh / 1000;

/**
 * A reported figure without float noise: a counter's increase 100.797 - 100 kWh computes as
 * 0.796999999999997, which no meter measured. Nine decimals still keep a milliwatt-hour in MWh.
 */
export const tidy = (v: number): number => (Number.isFinite(v) ? Number(v.toFixed(9)) : v);

/** Shares in percent of each part; all 0 when the total is 0. They sum to 100 otherwise. */
export function percentOfTotal(parts: number[]): number[] {
  const total = parts.reduce((a, b) => a + b, 0);
  return parts.map((p) => (total > 0 ? (100 * p) / total : 0));
}

export interface MonitorNames {
  monitor_id: string;
  monitor_name: string;
  function_id: string;
  function_name: string;
  plant_id: string;
  plant_name: string;
  site_id: string;
  site_name: string;
}

export interface MonitorFigures {
  /** kWh over the range. */
  consumptionKwh: number;
  powerKw: number;
  voltageV: number;
  currentA: number;
}

export interface EnergyMetrics extends MonitorNames {
  total_consumption: number;
  percent_of_total: number;
  total_energy: number;
  energy_unit: "MWh";
  current_unit: "A";
  power_unit: "KW";
  Voltage: number;
  voltage_unit: "V";
  Current: number;
  Power: number;
}

/**
 * The metrics objects of a group of monitors: `total_consumption` is the monitor's own
 * consumption, `total_energy` the group's, both in MWh.
 */
export function energyMetrics(group: { names: MonitorNames; figures: MonitorFigures }[]): EnergyMetrics[] {
  const shares = percentOfTotal(group.map((m) => m.figures.consumptionKwh));
  const total = kwhToMwh(group.reduce((a, m) => a + m.figures.consumptionKwh, 0));
  return group.map((m, i) => ({
    ...m.names,
    total_consumption: tidy(kwhToMwh(m.figures.consumptionKwh)),
    percent_of_total: tidy(shares[i] ?? 0),
    total_energy: tidy(total),
    energy_unit: "MWh",
    current_unit: "A",
    power_unit: "KW",
    Voltage: tidy(m.figures.voltageV),
    voltage_unit: "V",
    Current: tidy(m.figures.currentA),
    Power: tidy(m.figures.powerKw),
  }));
}
