/**
 * Sparkplug B edge nodes as pipelines (docs/sparkplug.md): which pipeline a node is, what its
 * metrics' names are readings of, and what its births and deaths do to the pipeline's status.
 * The readings themselves go through `ingestReadings`, exactly as `/_ingest`'s do.
 */
import { createHash } from "node:crypto";
import { LocalCache } from "../../lib/cache";
import { badRequest } from "../../lib/errors";
import type { Caller } from "../../lib/contract";
import { resolveMonitors, type ResolvedMonitor } from "../config/contract";
import { SPARKPLUG_PRESENCE, type Reading, type SparkplugIngested, type SparkplugMessage, type SparkplugNode } from "./contract";
import { ingestRequests, pipelineOfIngestKey } from "./ingest";
import { MSG } from "./messages";
import { completeAction, pendingActions } from "./actions.repo";
import { findPipeline, recordHeartbeat, setStatus, type PipelineRow } from "./pipelines.repo";
import type { KeyedPipeline, PipelinesEnv, SystemPort } from "./port";
import { registeredMonitors } from "./registrations.repo";
import { statusAfterAck } from "./rules";
import * as sparkplugRepo from "./sparkplug.repo";
import type { EntityManager } from "typeorm";

/** Why a metric's name is no reading (the reasons a mapped reading is refused for are ingestion's own). */
export const SPARKPLUG_REASONS = {
  unknownName: "Metric name maps no tag",
  ambiguousName: "Metric name maps several tags",
  severalMonitors: "Node metric with several monitors registered",
  noMonitor: "Node metric with no monitor registered",
} as const;

/** A node's id: its pipeline's MAC address in lower-case hex without separators. */
export const edgeNodeOf = (mac: string): string => mac.replace(/[^0-9a-f]/gi, "").toLowerCase();

function nodeOf(row: PipelineRow): SparkplugNode | null {
  const edge_node = edgeNodeOf(row.mac_address ?? "");
  if (row.kind !== "edge" || edge_node === "") return null;
  return { pipeline_id: row.pipeline_id, site_id: row.site_id, plant_id: row.plant_id, edge_node };
}

/** CONNECT's check: the same ingest-key check as `/_ingest`'s, the username naming the pipeline the key opens. */
export async function connect(env: PipelinesEnv, p: { pipeline_id: string; ingest_key: string }): Promise<SparkplugNode | null> {
  const keyed = await pipelineOfIngestKey(env, p.ingest_key);
  if (!keyed || keyed.pipeline_id !== p.pipeline_id.toLowerCase()) return null;
  const row = await findPipeline(env.db, keyed.pipeline_id, "edge");
  const node = row && nodeOf(row);
  if (node) await sparkplugRepo.markNode(env.db, node.pipeline_id, Date.now());
  return node;
}

/** The host's lookup of a node seen on the plant's broker. */
export async function nodeOfEdgeId(env: PipelinesEnv, p: { edge_node: string; site_ids: string[] | null }): Promise<SparkplugNode | null> {
  const row = await sparkplugRepo.pipelineOfEdgeNode(env.db, p.edge_node.toLowerCase(), p.site_ids && p.site_ids.map((s) => s.toLowerCase()));
  return row && nodeOf(row);
}

type Target = { monitor_id: string; tag_id: string } | typeof SPARKPLUG_REASONS.ambiguousName;

/** Metric names of a node: per device (a registration's slave id) and of the node itself, or why node metrics map nothing. */
export interface MetricNames {
  devices: Map<string, Map<string, Target>>;
  node: Map<string, Target> | string;
}

const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

function add(names: Map<string, Target>, name: string, target: Target): void {
  const known = names.get(name);
  const same = known && typeof known !== "string" && typeof target !== "string" && known.monitor_id === target.monitor_id && known.tag_id === target.tag_id;
  names.set(name, known && !same ? SPARKPLUG_REASONS.ambiguousName : target);
}

/**
 * A device metric is the `tag_name` of a tag of the monitor registered with that slave id, or the
 * `address` of a pipeline tag naming that monitor and tag; a node metric names a tag of the
 * pipeline's only registered monitor. A name two tags answer to is ambiguous, never a guess.
 */
