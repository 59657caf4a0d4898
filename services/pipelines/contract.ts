/**
 * The pipelines service's contract: what other services call (`resolve`, `countForPlant`), the
 * events it emits (monitor registrations, which config and alerting keep a copy of; pipelines'
 * places and whether they received events, which config keeps a copy of), and the
 * durable streams it publishes (`readings`, `waveforms`; alerting, cm and ems read them).
 */
import { eventSender, serviceClient } from "../../lib/contract";

/** What a pipeline is doing: stopped when created; starting/stopping while an action is queued, then running/stopped, or error. */
export const PIPELINE_STATUSES = ["stopped", "starting", "running", "stopping", "error"] as const;
export type PipelineStatus = (typeof PIPELINE_STATUSES)[number];

// ---------------------------------------------------------------- actions

/** `pipelines.resolve`: a pipeline's names, place and the monitors registered to it. */
export interface ResolvedPipeline {
  pipeline_id: string;
  pipeline_name: string;
  data_type: string;
  data_source: string;
  data_source_subtype: string;
  function_id: string | null;
  plant_id: string;
  site_id: string;
  status: PipelineStatus;
  monitor_ids: string[];
}

/** `pipelines.countForPlant`: a plant's pipelines and the events they received (config refuses to delete it while any). */
export interface PlantActivity {
  pipelines: number;
  events: number;
}

export interface PipelinesContract {
  /** Null when no such pipeline (a malformed id included). Cached briefly; a pipeline's write cleans it. */
  resolve: { params: { pipeline_id: string }; reply: ResolvedPipeline | null };
  countForPlant: { params: { plant_id: string }; reply: PlantActivity };
}

export const pipelinesClient = serviceClient<PipelinesContract>("pipelines");

// ---------------------------------------------------------------- events

/** `pipelines.monitor.registered`: a pipeline feeds this monitor (sent again whenever the pipeline changes). */
export interface MonitorRegisteredEvent {
  monitor_id: string;
  pipeline_id: string;
  data_source: string;
  data_source_subtype: string;
  /** The registration's slave id when it is a number, else null. */
  slave_id: number | null;
  data_type: string;
}

/** `pipelines.monitor.unregistered`: the pipeline no longer feeds this monitor (or was deleted). */
export interface MonitorUnregisteredEvent {
  monitor_id: string;
  pipeline_id: string;
}

/** `pipelines.changed`, broadcast to the pipelines replicas only: what they cached of the pipeline (of every one, without an id) is stale. */
export interface PipelinesChanged {
  pipeline_id?: string;
}

/**
 * `pipelines.pipeline.created|updated|deleted`: where a pipeline is, sent once its write is
 * committed (config keeps a copy: a plant's pipelines, the monitor list's `pipeline_id` filter).
 */
export interface PipelineEvent {
  pipeline_id: string;
  site_id: string;
  plant_id: string;
  /** Epoch ms of the write, by the sender's clock: a copy keeps the latest placement, whatever order events arrive in. */
  at: number;
}

/** `pipelines.pipeline.received`: the pipeline has received events (sent on the first ones a process stores for it). */
export interface PipelineReceivedEvent {
  pipeline_id: string;
}

/** A pipeline as `pipelines.pipelines.announced` lists it: its place and whether it has received events. */
export interface AnnouncedPipeline {
  pipeline_id: string;
  site_id: string;
  plant_id: string;
  events: boolean;
}

/**
 * `pipelines.pipelines.announced`: every pipeline whose id is after `after` and up to `through`
 * (null: no bound), as of `at` (epoch ms, read after it). Sent in parts of ordered ids when a
 * pipelines replica starts and whenever a config node joins, so that a copy missing events sent
 * while it was away is made whole: a pipeline in the range but not listed was deleted.
 */
export interface PipelinesAnnounced {
  at: number;
  after: string | null;
  through: string | null;
  pipelines: AnnouncedPipeline[];
}

export interface PipelinesEvents {
  "pipelines.monitor.registered": MonitorRegisteredEvent;
  "pipelines.monitor.unregistered": MonitorUnregisteredEvent;
  "pipelines.changed": PipelinesChanged;
  "pipelines.pipeline.created": PipelineEvent;
  "pipelines.pipeline.updated": PipelineEvent;
  "pipelines.pipeline.deleted": PipelineEvent;
  "pipelines.pipeline.received": PipelineReceivedEvent;
  "pipelines.pipelines.announced": PipelinesAnnounced;
}

