/**
 * The config service's contract: its internal resolve actions (not reachable over HTTP, cached,
 * unscoped: null or nothing for what does not exist) and the lists other services read in their
 * caller's scope; the `config.<entity>.created|updated|deleted` events; a typed client, and the
 * helpers its consumers share (a monitor map, scope-checked lookups, retention cutoffs).
 */
import { inScope, scopeOf, type Principal } from "../../lib/access";
import { callApart, eventSender, serviceClient, type Caller } from "../../lib/contract";
import { isId } from "../../lib/ids";
import type { Page } from "../../lib/paging";

// ---------------------------------------------------------------- shared shapes

/** The attributes the spec names (Asset.attributes); all optional, each of its type. */
export interface AssetAttributes {
  machine_type?: string;
  /** RPM */
  rotating_speed?: number;
  manufacturer?: string;
  machine_model?: string;
  serial_no?: string;
  phases?: string;
  /** kW */
  kw?: number;
  /** Hz */
  frequency?: number;
  /** V */
  volts?: number;
  /** A */
  amp?: number;
  /** ISO 20816-3: 1 large (300 kW to 50 MW), 2 medium (15 kW to 300 kW); absent: from kw. */
  machine_group?: 1 | 2;
  /** ISO 20816-3's support; absent: rigid. */
  foundation?: "rigid" | "flexible";
}

export interface Thresholds {
  caution?: string;
  operational?: string;
  warning?: string;
}

export interface MonitorTag {
  tag_id: string;
  tag_name: string;
  tag_desc: string;
  tag_unit: string;
  thresholds: Thresholds;
}

export interface AssetFilter extends Page {
  function_id?: string;
  asset_category?: string;
  is_critical?: string;
}

export interface MonitorFilter extends Page {
  asset_id?: string;
  function_id?: string;
  pipeline_id?: string;
  is_registered?: string;
  data_type?: string;
}

// ---------------------------------------------------------------- actions

/** `config.sites.resolve`. */
export interface ResolvedSite {
  site_id: string;
  site_name: string;
  timezone: string;
  /** Days. */
  retention_period: number;
}

/** `config.plants.resolve`. */
export interface ResolvedPlant {
  plant_id: string;
  plant_name: string;
  site_id: string;
  site_name: string;
  timezone: string;
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

/** `config.assets.resolve`. */
export interface ResolvedAsset {
  asset_id: string;
  asset_name: string;
  asset_category: string;
  is_critical: "Yes" | "No";
  attributes: AssetAttributes;
  function_id: string;
  function_name: string;
  plant_id: string;
  site_id: string;
}

/** An item of `config.monitors.resolve`: a monitor with its names, place, tags and its asset's attributes. */
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
  specs: Record<string, unknown>;
  attributes: Record<string, unknown>;
  /** `{}` when the monitor has no asset. */
  asset_attributes: Record<string, unknown>;
  tags: MonitorTag[];
}

/** An item of `config.monitors.list` (op 21). */
export interface MonitorListItem {
  monitor_id: string;
  monitor_name: string;
  monitor_type: string;
  /** Epoch ms. */
  created_at: number;
  device_registered: boolean;
}

/** An item of `config.assets.list` (op 15). */
export interface AssetListItem {
  asset_id: string;
  asset_name: string;
  is_critical: "Yes" | "No";
  asset_category: string;
  function_name: string;
  plant_name: string;
  site_name: string;
  monitor_count: number;
}

export interface ConfigContract {
  "sites.resolve": { params: { site_id: string }; reply: ResolvedSite | null };
  "plants.resolve": { params: { plant_id: string }; reply: ResolvedPlant | null };
  "functions.resolve": { params: { function_id: string }; reply: ResolvedFunction | null };
  "assets.resolve": { params: { asset_id: string }; reply: ResolvedAsset | null };
  /** Those of the ids that exist (at most 10,000 ids a call). */
  "monitors.resolve": { params: { monitor_ids: string[] }; reply: ResolvedMonitor[] };
  /** In the scope of the caller's `meta.user`; the total goes in X-Total-Count (see `listMonitorIds`). */
  "monitors.list": { params: MonitorFilter; reply: MonitorListItem[] };
  "assets.list": { params: AssetFilter; reply: AssetListItem[] };
}

