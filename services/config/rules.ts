/**
 * The config service's rules as pure functions: scope as SQL parameters, yes/no fields, delete
 * refusals, list filters, monitor tags. No database, no broker: test/unit/config reaches them.
 */
import type { Scope } from "../../lib/access";
import { isId, newId } from "../../lib/ids";
import type { MonitorTag } from "./contract";
import { MSG } from "./messages";

/** A uuid no row has: a caller whose scope names a malformed id sees nothing rather than an SQL error. */
const NOTHING = "00000000-0000-0000-0000-000000000000";

/** The caller's scope as [site, plant] SQL parameters, null meaning "not restricted on that level". */
export function scopeParams(scope: Scope): [string | null, string | null] {
  if (scope.kind === "all") return [null, null];
  const site = isId(scope.site_id) ? scope.site_id : NOTHING;
  if (scope.kind === "site") return [site, null];
  return [site, isId(scope.plant_id) ? scope.plant_id : NOTHING];
}

/** The scope condition on a row joined to `plants <alias>`, its site id in $n and its plant id in $n+1. */
export function scopeSql(n: number, alias = "p"): string {
  return `($${n}::uuid IS NULL OR ${alias}.site_id = $${n}::uuid) AND ($${n + 1}::uuid IS NULL OR ${alias}.plant_id = $${n + 1}::uuid)`;
}

/** A short text naming a scope, for cache keys of scoped lists. */
export function scopeKey(scope: Scope): string {
  const [site, plant] = scopeParams(scope);
  return `${site ?? "*"}/${plant ?? "*"}`;
}

/** Assets are written with yes/no and read and filtered as Yes/No (spec: Asset.is_critical). */
export function parseYesNo(value: string): boolean | undefined {
  const v = value.trim().toLowerCase();
  if (v === "yes") return true;
  if (v === "no") return false;
  return undefined;
}

export const yesNo = (value: boolean): "Yes" | "No" => (value ? "Yes" : "No");

/** Op 24: which refusal, if any, a function with attached monitors and assets answers. */
export function functionDeleteRefusal(monitors: number, assets: number): string | null {
  if (monitors > 0 && assets > 0) return MSG.functionHasBoth;
  if (monitors > 0) return MSG.functionHasMonitors;
  if (assets > 0) return MSG.functionHasAssets;
  return null;
}

export interface PlantContents {
  events: number;
  pipelines: number;
  assets: number;
  functions: number;
}

/** Op 34: refusals in the spec's order (events, pipelines, assets, functions). */
export function plantDeleteRefusal(c: PlantContents): string | null {
  if (c.events > 0) return MSG.plantHasEvents;
  if (c.pipelines > 0) return MSG.plantHasPipelines;
  if (c.assets > 0) return MSG.plantHasAssets;
  if (c.functions > 0) return MSG.plantHasFunctions;
  return null;
}

export const DATA_TYPES = ["all", "energy", "condition", "process"] as const;
export type DataTypeFilter = (typeof DATA_TYPES)[number];

/** An unregistered monitor has no pipeline data type yet; its monitor_type stands in for it. */
export const MONITOR_TYPE_FOR: Record<Exclude<DataTypeFilter, "all">, string> = {
  energy: "energy-monitor",
  condition: "condition-monitor",
  process: "process-monitor",
};

export function parseDataType(value: string): DataTypeFilter | undefined {
  const v = value.trim().toLowerCase();
  return (DATA_TYPES as readonly string[]).includes(v) ? (v as DataTypeFilter) : undefined;
}

/** IANA zone names only: trends and retention are computed in the site's zone. */
export { isTimeZone } from "../../lib/time-zone";

/** A latitude or longitude as text: empty (not given) or a decimal number within its range. */
export function isCoordinate(value: string, limit: number): boolean {
  if (value === "") return true;
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(value.trim())) return false;
  return Math.abs(Number(value)) <= limit;
}

export type TagInput = Partial<MonitorTag> & { tag_name: string };

/** Thresholds are numbers written as text (spec: Monitor tag); empty text means "not set". */
export const NUMERIC_TEXT = /^$|^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Tags as stored: a tag_id for every tag (generated when missing), empty texts for missing
 * descriptions. Returns the name of the first bad field instead when two tags share an id.
 */
export function normalizeTags(tags: TagInput[]): MonitorTag[] | { invalid: string } {
  const seen = new Set<string>();
  const out: MonitorTag[] = [];
  for (const [i, tag] of tags.entries()) {
    const tag_id = tag.tag_id && tag.tag_id.trim() !== "" ? tag.tag_id : newId();
    if (seen.has(tag_id)) return { invalid: `tags[${i}].tag_id` };
    seen.add(tag_id);
    out.push({
      tag_id,
      tag_name: tag.tag_name,
      tag_desc: tag.tag_desc ?? "",
      tag_unit: tag.tag_unit ?? "",
      thresholds: { ...(tag.thresholds ?? {}) },
    });
  }
  return out;
}

/** Drops the keys whose value is null or undefined, so a stored object holds only what was said. */
export function compact<T extends object>(value: T | undefined | null): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value ?? {})) if (v !== null && v !== undefined) out[k] = v;
  return out as Partial<T>;
}
