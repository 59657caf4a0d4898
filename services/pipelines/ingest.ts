/**
 * The ingestion API: a gateway, known by its bearer
 * ingest key, sends readings, waveforms and heartbeats, and polls and acks its actions.
 *
 * A reading answered 200 is durable: the batch, its counters and its stream message are one
 * transaction, and the message leaves through the outbox (mixins/stream.mixin.ts). With an
 * `Idempotency-Key`, the key and the answer are in that transaction too (idempotency.ts).
 */
import { badRequest, unauthorized } from "../../lib/errors";
import { config } from "../../lib/config";
import { isId, newId } from "../../lib/ids";
import type { Caller } from "../../lib/contract";
import { DEFAULT_RETENTION_DAYS, resolveMonitors, resolveSite } from "../config/contract";
import { received } from "./announcements";
import { claimKey, type Ingested, type KeyedRequest, type Replay } from "./idempotency";
import { MSG } from "./messages";
import { addEvents, findByKeyHash, findPipeline } from "./pipelines.repo";
import type { KeyedPipeline, PipelinesEnv, SystemPort } from "./port";
import { insertReadings } from "./readings.repo";
import { registeredMonitors } from "./registrations.repo";
import { checkReadings, type Rejection, FUTURE_SLACK_MS, hashIngestKey, MAX_READINGS, mappingOf } from "./rules";
import { STREAMS, type Reading, type ReadingBatch, type WaveformMessage } from "./contract";
import { DAY_MS, daysOf, isNoPartition } from "./storage";
import type { EntityManager } from "typeorm";
import { insertWaveform } from "./waveforms.repo";

/** How many of a batch's readings `latest_event` shows. */
const LATEST_EVENTS = 5;

/**
 * The pipeline an ingest key opens now, or null: its current key, or the key a rotation replaced
 * until INGEST_KEY_GRACE_S after the rotation. Every front door of the ingestion (the HTTP routes
 * here, an MQTT one later) asks this one function.
 */
export async function pipelineOfIngestKey(env: PipelinesEnv, key: string | undefined, now = Date.now()): Promise<KeyedPipeline | null> {
  if (!key || key.length > 200) return null;
  const hash = hashIngestKey(key);
  const pipeline = await env.keys.getOrLoad(hash.toString("hex"), async () => {
    const row = await findByKeyHash(env.db, hash);
    if (!row) return null;
    const until = row.ingest_key_hash.equals(hash) ? null : Number(row.previous_key_until ?? 0);
    return { pipeline_id: row.pipeline_id, site_id: row.site_id, plant_id: row.plant_id, until };
  });
  // Cached entries are checked too: a replaced key stops at its instant, not a cache lifetime later.
  return pipeline && (pipeline.until === null || pipeline.until > now) ? pipeline : null;
}

/** The pipeline the request's bearer key opens, which must be the one in the path; 401 otherwise. */
export async function authenticate(port: SystemPort, pipeline_id: string): Promise<KeyedPipeline> {
  const pipeline = await pipelineOfIngestKey(port, port.ingestKey);
  if (!pipeline || pipeline.pipeline_id !== String(pipeline_id).toLowerCase()) throw unauthorized(MSG.invalidIngestKey);
  return pipeline;
}

/** What this replica cached of a pipeline (of every one, without an id) is stale: its keys, its mapping, the sites' retention. */
export function forgetPipeline(env: PipelinesEnv, pipeline_id?: string): void {
  if (!pipeline_id) {
    env.mappings.clear();
    env.retention.clear();
    return;
  }
  env.mappings.forget(pipeline_id);
  env.keys.forgetWhere((p: KeyedPipeline | null) => p?.pipeline_id === pipeline_id);
}

const fresh = <A>(answer: A): Ingested<A> => ({ answer, replayed: false });
const again = (replay: Replay): Ingested<never> => ({ answer: replay.answer, replayed: true });

/** Which tags of which monitors this pipeline may send (cached briefly; cleared when the pipeline changes). */
async function mappingFor(env: PipelinesEnv, caller: Caller, pipeline_id: string): Promise<Map<string, Set<string>>> {
  return env.mappings.getOrLoad(pipeline_id, async () => {
    const row = await findPipeline(env.db, pipeline_id);
    if (!row) return new Map();
    const monitors = await resolveMonitors(caller, [...(await registeredMonitors(env.db, pipeline_id))]);
    return mappingOf(row.tags, row.registration, [...monitors.values()]);
  });
}

async function retentionDays(env: PipelinesEnv, caller: Caller, site_id: string): Promise<number> {
  return env.retention.getOrLoad(site_id, async () => {
    try {
      return (await resolveSite(caller, site_id))?.retention_period ?? DEFAULT_RETENTION_DAYS;
    } catch {
      return DEFAULT_RETENTION_DAYS;
    }
  });
}

