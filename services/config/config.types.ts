/**
 * The config service as its handlers see it (`this`): the schema's locals and methods, typed once
 * here so that the action modules (sites.actions.ts, monitors.actions.ts, …) are checked against
 * the service the schema (config.service.ts) builds, without importing the schema itself.
 */
import type { ActionSchema, Context, Service, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { AuditEntry, AuditStreams } from "../../lib/audit";
import type { LocalCache, SharedCache, SharedGeneration } from "../../lib/cache";
import type { RequestMeta } from "../../lib/contract";
import type { StreamClient } from "../../mixins/stream.mixin";
import type { ConfigPort } from "./port";

export interface ConfigLocals {
  db: DataSource;
  /** The stream mixin's client: config stages the audit entries of its own changes through its outbox. */
  streams: StreamClient<AuditStreams>;
  /** Appends the entries the `audit` stream delivers to the hash-chained log. */
  auditLog: { append(entries: AuditEntry | AuditEntry[]): Promise<void> };
  /** Cached reads, in the broker's cacher under the current generation (`config.q.<generation>.<key>`). */
  reads: SharedCache;
  /** Every write starts a new one, which puts every cached read out of reach at once, on every replica. */
  generation: SharedGeneration;
  /** Lists also kept in this replica's memory (`cachedList`), all of one generation: `listsGeneration`. */
  lists: LocalCache<object[]>;
  listsGeneration: string;
}

export interface ConfigMethods {
  /** The port of one HTTP operation: the caller from the gateway and its scope. */
  use(ctx: Context<unknown, Partial<RequestMeta>>): ConfigPort;
  /** The port of an internal action or event: unscoped. */
  system(ctx: Context): ConfigPort;
  invalidate(): Promise<void>;
}

/** `this` in the config service's handlers. */
export type ConfigThis = Service<ServiceSettingSchema> & ConfigMethods & ConfigLocals;
/** The actions of one resource module, spread into the service's `actions`. */
export type ConfigActions = Record<string, ActionSchema<ConfigThis>>;
