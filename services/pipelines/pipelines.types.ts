/** The pipelines schema's own types: what it keeps, its methods, `this` in its handlers, a module of its actions. */
import type { ActionSchema, Context, Service, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { AuditStreams } from "../../lib/audit";
import type { Caller, RequestMeta } from "../../lib/contract";
import type { StreamClient } from "../../mixins/stream.mixin";
import type { PipelineStreams } from "./contract";
import type { PipelinesEnv, PipelinesPort, SystemPort } from "./port";

export type Ctx<P = unknown> = Context<P, RequestMeta>;

/** What the service keeps (the mixins bring `db` and `streams`). */
export interface PipelinesLocals {
  db: DataSource;
  streams: StreamClient<PipelineStreams & AuditStreams>;
  env: PipelinesEnv;
}

/** The ports (port.ts); the periodic jobs are declared under `jobs` (mixins/periodic.mixin.ts). */
export interface PipelinesMethods {
  /** A signed-in caller's port: 401 without one. */
  use(ctx: Ctx): PipelinesPort;
  /** The service's own port: internal actions, events, jobs, and a gateway known by its ingest key. */
  system(caller: Caller): SystemPort;
}

/** `this` in the service's handlers, wherever they are written. */
export type PipelinesThis = Service<ServiceSettingSchema> & PipelinesLocals & PipelinesMethods;

/** A module of the service's actions, spread into its schema's `actions`. */
export type PipelinesActions = Record<string, ActionSchema<PipelinesThis>>;