export interface ReadingsInput {
  pipeline_id: string;
  readings: unknown[];
}

/** What a readings request answers: how many readings were kept, and each rejected one with its reason. */
export interface IngestAnswer {
  accepted: number;
  rejected: Rejection[];
}

/** 400 for a batch past MAX_READINGS. A front door may check it before it authenticates, as HTTP does. */
export function checkBatchSize(readings: unknown[]): void {
  if (readings.length > MAX_READINGS) throw badRequest(MSG.tooManyReadings);
}

/**
 * The ingestion of readings, whichever way they came in (HTTP /_ingest, MQTT, a collector): the
 * pipeline already known by its ingest key, the readings as sent, and the request's idempotency
 * key with its body's fingerprint (idempotency.ts, keyedRequest). Each reading is kept or
 * rejected with its reason; the kept ones, the pipeline's counters, their stream messages and
 * the key are one transaction. `caller` asks config for the mapping's monitors and the site's
 * retention.
 */
export async function ingestReadings(
  env: PipelinesEnv,
  caller: Caller,
  pipeline: KeyedPipeline,
  readings: unknown[],
  keyed?: KeyedRequest,
): Promise<Ingested<IngestAnswer>> {
  return (await ingestRequests(env, caller, pipeline, [{ readings, keyed }]))[0]!;
}

/** One request of several stored together: its readings as sent, and its idempotency key. */
export interface ReadingsRequest {
  readings: unknown[];
  keyed?: KeyedRequest;
}

/**
 * Several requests of one pipeline (a Sparkplug node's messages that waited behind each other),
 * in order, in one transaction: each checked, keyed and answered as `ingestReadings` would, a
 * request whose key was used before storing nothing and answering its first answer.
 */
export async function ingestRequests(
  env: PipelinesEnv,
  caller: Caller,
  pipeline: KeyedPipeline,
  requests: ReadingsRequest[],
  alsoStore?: AlsoStore,
): Promise<Ingested<IngestAnswer>[]> {
  for (const r of requests) checkBatchSize(r.readings);
  const mapping = await mappingFor(env, caller, pipeline.pipeline_id);
  const now = Date.now();
  const days = await retentionDays(env, caller, pipeline.site_id);
  const checked = requests.map((r) => {
    const { accepted, rejected } = checkReadings(r.readings, mapping, { oldest: now - days * DAY_MS, newest: now + FUTURE_SLACK_MS });
    const answer: IngestAnswer = { accepted: accepted.length, rejected };
    return { accepted, answer, keyed: r.keyed && { request: r.keyed, answer } };
  });
  // With a key, even a batch with nothing to keep records its answer: a repeat answers it as it was.
  const toStore = checked.filter((c) => c.accepted.length > 0 || c.keyed);
  const after = alsoStore && ((tx: EntityManager, replayed: boolean[]) => alsoStore(tx, toStore.map((c, i) => ({ answer: c.answer, replayed: replayed[i] ?? false }))));
  const replays = toStore.length > 0 || after ? await storeBatch(env, pipeline, toStore, after) : [];
  return checked.map((c) => {
    const replay = replays[toStore.indexOf(c)];
    if (replay) return again(replay);
    // Counted once the batch is durable: a write that failed is answered 500 and sent again whole.
    env.count("readings.ingested", { pipeline_id: pipeline.pipeline_id }, c.accepted.length);
    env.count("readings.rejected", { pipeline_id: pipeline.pipeline_id }, c.answer.rejected.length);
    return fresh(c.answer);
  });
}

/**
 * What a front door stores with the readings, in their transaction, after them (a collector's
 * position): given each request's answer and whether its key was used before. What it throws
 * rolls the whole transaction back.
 */
export type AlsoStore = (tx: EntityManager, stored: { answer: IngestAnswer; replayed: boolean }[]) => Promise<void>;

/** A keyed request as a store sees it: the key to claim, and the answer to record with it. */
interface KeyedStore {
  request: KeyedRequest;
  answer: unknown;
}

/**
 * Readings per stream message: a full request (MAX_READINGS, UUID ids) is about 1.5 MB of JSON,
 * past NATS's default 1 MB payload, and a message the stream refuses would hold the outbox up.
 */
export const STREAM_BATCH_READINGS = 2000;

/** A request as a store sees it: the readings it keeps, and its key with the answer to record. */
interface StoredRequest {
  accepted: Reading[];
  keyed?: KeyedStore;
}

/**
 * The requests' readings, their stream messages (one batch each, in order), the pipeline's
 * counters and the requests' keys, in one transaction; per request, what its key's first request
 * answered when it was used before (nothing of that request is stored then).
 */
