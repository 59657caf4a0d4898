/**
 * What the pipelines service asks the config service (its public, cached resolve actions):
 * plants, functions, sites and monitors. Nothing here reads config's schema.
 */
import type { Context } from "moleculer";
import { isId } from "../../lib/ids";
import type { ResolvedMonitor } from "./rules";

export interface ResolvedPlant {
  plant_id: string;
  plant_name: string;
  site_id: string;
  site_name: string;
}

export interface ResolvedFunction extends ResolvedPlant {
  function_id: string;
  function_name: string;
  timezone: string;
}

export interface ResolvedSite {
  site_id: string;
  site_name: string;
  timezone: string;
  retention_period: number;
}

type Caller = Pick<Context, "call">;

export async function resolvePlant(ctx: Caller, plant_id: string): Promise<ResolvedPlant | null> {
  if (!isId(plant_id)) return null;
  return ctx.call<ResolvedPlant | null, { plant_id: string }>("config.plants.resolve", { plant_id });
}

export async function resolveFunction(ctx: Caller, function_id: string): Promise<ResolvedFunction | null> {
  if (!isId(function_id)) return null;
  return ctx.call<ResolvedFunction | null, { function_id: string }>("config.functions.resolve", { function_id });
}

export async function resolveSite(ctx: Caller, site_id: string): Promise<ResolvedSite | null> {
  if (!isId(site_id)) return null;
  return ctx.call<ResolvedSite | null, { site_id: string }>("config.sites.resolve", { site_id });
}

/** The monitors that exist among `ids`, by id (a malformed id simply is not found). */
export async function resolveMonitors(ctx: Caller, ids: string[]): Promise<Map<string, ResolvedMonitor>> {
  const wanted = [...new Set(ids.filter(isId).map((id) => id.toLowerCase()))];
  if (wanted.length === 0) return new Map();
  const found = await ctx.call<ResolvedMonitor[], { monitor_ids: string[] }>("config.monitors.resolve", { monitor_ids: wanted });
  return new Map(found.map((m) => [m.monitor_id, m]));
}