export function metricNamesOf(row: Pick<PipelineRow, "tags" | "registration">, monitors: Map<string, ResolvedMonitor>): MetricNames {
  const byMonitor = new Map<string, Map<string, Target>>();
  const namesOfMonitor = (monitor_id: string) => {
    let names = byMonitor.get(monitor_id);
    if (!names) {
      names = new Map();
      for (const t of monitors.get(monitor_id)?.tags ?? []) add(names, t.tag_name, { monitor_id, tag_id: t.tag_id });
      byMonitor.set(monitor_id, names);
    }
    return names;
  };
  const registered = row.registration.flatMap((r) => {
    const monitor_id = text(r.monitor_id)?.toLowerCase();
    return monitor_id && monitors.has(monitor_id) ? [{ monitor_id, slave_id: r.slave_id === undefined || r.slave_id === null ? null : String(r.slave_id) }] : [];
  });
  for (const t of row.tags) {
    // `moniter_id`: the spec's spelling on File tags.
    const monitor_id = (text(t.monitor_id) ?? text(t.moniter_id))?.toLowerCase();
    const address = t.address === undefined || t.address === null ? undefined : String(t.address);
    const tag_id = text(t.tag_id);
    if (!monitor_id || !address || !tag_id || !monitors.has(monitor_id)) continue;
    add(namesOfMonitor(monitor_id), address, { monitor_id, tag_id });
  }
  const devices = new Map<string, Map<string, Target>>();
  for (const r of registered) if (r.slave_id !== null) devices.set(r.slave_id, namesOfMonitor(r.monitor_id));
  const node =
    registered.length === 1 ? namesOfMonitor(registered[0]!.monitor_id) : registered.length === 0 ? SPARKPLUG_REASONS.noMonitor : SPARKPLUG_REASONS.severalMonitors;
  return { devices, node };
}

/** The reading a metric is, or why it is none. */
export function targetOf(names: MetricNames, device: string | null, name: string): Target | string {
  const scope = device === null ? names.node : names.devices.get(device);
  if (typeof scope === "string") return scope;
  return scope?.get(name) ?? SPARKPLUG_REASONS.unknownName;
}

/** What a node's messages need of its pipeline: where it is, and what its metrics' names are readings of. */
interface NodePipeline {
  place: KeyedPipeline;
  names: MetricNames;
}

/** Per service instance (each replica's env), briefly, as the ingest path keeps its mappings: a message costs no lookup. */
const nodePipelines = new WeakMap<PipelinesEnv, LocalCache<NodePipeline | null>>();

/** The pipeline changed (its registration, its tags) or a monitor's tags did (every pipeline): its metrics' names are looked up again. */
export function forgetNodePipeline(env: PipelinesEnv, pipeline_id?: string): void {
  const cache = nodePipelines.get(env);
  if (pipeline_id) cache?.forget(pipeline_id.toLowerCase());
  else cache?.clear();
}

function nodePipelineOf(env: PipelinesEnv, caller: Caller, pipeline_id: string): Promise<NodePipeline | null> {
  let cache = nodePipelines.get(env);
  if (!cache) {
    cache = new LocalCache({ ttlMs: 5000 });
    nodePipelines.set(env, cache);
  }
  return cache.getOrLoad(pipeline_id, async () => {
    const row = await findPipeline(env.db, pipeline_id, "edge");
    if (!row) return null;
    const monitors = await resolveMonitors(caller, await registeredMonitors(env.db, row.pipeline_id));
    return { place: { pipeline_id: row.pipeline_id, site_id: row.site_id, plant_id: row.plant_id, until: null }, names: metricNamesOf(row, monitors) };
  });
}

/**
 * A node's messages' metrics as readings, in one transaction (`ingestRequests`): named ones
 * mapped to their monitor's tag, the rest rejected with the reason. Each message's id is its
 * idempotency key, so that a QoS 1 redelivery after a lost PUBACK is stored once.
 */
export async function ingestMetrics(env: PipelinesEnv, caller: Caller, p: { pipeline_id: string; messages: SparkplugMessage[] }): Promise<SparkplugIngested[]> {
  for (const m of p.messages) if (m.ts.length !== m.names.length || m.values.length !== m.names.length) throw badRequest(MSG.invalidInput("messages"), "messages");
  const pipeline = await nodePipelineOf(env, caller, p.pipeline_id.toLowerCase());
  if (!pipeline) {
    return p.messages.map((m) => ({ accepted: 0, rejected: m.names.map((name) => ({ device: m.device, name, reason: SPARKPLUG_REASONS.unknownName })), replayed: false }));
  }
  const mapped = p.messages.map((message) => {
    const { device, names, ts, values } = message;
    const readings: Reading[] = [];
    /** The metric (its index in the message) of each reading sent on. */
    const sent: number[] = [];
    const rejected: SparkplugIngested["rejected"] = [];
    for (let i = 0; i < names.length; i++) {
      const target = targetOf(pipeline.names, device, names[i]!);
      if (typeof target === "string") rejected.push({ device, name: names[i]!, reason: target });
      else {
        readings.push({ monitor_id: target.monitor_id, tag_id: target.tag_id, ts: ts[i]!, value: values[i]! });
        sent.push(i);
      }
    }
    const keyed = { key: `sparkplug:${message.message_id}`, fingerprint: createHash("sha256").update(`sparkplug\n${message.message_id}`).digest() };
    return { device, names, readings, sent, rejected, keyed };
  });
  env.count("readings.rejected", { pipeline_id: pipeline.place.pipeline_id }, mapped.reduce((n, m) => n + m.rejected.length, 0));
  const outcomes = await ingestRequests(env, caller, pipeline.place, mapped);
  return outcomes.map((outcome, i) => {
    if (outcome.replayed) return { accepted: 0, rejected: [], replayed: true };
    const { device, names, sent, rejected } = mapped[i]!;
    for (const r of outcome.answer.rejected) rejected.push({ device, name: names[sent[r.index]!]!, reason: r.reason });
    return { accepted: outcome.answer.accepted, rejected, replayed: false };
  });
}