export const configClient = serviceClient<ConfigContract>("config");

// ---------------------------------------------------------------- events

/**
 * `config.<entity>.created|updated|deleted`: the entity as stored plus the ids of its site, plant
 * and function. A deleted event carries the row as it was.
 */
export type ConfigChange = "created" | "updated" | "deleted";

export interface SiteEvent {
  site_id: string;
  site_name: string;
  location: string;
  latitude: string;
  longitude: string;
  timezone: string;
  retention_period: number;
  edge_firmware: { current_version: string; previous_version: string };
}

export interface PlantEvent {
  plant_id: string;
  plant_name: string;
  site_id: string;
}

export interface FunctionEvent {
  function_id: string;
  function_name: string;
  plant_id: string;
  site_id: string;
}

export interface AssetEvent {
  asset_id: string;
  asset_name: string;
  asset_category: string;
  is_critical: "Yes" | "No";
  attributes: Record<string, unknown>;
  function_id: string;
  plant_id: string;
  site_id: string;
}

export interface MonitorEvent {
  monitor_id: string;
  monitor_name: string;
  monitor_type: string;
  asset_id: string | null;
  function_id: string;
  plant_id: string;
  site_id: string;
  tags: MonitorTag[];
  specs: Record<string, unknown>;
  attributes: Record<string, unknown>;
  created_at: number;
}

/** The payload of each entity's events. */
export interface ConfigEntityEvents {
  site: SiteEvent;
  plant: PlantEvent;
  function: FunctionEvent;
  asset: AssetEvent;
  monitor: MonitorEvent;
}

export type ConfigEntity = keyof ConfigEntityEvents;

/** `config.cache.changed`, broadcast to config's replicas: a write started a new cache generation. */
export interface ConfigCacheChanged {
  generation: string;
}

export type ConfigEvents = { [E in ConfigEntity as `config.${E}.${ConfigChange}`]: ConfigEntityEvents[E] } & {
  "config.cache.changed": ConfigCacheChanged;
};

export const configEvents = eventSender<ConfigEvents>();

// ---------------------------------------------------------------- helpers for consumers

/** A site's retention when it is not given (spec: Site.retention_period), in days. */
export const DEFAULT_RETENTION_DAYS = 180;
const DAY_MS = 24 * 3600 * 1000;
/** `config.monitors.resolve` takes this many ids a call. */
const RESOLVE_CHUNK = 10000;

// A malformed id is nobody's: answered null here without asking config (which would answer the same).
export const resolveSite = async (caller: Caller, site_id: string): Promise<ResolvedSite | null> =>
  isId(site_id) ? configClient.call(caller, "sites.resolve", { site_id }) : null;

export const resolvePlant = async (caller: Caller, plant_id: string): Promise<ResolvedPlant | null> =>
  isId(plant_id) ? configClient.call(caller, "plants.resolve", { plant_id }) : null;

export const resolveFunction = async (caller: Caller, function_id: string): Promise<ResolvedFunction | null> =>
  isId(function_id) ? configClient.call(caller, "functions.resolve", { function_id }) : null;

export const resolveAsset = async (caller: Caller, asset_id: string): Promise<ResolvedAsset | null> =>
  isId(asset_id) ? configClient.call(caller, "assets.resolve", { asset_id }) : null;

/** The monitors that exist among `ids`, by id (a malformed id simply is not found). */
export async function resolveMonitors(caller: Caller, ids: string[]): Promise<Map<string, ResolvedMonitor>> {
  const wanted = [...new Set(ids.filter(isId).map((id) => id.toLowerCase()))];
  if (wanted.length === 0) return new Map();
  const found = await configClient.call(caller, "monitors.resolve", { monitor_ids: wanted });
  return new Map(found.map((m) => [m.monitor_id, m]));
}

