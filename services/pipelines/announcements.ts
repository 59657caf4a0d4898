/**
 * What config keeps a copy of (docs/architecture.md, "Events"): where each pipeline is, and
 * whether it has received events. Each write tells it as it happens (`pipelines.pipeline.*`);
 * the whole list is told again (`pipelines.pipelines.announced`) when this replica starts,
 * whenever a config node joins, and every ANNOUNCE_EVERY_MS (lib/announcements.ts), so a copy that missed events while
 * config was away is made whole.
 */
import type { ServiceBroker } from "moleculer";
import type { DataSource } from "typeorm";
import { announceInParts, announceToNodes } from "../../lib/announcements";
import type { PipelineEvent } from "./contract";
import type { PipelinesEnv } from "./port";
import { pipelinesAfter } from "./announcements.repo";

/** Pipelines per `announced` event: about 130 bytes each, well under NATS's 1 MB payload. */
const ANNOUNCED_PART = 1000;

/** The pipelines whose first events each service instance (its database) has told of: once per process is enough, the list tells the rest. */
const receivedTold = new WeakMap<DataSource, Set<string>>();

/**
 * After a pipeline's write is committed. Awaited, so that in one process config's copy is
 * current when the write answers; a bus that fails is logged, as the write stands and the next
 * announcement carries it.
 */
export async function placed(env: PipelinesEnv, change: "created" | "updated" | "deleted", p: Omit<PipelineEvent, "at">): Promise<void> {
  const event: PipelineEvent = { pipeline_id: p.pipeline_id, site_id: p.site_id, plant_id: p.plant_id, at: Date.now() };
  await env.emit(`pipelines.pipeline.${change}`, event).catch((err: unknown) => env.logger.warn(`pipelines.pipeline.${change} not sent:`, err));
}

/** After a request's events are stored: the first time this process stores some for the pipeline, config is told (awaited, as `placed`). */
export async function received(env: PipelinesEnv, pipeline_id: string): Promise<void> {
  let told = receivedTold.get(env.db);
  if (!told) receivedTold.set(env.db, (told = new Set()));
  if (told.has(pipeline_id)) return;
  told.add(pipeline_id);
  await env.emit("pipelines.pipeline.received", { pipeline_id }).catch((err: unknown) => env.logger.warn("pipelines.pipeline.received not sent:", err));
}

/** Every pipeline, in parts of ordered ids, each read after its `at` (lib/announcements.ts). */
export function announceAll(env: PipelinesEnv): Promise<void> {
  return announceInParts(
    ANNOUNCED_PART,
    (after, limit) => pipelinesAfter(env.db, after, limit),
    (p) => p.pipeline_id,
    (range, pipelines) => env.emit("pipelines.pipelines.announced", { ...range, pipelines }),
  );
}

/**
 * On start and whenever the services on the bus change: announces every pipeline when a config
 * node is there that this replica has not announced them to (`again`: to every config node, as
 * after a reconnection events sent meanwhile may be lost).
 */
export function announceToConfig(env: PipelinesEnv, broker: ServiceBroker, again = false): Promise<void> {
  return announceToNodes(broker, { to: "config", what: "pipelines.pipelines.announced", logger: env.logger, announce: () => announceAll(env) }, again);
}
