/**
 * Energy figures from per-bucket aggregates of the rollups (metrics.repo.ts, aggregate): a monitor's totals
 * over a range and its trend per local bucket. Pure.
 */
import type { MonitorTag } from "../config/contract";
import { kwhToMwh, roleOfUnit, tidy, type MonitorFigures, type TagRole } from "./energy";
import type { BucketAggregate } from "./metrics.repo";

export interface RoleTag {
  tag_id: string;
  role: TagRole;
  factor: number;
}

/** The monitor's tags that have an energy role (kWh, kW, V, A and their scaled units). */
export function roleTags(tags: MonitorTag[] | null | undefined): RoleTag[] {
  const out: RoleTag[] = [];
  for (const t of tags ?? []) {
    const r = roleOfUnit(t.tag_unit);
    if (r) out.push({ tag_id: t.tag_id, ...r });
  }
  return out;
}

/** Trend metrics: what each one reads, and its unit. */
export const TREND_METRICS: Record<string, { role: TagRole; unit: string }> = {
  consumption_chart: { role: "energy", unit: "MWh" },
  power_chart: { role: "power", unit: "KW" },
  voltage_chart: { role: "voltage", unit: "V" },
  current_chart: { role: "current", unit: "A" },
};

/**
 * Per trend bucket: the summed increase of the role's counters (in the base unit, kWh for
 * energy), or the mean of the role's readings over all its tags (null without one).
 */
export function seriesOf(rows: BucketAggregate[], monitorId: string, tags: RoleTag[], role: TagRole, buckets: number): (number | null)[] {
  const factor = new Map(tags.filter((t) => t.role === role).map((t) => [t.tag_id, t.factor]));
  const total = new Array<number>(buckets).fill(0);
  const n = new Array<number>(buckets).fill(0);
  for (const r of rows) {
    const f = factor.get(r.tag_id);
    if (r.monitor_id !== monitorId || f === undefined || r.i < 0 || r.i >= buckets) continue;
    total[r.i] += (role === "energy" ? r.increase : r.sum) * f;
    n[r.i] += r.n;
  }
  if (role === "energy") return total;
  return total.map((s, i) => (n[i] > 0 ? s / n[i] : null));
}

/** Whether the monitor has any reading of the role's tags among the rows. */
export function hasData(rows: BucketAggregate[], monitorId: string, tags: RoleTag[], role: TagRole): boolean {
  const ids = new Set(tags.filter((t) => t.role === role).map((t) => t.tag_id));
  return rows.some((r) => r.monitor_id === monitorId && ids.has(r.tag_id) && r.n > 0);
}

/** Totals over one range (rows aggregated into a single bucket): consumption in kWh, means of kW, V and A (0 without readings). */
export function figuresOf(rows: BucketAggregate[], monitorId: string, tags: RoleTag[]): MonitorFigures {
  const one = (role: TagRole) => seriesOf(rows, monitorId, tags, role, 1)[0] ?? 0;
  return { consumptionKwh: one("energy"), powerKw: one("power"), voltageV: one("voltage"), currentA: one("current") };
}

export const toTrendValue = (role: TagRole, v: number | null): number | null => (role === "energy" ? tidy(kwhToMwh(v ?? 0)) : v === null ? null : tidy(v));