export const pipelinesEvents = eventSender<PipelinesEvents>();

// ---------------------------------------------------------------- streams

/** A reading as stored and published: its monitor's id in lower case, epoch ms. */
export interface Reading {
  monitor_id: string;
  tag_id: string;
  /** Epoch ms. */
  ts: number;
  value: number;
}

/** One message of the `readings` stream: the readings one gateway request stored, in order. */
export interface ReadingBatch {
  batch_id: string;
  pipeline_id: string;
  site_id: string;
  plant_id: string;
  readings: Reading[];
}

/** A reading's stable id: its batch and its place in it (the same after any redelivery). */
export const readingId = (batch: Pick<ReadingBatch, "batch_id">, index: number): string => `${batch.batch_id}:${index}`;

/** One message of the `waveforms` stream: one vibration capture. */
export interface WaveformMessage {
  waveform_id: string;
  pipeline_id: string;
  site_id: string;
  plant_id: string;
  monitor_id: string;
  tag: string;
  axis: "x" | "y" | "z";
  /** Epoch ms of the capture. */
  ts: number;
  sample_rate_hz: number;
  samples: number[];
}

/** The streams the pipelines publish, by name: `StreamConsumers<This, PipelineStreams>` types a consumer's handlers. */
export interface PipelineStreams {
  readings: ReadingBatch;
  waveforms: WaveformMessage;
}

export const STREAMS = { readings: "readings", waveforms: "waveforms" } as const satisfies { [K in keyof PipelineStreams]: K };

// ---------------------------------------------------------------- Sparkplug (the mqtt service's calls)

/** An edge pipeline as a Sparkplug edge node: `edge_node` is its MAC address in lower-case hex, no separators (docs/sparkplug.md). */
export interface SparkplugNode {
  pipeline_id: string;
  site_id: string;
  plant_id: string;
  edge_node: string;
}

/** A numeric or Boolean metric as the mqtt service decoded it: `device` null for a node metric; `ts` epoch ms. */
export interface SparkplugMetric {
  device: string | null;
  name: string;
  ts: number;
  value: number;
}

/**
 * A node's message as readings: `message_id` (sha256 of its topic and payload) stores it once.
 * Its metrics go as columns, the i-th metric `names[i]` at `ts[i]` of `values[i]`, all of
 * `device` (null for node metrics): a message of 500 metrics is three arrays on the bus and in
 * the params check, not 500 objects (docs/benchmarks.md, bench:mqtt).
 */
export interface SparkplugMessage {
  message_id: string;
  device: string | null;
  names: string[];
  ts: number[];
  values: number[];
}

/** What a node's readings came to: rejected metrics by name, with the reason (the same reasons as `/_ingest`'s, or the name's). */
export interface SparkplugIngested {
  accepted: number;
  rejected: { device: string | null; name: string; reason: string }[];
  /** The message was stored before (a QoS 1 redelivery): nothing stored again. */
  replayed: boolean;
}

export interface SparkplugContract {
  /** CONNECT: the pipeline whose id and ingest key these are, as an edge node; null when they are wrong. */
  "sparkplug.connect": { params: { pipeline_id: string; ingest_key: string }; reply: SparkplugNode | null };
  /** The host's lookup of an edge node of the plant's broker, among the pipelines of `site_ids` (all when null). */
  "sparkplug.node": { params: { edge_node: string; site_ids: string[] | null }; reply: SparkplugNode | null };
  /** A node's messages in order, in one transaction, each stored once per `message_id`: an answer a message. */
  "sparkplug.readings": { params: { pipeline_id: string; messages: SparkplugMessage[] }; reply: SparkplugIngested[] };
  /** NBIRTH: the pending start completes, a started pipeline runs. */
  "sparkplug.birth": { params: { pipeline_id: string; ts: number }; reply: null };
  /** NDEATH or the will: a running pipeline is in error; `ts` when it was last heard. */
  "sparkplug.death": { params: { pipeline_id: string; ts: number }; reply: null };
  /** The node let go of its pipeline (its connection closed, or its NDEATH on the plant's broker): a pending stop completes. */
  "sparkplug.release": { params: { pipeline_id: string }; reply: null };
  /** The node was heard: `heart_beats.gateway`. */
  "sparkplug.heard": { params: { pipeline_id: string; ts: number }; reply: null };
}