/** The node's pending `action` completes as a gateway's acknowledgement would (`statusAfterAck`); false when none was pending. */
async function completePending(tx: EntityManager, pipeline_id: string, action: "start" | "stop"): Promise<boolean | null> {
  const pending = (await pendingActions(tx, pipeline_id)).find((a) => a.action === action);
  if (!pending) return null;
  const done = await completeAction(tx, pipeline_id, pending.action_id, "completed", Date.now());
  if (done) await setStatus(tx, pipeline_id, statusAfterAck(done.action, "completed"));
  return done !== null;
}

/**
 * NBIRTH: the node is heard; its pending start completes as a gateway's acknowledgement would,
 * or a started pipeline its death left in error runs again.
 */
export async function birth(env: SystemPort, p: { pipeline_id: string; ts: number }): Promise<null> {
  await sparkplugRepo.markNode(env.db, p.pipeline_id, p.ts);
  return resumed(env, p);
}

/**
 * The gateway or source is good: the pending start completes, or a pipeline in error runs again
 * (a node's birth; a collection that went well, services/pipelines/collection.ts, which is no
 * Sparkplug node, so its stops wait for the collector to let go).
 */
export async function resumed(env: SystemPort, p: { pipeline_id: string; ts: number }): Promise<null> {
  await recordHeartbeat(env.db, p.pipeline_id, "gateway", p.ts);
  const moved = await env.db.transaction(async (tx) => (await completePending(tx, p.pipeline_id, "start")) ?? sparkplugRepo.resumeStarted(tx, p.pipeline_id));
  if (moved) await forgetResolved(env);
  return null;
}

/** NDEATH or the will: a running pipeline is in error; the heartbeat keeps when the node was last heard. */
export async function death(env: SystemPort, p: { pipeline_id: string; ts: number }): Promise<null> {
  await recordHeartbeat(env.db, p.pipeline_id, "gateway", p.ts);
  if (await sparkplugRepo.failRunning(env.db, p.pipeline_id)) await forgetResolved(env);
  return null;
}

/**
 * A stop just queued in `tx` (docs/sparkplug.md#stopping): a Sparkplug node's pipeline with no node
 * connected on any replica has nothing to release, and the stop completes now, as its release
 * would complete it; false when it waits (a node connected, or a gateway that is no Sparkplug node).
 */
export async function stopAtOnce(tx: EntityManager, pipeline_id: string, action_id: string, now: number): Promise<boolean> {
  if (!(await sparkplugRepo.noNodeConnected(tx, pipeline_id, SPARKPLUG_PRESENCE))) return false;
  const done = await completeAction(tx, pipeline_id, action_id, "completed", now);
  if (done) await setStatus(tx, pipeline_id, statusAfterAck(done.action, "completed"));
  return done !== null;
}

/** The node let go of its pipeline (docs/sparkplug.md#stopping): its pending stop completes, the pipeline is stopped. */
export async function release(env: SystemPort, p: { pipeline_id: string }): Promise<null> {
  if (await env.db.transaction((tx) => completePending(tx, p.pipeline_id, "stop"))) await forgetResolved(env);
  return null;
}

/** The node was heard between its birth and its death: `heart_beats.gateway` (written at most every few seconds a node). */
export async function heard(env: SystemPort, p: { pipeline_id: string; ts: number }): Promise<null> {
  await recordHeartbeat(env.db, p.pipeline_id, "gateway", p.ts);
  return null;
}

/** The status changed: `resolve`'s cached answers (alerting's no_data asks it) are stale, as after an ack. */
function forgetResolved(env: SystemPort): Promise<void> {
  return env.resolveStale();
}
