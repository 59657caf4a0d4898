/**
 * What an operation of the pipelines service works with: its database, its stream client, the
 * per-process caches of the ingest path, and the request's Moleculer context (for calls to
 * config and events). The service builds it; the operation modules stay free of the schema.
 */
import type { ActionSchema, Context, Service, ServiceBroker, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { AuditStreams } from "../../lib/audit";
import type { LocalCache } from "../../lib/cache";
import type { RequestMeta } from "../../lib/contract";
import type { StreamClient } from "../../mixins/stream.mixin";
import type { PipelineStreams } from "./contract";
import type { Partitions } from "./partitions";

export interface KeyedPipeline {
  pipeline_id: string;
  site_id: string;
  plant_id: string;
  /** A key a rotation replaced: until when (epoch ms) it opens the pipeline; null for the current key. */
  until: number | null;
}

export interface PipelinesEnv {
  db: DataSource;
  /** The readings and waveforms streams, and the audit entries of the pipelines' changes. */
  streams: StreamClient<PipelineStreams & AuditStreams>;
  partitions: Partitions;
  /** sha256(ingest key) in hex → its pipeline. */
  keys: LocalCache<KeyedPipeline | null>;
  /** pipeline_id → monitor_id → tag ids it may send. */
  mappings: LocalCache<Map<string, Set<string>>>;
  /** site_id → retention in days. */
  retention: LocalCache<number>;
  logger: { info(...a: unknown[]): void; warn(...a: unknown[]): void; error(...a: unknown[]): void };
  /** The key pipeline secrets are sealed with (lib/secrets.ts). */
  secretsKey: Buffer;
  /** For the domain counters (lib/metrics.ts). */
  broker: ServiceBroker;
}

export type Ctx<P = unknown> = Context<P, RequestMeta>;

/** What the service keeps (the mixins bring `db` and `streams`). */
export interface PipelinesLocals {
  db: DataSource;
  streams: StreamClient<PipelineStreams & AuditStreams>;
  env: PipelinesEnv;
}

/** The service has no methods of its own: its periodic jobs are declared under `jobs` (mixins/periodic.mixin.ts). */
export type PipelinesMethods = Record<never, never>;

/** `this` in the service's handlers, wherever they are written. */
export type PipelinesThis = Service<ServiceSettingSchema> & PipelinesLocals & PipelinesMethods;

/** A module of the service's actions, spread into its schema's `actions`. */
export type PipelinesActions = Record<string, ActionSchema<PipelinesThis>>;
