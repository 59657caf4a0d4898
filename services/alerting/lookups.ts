/**
 * What alerting asks the other services: the hierarchy (config), gateways (pipelines) and the
 * contacts of users to notify (auth). Their answers are typed here, at the boundary.
 */
import type { Context, ServiceBroker } from "moleculer";

export interface FunctionSummary {
  function_id: string;
  function_name: string;
  plant_id: string;
  plant_name: string;
  site_id: string;
  site_name: string;
  timezone: string;
}

export interface MonitorTagSummary {
  tag_id: string;
  tag_name: string;
  tag_desc?: string;
  tag_unit?: string;
  thresholds?: Record<string, unknown> | null;
}

export interface MonitorSummary {
  monitor_id: string;
  monitor_name: string;
  monitor_type: string;
  function_id: string | null;
  function_name: string | null;
  asset_id: string | null;
  asset_name: string | null;
  plant_id: string;
  plant_name: string;
  site_id: string;
  site_name: string;
  timezone: string;
  tags: MonitorTagSummary[];
}

/** `pipelines.resolve`: a gateway's names and place, and the monitors registered to it. */
export interface GatewaySummary {
  pipeline_id: string;
  pipeline_name: string;
  data_type: string;
  function_id: string | null;
  plant_id: string;
  site_id: string;
  monitor_ids?: string[];
}

type Caller = Pick<Context, "call"> | ServiceBroker;

export async function resolveFunction(c: Caller, function_id: string): Promise<FunctionSummary | null> {
  return (await c.call("config.functions.resolve", { function_id })) as FunctionSummary | null;
}

export async function resolveMonitors(c: Caller, monitor_ids: string[]): Promise<MonitorSummary[]> {
  if (monitor_ids.length === 0) return [];
  return (await c.call("config.monitors.resolve", { monitor_ids })) as MonitorSummary[];
}

/** True when a service offering the action is reachable; the pipelines service is optional. */
export function hasAction(broker: ServiceBroker, action: string): boolean {
  return broker.registry.actions.isAvailable(action);
}

export async function resolveGateway(c: Caller, broker: ServiceBroker, pipeline_id: string): Promise<GatewaySummary | null> {
  if (!hasAction(broker, "pipelines.resolve")) return null;
  return (await c.call("pipelines.resolve", { pipeline_id })) as GatewaySummary | null;
}

/** Gateway names by id; an id stands for its name when pipelines cannot say. */
export async function gatewayNames(c: Caller, broker: ServiceBroker, ids: string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const unique = [...new Set(ids)];
  if (hasAction(broker, "pipelines.resolve")) {
    const found = await Promise.all(
      unique.map((id) => (c.call("pipelines.resolve", { pipeline_id: id }) as Promise<GatewaySummary | null>).catch(() => null)),
    );
    found.forEach((g, i) => names.set(unique[i], g?.pipeline_name ?? unique[i]));
  } else {
    for (const id of unique) names.set(id, id);
  }
  return names;
}
