/**
 * Sparkplug B 3.0 as pure functions (docs/sparkplug.md): topics, payloads, and a node's session
 * (births, aliases, `seq` and `bdSeq`) turning each message into readings, a birth or a death,
 * and whether to ask the node for a rebirth. No broker, no network: test/unit reaches them.
 */
import { get as sparkplugCodec } from "sparkplug-payload";
import type { UMetric, UPayload } from "sparkplug-payload/lib/sparkplugbpayload";
import type { SparkplugMetric } from "../pipelines/contract";

export const NAMESPACE = "spBv1.0";
export const STATE_TOPICS = `${NAMESPACE}/STATE/+`;
export const REBIRTH_METRIC = "Node Control/Rebirth";

const NODE_TYPES = ["NBIRTH", "NDEATH", "NDATA", "NCMD"] as const;
const DEVICE_TYPES = ["DBIRTH", "DDEATH", "DDATA", "DCMD"] as const;
export type MessageType = (typeof NODE_TYPES)[number] | (typeof DEVICE_TYPES)[number];

/** What an edge node publishes; the commands (`NCMD`, `DCMD`) are the host's to send. */
export const NODE_PUBLISHES: readonly MessageType[] = ["NBIRTH", "NDEATH", "NDATA", "DBIRTH", "DDEATH", "DDATA"];

export interface Topic {
  group: string;
  type: MessageType;
  /** As the topic has it; compared in lower case. */
  edge_node: string;
  device: string | null;
}

/** `spBv1.0/<group>/<type>/<edge_node>[/<device>]`, or null for any other topic (STATE included). */
export function parseTopic(topic: string): Topic | null {
  const [ns, group, type, edge_node, device, ...rest] = topic.split("/");
  if (ns !== NAMESPACE || !group || !type || !edge_node || rest.length > 0) return null;
  if ((NODE_TYPES as readonly string[]).includes(type) && device === undefined) return { group, type: type as MessageType, edge_node, device: null };
  if ((DEVICE_TYPES as readonly string[]).includes(type) && device) return { group, type: type as MessageType, edge_node, device };
  return null;
}

export const topicText = (t: Topic): string => `${NAMESPACE}/${t.group}/${t.type}/${t.edge_node}${t.device === null ? "" : `/${t.device}`}`;

/** A topic filter a node may subscribe to: the hosts' STATE, or anything under its own node id. */
export function mayNodeSubscribe(filter: string, edge_node: string): boolean {
  const [ns, group, type, node, ...rest] = filter.split("/");
  if (ns !== NAMESPACE) return false;
  if (group === "STATE") return type !== undefined && type !== "#" && node === undefined;
  return group !== undefined && group !== "#" && type !== undefined && type !== "#" && node?.toLowerCase() === edge_node && rest.length <= 1;
}

const codec = sparkplugCodec(NAMESPACE)!;

export const decodePayload = (payload: Uint8Array): UPayload => codec.decodePayload(payload);
export const encodePayload = (payload: UPayload): Buffer => Buffer.from(codec.encodePayload(payload));

/** The `NCMD` that asks a node for a rebirth. */
export function rebirthCommand(topic: Pick<Topic, "group" | "edge_node">, now: number): { topic: string; payload: Buffer } {
  return {
    topic: `${NAMESPACE}/${topic.group}/NCMD/${topic.edge_node}`,
    payload: encodePayload({ timestamp: now, metrics: [{ name: REBIRTH_METRIC, type: "Boolean", value: true }] }),
  };
}

/** Protobuf's 64-bit integers arrive as `Long`s. */
interface LongLike {
  toNumber(): number;
}
const isLong = (v: unknown): v is LongLike => typeof v === "object" && v !== null && typeof (v as LongLike).toNumber === "function";

export function numberOf(v: unknown): number | null {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "bigint") return Number(v);
  if (isLong(v)) return v.toNumber();
  return null;
}

/** A node's session as the host keeps it between messages. */
export interface NodeState {
  born: boolean;
  bdSeq: number | null;
  /** The last `seq` received (0-255). */
  seq: number | null;
  /** alias → metric name, declared by the births. */
  aliases: Map<string, string>;
}

export const newNodeState = (): NodeState => ({ born: false, bdSeq: null, seq: null, aliases: new Map() });

export interface Received {
  state: NodeState;
  readings: SparkplugMetric[];
  /** Metrics that are no reading: of another type, or null. */
  ignored: number;
  event: "birth" | "death" | null;
  /** Why to ask for a rebirth, or null. */
  rebirth: string | null;
}

/** The metric types that are readings (a Boolean is 1 or 0); a DateTime, text or data set is not. */
const READING_TYPES = new Set(["Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Float", "Double", "Boolean"]);

/** Sparkplug's own metrics, never readings. */
const isOwnMetric = (name: string): boolean => name === "bdSeq" || name.startsWith("Node Control/");

function bdSeqOf(metrics: UMetric[]): number | null {
  const m = metrics.find((x) => x.name === "bdSeq");
  return m ? numberOf(m.value) : null;
}

/**
 * A message of the node, given its session before: the session after, the readings it carries
 * (numeric and Boolean metrics, at the metric's timestamp else the payload's), the birth or
 * death it is, and whether the session lost track (a `seq` gap, an unknown alias, data before a
 * birth). A stale `NDEATH` (another session's `bdSeq`) is ignored. Nothing received is dropped
 * for a rebirth: what can be named is kept.
 */
export function receive(before: NodeState, topic: Topic, payload: UPayload, now: number): Received {
  const metrics = payload.metrics ?? [];
  const seq = numberOf(payload.seq);
  const out: Received = { state: before, readings: [], ignored: 0, event: null, rebirth: null };
  if (topic.type === "NDEATH") {
    const bdSeq = bdSeqOf(metrics);
    if (before.bdSeq !== null && bdSeq !== null && bdSeq !== before.bdSeq) return out;
    out.state = { ...before, born: false };
    out.event = "death";
    return out;
  }
  let state = before;
  if (topic.type === "NBIRTH") {
    state = { born: true, bdSeq: bdSeqOf(metrics), seq, aliases: new Map() };
    out.event = "birth";
  } else {
    if (!before.born) out.rebirth = "data before a birth";
    else if (seq !== null && before.seq !== null && seq !== (before.seq + 1) % 256) out.rebirth = `seq ${seq} after ${before.seq}`;
    state = { ...before, seq: seq ?? before.seq };
  }
  if (topic.type === "NBIRTH" || topic.type === "DBIRTH") {
    const aliases = new Map(state.aliases);
    for (const m of metrics) if (m.name && m.alias !== undefined && m.alias !== null) aliases.set(String(numberOf(m.alias)), m.name);
    state = { ...state, aliases };
  }
  out.state = state;
  if (topic.type === "DDEATH") return out;
  const payloadTs = numberOf(payload.timestamp) ?? now;
  for (const m of metrics) {
    const alias = m.alias === undefined || m.alias === null ? undefined : String(numberOf(m.alias));
    const name = m.name || (alias === undefined ? undefined : state.aliases.get(alias));
    if (!name) {
      out.rebirth ??= `unknown alias ${alias ?? "(none)"}`;
      continue;
    }
    if (isOwnMetric(name)) continue;
    const value = READING_TYPES.has(m.type) ? numberOf(m.value) : null;
    if (value === null) {
      out.ignored++;
      continue;
    }
    out.readings.push({ device: topic.device, name, ts: numberOf(m.timestamp) ?? payloadTs, value });
  }
  return out;
}
