/**
 * What cm asks the config service (its internal actions, cached there), typed by what cm reads.
 * Calls made for a user carry `ctx.meta.user`, so config's lists answer within the caller's scope.
 */
import type { CallingOptions, Context } from "moleculer";
import { inScope, scopeOf, type Principal } from "../../lib/access";
import { isId } from "../../lib/ids";
import type { Thresholds } from "./status";

export interface Caller {
  call<T, P>(action: string, params?: P, opts?: CallingOptions): Promise<T>;
}

export interface MonitorTagInfo {
  tag_id: string;
  tag_name: string;
  tag_desc?: string;
  tag_unit?: string;
  thresholds?: Thresholds | null;
}

/** `config.monitors.resolve` item. */
export interface ResolvedMonitor {
  monitor_id: string;
  monitor_name: string;
  monitor_type: string;
  function_id: string;
  function_name: string;
  asset_id: string | null;
  asset_name: string | null;
  plant_id: string;
  plant_name: string;
  site_id: string;
  site_name: string;
  timezone: string;
  specs: Record<string, unknown> | null;
  attributes: Record<string, unknown> | null;
  asset_attributes: Record<string, unknown> | null;
  tags: MonitorTagInfo[];
}

/** `config.assets.resolve`. */
export interface ResolvedAsset {
  asset_id: string;
  asset_name: string;
  asset_category: string;
  is_critical: string;
  attributes: Record<string, unknown> | null;
  function_id: string;
  function_name: string;
  plant_id: string;
  site_id: string;
}

/** `config.functions.resolve`. */
export interface ResolvedFunction {
  function_id: string;
  function_name: string;
  plant_id: string;
  plant_name: string;
  site_id: string;
  site_name: string;
  timezone: string;
}

export async function resolveMonitors(caller: Caller, ids: string[]): Promise<Map<string, ResolvedMonitor>> {
  const wanted = [...new Set(ids.filter(isId))];
  if (wanted.length === 0) return new Map();
  const rows = await caller.call<ResolvedMonitor[], { monitor_ids: string[] }>("config.monitors.resolve", { monitor_ids: wanted });
  return new Map((rows ?? []).map((m) => [m.monitor_id, m]));
}

/** A monitor the user may see, or undefined: out of scope answers like missing. */
export async function visibleMonitor(caller: Caller, user: Principal, id: string): Promise<ResolvedMonitor | undefined> {
  if (!isId(id)) return undefined;
  const m = (await resolveMonitors(caller, [id])).get(id);
  return m && inScope(scopeOf(user), m) ? m : undefined;
}

export async function visibleAsset(caller: Caller, user: Principal, id: string): Promise<ResolvedAsset | undefined> {
  if (!isId(id)) return undefined;
  const a = await caller.call<ResolvedAsset | null, { asset_id: string }>("config.assets.resolve", { asset_id: id });
  return a && inScope(scopeOf(user), a) ? a : undefined;
}

export async function visibleFunction(caller: Caller, user: Principal, id: string): Promise<ResolvedFunction | undefined> {
  if (!isId(id)) return undefined;
  const f = await caller.call<ResolvedFunction | null, { function_id: string }>("config.functions.resolve", { function_id: id });
  return f && inScope(scopeOf(user), f) ? f : undefined;
}

/**
 * config's list actions put their own X-Total-Count in the meta, and a Context's `call` merges a
 * sub-call's meta back into the caller's: a cm or ems answer would carry config's count. A list
 * is therefore asked as a child call (same user, request id and trace) whose meta stays its own.
 */
function callForList<T, P>(caller: Caller, action: string, params: P): Promise<T> {
  const ctx = caller as Partial<Context>;
  if (ctx.broker && ctx.meta) return ctx.broker.call<T, P>(action, params, { parentCtx: ctx as Context });
  return caller.call<T, P>(action, params);
}

/** Ids of the monitors config lists under a filter (op 21's action, in the caller's scope). */
export async function listMonitorIds(caller: Caller, filter: { asset_id?: string; function_id?: string }): Promise<string[]> {
  const rows = await callForList<{ monitor_id: string }[], typeof filter>(caller, "config.monitors.list", filter);
  return (rows ?? []).map((r) => r.monitor_id);
}

/** Assets of a function (op 15's action, in the caller's scope). */
export async function listAssets(caller: Caller, function_id: string): Promise<{ asset_id: string; asset_name: string }[]> {
  return (await callForList<{ asset_id: string; asset_name: string }[], { function_id: string }>(caller, "config.assets.list", { function_id })) ?? [];
}

/** The spec's default retention (days), kept for data whose monitor or site config no longer knows. */
export const DEFAULT_RETENTION_DAYS = 180;
const DAY_MS = 24 * 3600 * 1000;
/** `config.monitors.resolve` takes this many ids a call. */
const RESOLVE_CHUNK = 10000;

/** Monitors whose data goes from before `before`: those of one site's retention. */
export interface RetentionCutoff {
  monitor_ids: string[];
  before: number;
}

/**
 * The monitors grouped by their site's retention cutoff at `now`. A monitor or site config does
 * not know keeps the default; config not answering throws, so nothing is deleted on a guess.
 */
export async function retentionCutoffs(caller: Caller, monitorIds: string[], now: number): Promise<RetentionCutoff[]> {
  const siteOf = new Map<string, string>();
  for (let i = 0; i < monitorIds.length; i += RESOLVE_CHUNK) {
    for (const m of (await resolveMonitors(caller, monitorIds.slice(i, i + RESOLVE_CHUNK))).values()) siteOf.set(m.monitor_id, m.site_id);
  }
  const days = new Map<string, number>();
  for (const site_id of new Set(siteOf.values())) {
    const site = await caller.call<{ retention_period: number } | null, { site_id: string }>("config.sites.resolve", { site_id });
    if (site) days.set(site_id, site.retention_period);
  }
  const byBefore = new Map<number, string[]>();
  for (const m of monitorIds) {
    const site = siteOf.get(m);
    const before = now - ((site !== undefined ? days.get(site) : undefined) ?? DEFAULT_RETENTION_DAYS) * DAY_MS;
    const group = byBefore.get(before);
    if (group) group.push(m);
    else byBefore.set(before, [m]);
  }
  return [...byBefore].map(([before, monitor_ids]) => ({ monitor_ids, before }));
}