export const sparkplugClient = serviceClient<SparkplugContract>("pipelines");

/**
 * The advisory-lock scope of connected nodes (lib/presence.ts): the mqtt service holds a node's
 * pipeline id under it while the node is connected; the pipelines service completes a stop when
 * it is queued if none does (docs/sparkplug.md#stopping).
 */
export const SPARKPLUG_PRESENCE = "sparkplug-node";

// ---------------------------------------------------------------- collections (the collectors service's calls)

/**
 * Where a pipeline's collection is (docs/collectors.md#pages-and-positions). SQL: `last`, the time
 * value of the last rows stored, as the source's server writes it (null: before its oldest row),
 * and how many rows of each fingerprint at exactly that time were stored, so that rows sharing a
 * time at a page's edge are neither skipped nor stored twice. OPC-UA: `last` null, and `seen` the
 * timestamp (epoch ms) of each node's last value stored, so that a value the server sends again
 * (after a reconnection, or to a collector started again) is not stored twice.
 */
export interface CollectionPosition {
  last: string | null;
  seen: Record<string, number>;
}

/** A tag as a collector reads it: its SQL column, or its OPC-UA node, is a reading of this monitor's tag. */
export interface CollectedTag {
  /** SQL: the column read ("" for other kinds). */
  column_name: string;
  /** OPC-UA: the node id monitored, such as `ns=2;s=Pump1.Pressure` ("" for other kinds). */
  address: string;
  monitor_id: string;
  tag_id: string;
}

/** A started (or stopping) pipeline the service collects itself, its secrets opened. */
export interface CollectedPipeline {
  pipeline_id: string;
  /** `data_source_subtype`: `SQL`, `OPC-UA`. */
  subtype: string;
  /** Its latest action: collect while `start`; `stop` is pending until a collector lets it go. */
  action: "start" | "stop";
  settings: Record<string, unknown>;
  tags: CollectedTag[];
  /** The site's zone: a time without one is read in it. */
  time_zone: string;
  position: CollectionPosition;
  /** How many times a user moved the position (`last_collected` set in an update): part of each page's key. */
  epoch: number;
  /** Changes when its settings, tags or position are changed by a user: a collector on an older one starts again. */
  version: string;
}

/** One page of rows read, as readings: stored with `to` in one transaction, once per `key`, if the position is still `from`. */
export interface CollectedPage {
  pipeline_id: string;
  from: CollectionPosition;
  to: CollectionPosition;
  /** The position's epoch the page was read in: refused (409) like a moved position when it is no longer it. */
  epoch: number;
  key: string;
  readings: Reading[];
  /** Values of the page that were no readings (not numbers, or a time that does not parse). */
  unreadable: number;
}

export interface CollectedAnswer {
  accepted: number;
  rejected: number;
  /** The page was stored before (its key): nothing stored again. */
  replayed: boolean;
}

export interface CollectionContract {
  /** The pipelines to collect of these subtypes: latest action a start, or a stop pending. */
  "collection.pipelines": { params: { subtypes: string[] }; reply: CollectedPipeline[] };
  /** 409 when the position is no longer `from` (another collector, or a user, moved it): nothing stored. */
  "collection.page": { params: CollectedPage; reply: CollectedAnswer };
  /** A good collection: the pending start completes, or an errored pipeline runs again. */
  "collection.running": { params: { pipeline_id: string; ts: number }; reply: null };
  /** The source failed: the pipeline is in error, its latest action says why. */
  "collection.failed": { params: { pipeline_id: string; cause: string }; reply: null };
  /** A collection ran: `heart_beats.gateway`. */
  "collection.heard": { params: { pipeline_id: string; ts: number }; reply: null };
  /** The collector let go of a pipeline whose stop is pending: it completes. */
  "collection.stopped": { params: { pipeline_id: string }; reply: null };
}

export const collectionClient = serviceClient<CollectionContract>("pipelines");