async function storeBatch(
  env: PipelinesEnv,
  pipeline: KeyedPipeline,
  requests: StoredRequest[],
  alsoStore?: (tx: EntityManager, replayed: boolean[]) => Promise<void>,
): Promise<(Replay | undefined)[]> {
  const all = requests.flatMap((r) => r.accepted);
  await env.partitions.ensure(env.db, daysOf(all));
  const write = () =>
    env.db.transaction(async (tx) => {
      // First: a repeat stops here, before it has written anything.
      const replays: (Replay | undefined)[] = [];
      for (const r of requests) replays.push(r.keyed && (await claimKey(tx, pipeline.pipeline_id, r.keyed.request, r.keyed.answer)));
      const readings = requests.flatMap((r, i) => (replays[i] ? [] : r.accepted));
      for (let i = 0; i < readings.length; i += STREAM_BATCH_READINGS) {
        const part = readings.slice(i, i + STREAM_BATCH_READINGS);
        const batch: ReadingBatch = { batch_id: newId(), pipeline_id: pipeline.pipeline_id, site_id: pipeline.site_id, plant_id: pipeline.plant_id, readings: part };
        await insertReadings(tx, batch, batch.readings, config().historyRollups);
        // Keyed by pipeline: its batches are evaluated in the order stored, whichever replica takes them.
        await env.streams.stage(tx, STREAMS.readings, batch.batch_id, batch, batch.pipeline_id);
      }
      if (readings.length > 0) await addEvents(tx, pipeline.pipeline_id, readings.length, readings.slice(-LATEST_EVENTS));
      if (alsoStore) await alsoStore(tx, replays.map((r) => r !== undefined));
      return { replays, stored: readings.length };
    });
  let written: Awaited<ReturnType<typeof write>>;
  try {
    written = await write();
  } catch (err) {
    if (!isNoPartition(err)) throw err;
    // A partition this process believed in is gone (another replica's retention run): make it again.
    await env.partitions.refresh(env.db);
    await env.partitions.ensure(env.db, daysOf(all));
    written = await write();
  }
  if (written.replays.some((r) => !r)) env.streams.flush();
  if (written.stored > 0) await received(env, pipeline.pipeline_id);
  return written.replays;
}

export interface WaveformInput {
  pipeline_id: string;
  monitor_id: string;
  tag: string;
  axis: "x" | "y" | "z";
  ts: number;
  sample_rate_hz: number;
  samples: number[];
}

/**
 * The ingestion of a vibration capture, whichever way it came in: the pipeline known by its
 * ingest key, the capture (its `pipeline_id` is the pipeline's), and the request's idempotency
 * key with its body's fingerprint. The capture, its stream message, the counters and the key are
 * one transaction.
 */
export async function ingestWaveform(
  env: PipelinesEnv,
  caller: Caller,
  pipeline: KeyedPipeline,
  p: Omit<WaveformInput, "pipeline_id">,
  keyed?: KeyedRequest,
): Promise<Ingested<{ id: string }>> {
  if (!isId(p.monitor_id)) throw badRequest(MSG.invalidInput("monitor_id"), "monitor_id");
  // The bound readings have: a capture from a clock far ahead would stand as the latest for good.
  if (p.ts > Date.now() + FUTURE_SLACK_MS) throw badRequest(MSG.waveformInFuture);
  const mapping = await mappingFor(env, caller, pipeline.pipeline_id);
  const monitor_id = p.monitor_id.toLowerCase();
  if (!mapping.has(monitor_id)) throw badRequest(MSG.monitorNotMapped);
  const message: WaveformMessage = {
    waveform_id: newId(),
    pipeline_id: pipeline.pipeline_id,
    site_id: pipeline.site_id,
    plant_id: pipeline.plant_id,
    monitor_id,
    tag: p.tag,
    axis: p.axis,
    ts: p.ts,
    sample_rate_hz: p.sample_rate_hz,
    samples: p.samples,
  };
  const answer = { id: message.waveform_id };
  const replay = await env.db.transaction(async (tx) => {
    const first = keyed && (await claimKey(tx, pipeline.pipeline_id, keyed, answer));
    if (first) return first;
    await insertWaveform(tx, message, Date.now());
    await env.streams.stage(tx, STREAMS.waveforms, message.waveform_id, message, message.pipeline_id);
    await addEvents(tx, pipeline.pipeline_id, 1, [{ monitor_id, tag: p.tag, axis: p.axis, ts: p.ts, samples: p.samples.length }]);
    return undefined;
  });
  if (replay) return again(replay);
  env.streams.flush();
  await received(env, pipeline.pipeline_id);
  return fresh(answer);
}