/** A monitor the user may see, or undefined: out of scope answers like missing. */
export async function visibleMonitor(caller: Caller, user: Principal, id: string): Promise<ResolvedMonitor | undefined> {
  if (!isId(id)) return undefined;
  const m = (await resolveMonitors(caller, [id])).get(id);
  return m && inScope(scopeOf(user), m) ? m : undefined;
}

export async function visibleAsset(caller: Caller, user: Principal, id: string): Promise<ResolvedAsset | undefined> {
  const a = await resolveAsset(caller, id);
  return a && inScope(scopeOf(user), a) ? a : undefined;
}

export async function visibleFunction(caller: Caller, user: Principal, id: string): Promise<ResolvedFunction | undefined> {
  const f = await resolveFunction(caller, id);
  return f && inScope(scopeOf(user), f) ? f : undefined;
}

/**
 * config's list actions put their own X-Total-Count in the meta, and a Context's `call` merges a
 * sub-call's meta back into the caller's: the caller's answer would carry config's count. A list
 * is therefore asked as a child call (same user, request id and trace) whose meta stays its own.
 */
function callForList<K extends "monitors.list" | "assets.list">(
  caller: Caller,
  action: K,
  params: ConfigContract[K]["params"],
): Promise<ConfigContract[K]["reply"]> {
  return callApart(configClient, caller, action, params);
}

/** Ids of the monitors config lists under a filter (op 21's action, in the caller's scope). */
export async function listMonitorIds(caller: Caller, filter: { asset_id?: string; function_id?: string }): Promise<string[]> {
  return (await callForList(caller, "monitors.list", filter)).map((r) => r.monitor_id);
}

/** Assets of a function (op 15's action, in the caller's scope). */
export async function listAssets(caller: Caller, function_id: string): Promise<AssetListItem[]> {
  return callForList(caller, "assets.list", { function_id });
}

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
    const site = await configClient.call(caller, "sites.resolve", { site_id });
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

/**
 * config's answers as plain async functions for one caller (visible: in `user`'s scope), as the
 * domain ports of the services that read config's tree hold them (cm's and ems's port.ts).
 */
export interface ConfigReader {
  visibleMonitor(id: string): Promise<ResolvedMonitor | undefined>;
  visibleAsset(id: string): Promise<ResolvedAsset | undefined>;
  visibleFunction(id: string): Promise<ResolvedFunction | undefined>;
  /** The monitors that exist among the ids, by id, whoever's they are. */
  resolveMonitors(ids: string[]): Promise<Map<string, ResolvedMonitor>>;
  /** Ids of the monitors of an asset or function, in the caller's scope. */
  monitorIds(filter: { asset_id?: string; function_id?: string }): Promise<string[]>;
  /** The monitors of an asset or function, in the caller's scope, by id. */
  monitorsOf(filter: { asset_id?: string; function_id?: string }): Promise<Map<string, ResolvedMonitor>>;
  /** The assets of a function, in the caller's scope. */
  assets(function_id: string): Promise<AssetListItem[]>;
  retentionCutoffs(monitorIds: string[], now: number): Promise<RetentionCutoff[]>;
}

export function configReader(caller: Caller, user: Principal): ConfigReader {
  return {
    visibleMonitor: (id) => visibleMonitor(caller, user, id),
    visibleAsset: (id) => visibleAsset(caller, user, id),
    visibleFunction: (id) => visibleFunction(caller, user, id),
    resolveMonitors: (ids) => resolveMonitors(caller, ids),
    monitorIds: (filter) => listMonitorIds(caller, filter),
    monitorsOf: async (filter) => resolveMonitors(caller, await listMonitorIds(caller, filter)),
    assets: (function_id) => listAssets(caller, function_id),
    retentionCutoffs: (monitorIds, now) => retentionCutoffs(caller, monitorIds, now),
  };
}
