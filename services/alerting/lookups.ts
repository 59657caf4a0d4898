/**
 * What alerting asks the pipelines service, which is optional: a watcher's gateway and its name.
 * Without a pipelines service to ask, a gateway is unknown (null) and its id stands for its name.
 * (The hierarchy comes from config's contract: resolveFunction, resolveMonitors.)
 */
import type { ServiceBroker } from "moleculer";
import type { Caller } from "../../lib/contract";
import { pipelinesClient, type ResolvedPipeline } from "../pipelines/contract";

/** True when a service offering the action is reachable; the pipelines service is optional. */
export function hasAction(broker: ServiceBroker, action: string): boolean {
  return broker.registry.actions.isAvailable(action);
}

export async function resolveGateway(c: Caller, broker: ServiceBroker, pipeline_id: string): Promise<ResolvedPipeline | null> {
  if (!hasAction(broker, "pipelines.resolve")) return null;
  return pipelinesClient.call(c, "resolve", { pipeline_id });
}

/** Gateway names by id; an id stands for its name when pipelines cannot say. */
export async function gatewayNames(c: Caller, broker: ServiceBroker, ids: string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const unique = [...new Set(ids)];
  if (hasAction(broker, "pipelines.resolve")) {
    const found = await Promise.all(unique.map((id) => pipelinesClient.call(c, "resolve", { pipeline_id: id }).catch(() => null)));
    found.forEach((g, i) => names.set(unique[i], g?.pipeline_name ?? unique[i]));
  } else {
    for (const id of unique) names.set(id, id);
  }
  return names;
}
