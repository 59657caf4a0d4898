/**
 * What an operation of the pipelines service works with: its database, its stream client, the
 * per-process caches of the ingest path, and the request's Moleculer context (for calls to
 * config and events). The service builds it; the operation modules stay free of the schema.
 */
import type { ActionSchema, Context, Service, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { Principal } from "../../lib/access";
import type { StreamClient } from "../../mixins/stream.mixin";
import type { Partitions } from "./partitions";
import type { TtlCache } from "./ttl-cache";

export interface KeyedPipeline {
  pipeline_id: string;
  site_id: string;
  plant_id: string;
}

export interface PipelinesEnv {
  db: DataSource;
  streams: StreamClient;
  partitions: Partitions;
  /** sha256(ingest key) in hex → its pipeline. */
  keys: TtlCache<KeyedPipeline | null>;
  /** pipeline_id → monitor_id → tag ids it may send. */
  mappings: TtlCache<Map<string, Set<string>>>;
  /** site_id → retention in days. */
  retention: TtlCache<number>;
  logger: { info(...a: unknown[]): void; warn(...a: unknown[]): void; error(...a: unknown[]): void };
}

export interface PipelineMeta {
  user: Principal;
  ingestKey?: string;
  $responseHeaders?: Record<string, string>;
}

export type Ctx<P = unknown> = Context<P, PipelineMeta>;

/** What the service keeps (the mixins bring `db` and `streams`). */
export interface PipelinesLocals {
  db: DataSource;
  streams: StreamClient;
  env: PipelinesEnv;
  timers: NodeJS.Timeout[];
}

export interface PipelinesMethods {
  /** A periodic job that logs its failures instead of dying, stopped with the service. */
  every(ms: number, name: string, work: () => Promise<unknown>): void;
}

/** `this` in the service's handlers, wherever they are written. */
export type PipelinesThis = Service<ServiceSettingSchema> & PipelinesLocals & PipelinesMethods;

/** A module of the service's actions, spread into its schema's `actions`. */
export type PipelinesActions = Record<string, ActionSchema<PipelinesThis>>;
