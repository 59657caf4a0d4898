/**
 * `PipelinesPort`: everything a domain module of the pipelines service may use, and nothing of
 * Moleculer (docs/architecture.md, "The service shape"). The schema builds one per call: `use(ctx)`
 * for a signed-in caller (401 without one), `system(caller)` for what the service does on its own
 * (internal actions, events, jobs) and for a gateway, which is known by its ingest key, not a user.
 */
import type { Context, ServiceBroker } from "moleculer";
import type { DataSource } from "typeorm";
import type { Principal } from "../../lib/access";
import { auditedWrite, stageAudit, type AuditChange, type AuditStreams } from "../../lib/audit";
import { SharedCache, type LocalCache } from "../../lib/cache";
import type { Caller, Emitter, RequestMeta } from "../../lib/contract";
import { DomainError } from "../../lib/errors";
import { countDomain, type DomainCounter, type DomainLabels } from "../../lib/metrics";
import { pageOf, type Page } from "../../lib/paging";
import type { StagingTx } from "../../lib/streams/outbox";
import type { StreamClient } from "../../mixins/stream.mixin";
import {
  resolveFunction,
  resolveMonitors,
  resolvePlant,
  resolveSite,
  visibleMonitor,
  type ResolvedFunction,
  type ResolvedMonitor,
  type ResolvedPlant,
  type ResolvedSite,
} from "../config/contract";
import { emsClient, type MonitorBytes } from "../ems/contract";
import { pipelinesEvents, type PipelineStreams, type PipelinesEvents } from "./contract";
import { MSG } from "./messages";
import type { Partitions } from "./partitions";

/** The pipeline an ingest key opens. */
export interface KeyedPipeline {
  pipeline_id: string;
  site_id: string;
  plant_id: string;
  /** A key a rotation replaced: until when (epoch ms) it opens the pipeline; null for the current key. */
  until: number | null;
}

/** Emits an event of the pipelines (contract.ts); resolves once it is sent. */
type Emit = <K extends keyof PipelinesEvents & string>(event: K, payload: PipelinesEvents[K]) => Promise<void>;

/** What the service holds while it runs: its database, streams, the ingest path's per-process caches. */
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
  /** Counts a domain fact (lib/metrics.ts). */
  count<N extends DomainCounter>(name: N, labels: DomainLabels<N>, value: number): void;
  /** Emits an event from the service (a port's emits from the request it serves). */
  emit: Emit;
}

/** What config answers, as plain functions. */
export interface ConfigPort {
  site(site_id: string): Promise<ResolvedSite | null>;
  plant(plant_id: string): Promise<ResolvedPlant | null>;
  function(function_id: string): Promise<ResolvedFunction | null>;
  /** The monitors that exist among the ids, by id. */
  monitors(monitor_ids: string[]): Promise<Map<string, ResolvedMonitor>>;
}

/** What ems answers, as plain functions. */
export interface EmsReader {
  /** The bytes ems keeps of each monitor's readings (its raw and compressed key, its rollups). */
  monitorBytes(): Promise<MonitorBytes[]>;
}

/** The service's own port, and a gateway's. */
export interface SystemPort extends PipelinesEnv {
  config: ConfigPort;
  ems: EmsReader;
  /** Every replica forgets what it cached of the pipeline (of every pipeline, without an id). */
  forget(pipeline_id?: string): void;
  /** `resolve`'s cached answers are stale: the cacher forgets them before the write is answered. */
  resolveStale(): Promise<void>;
  /** A gateway's bearer ingest key, as the request carried it. */
  ingestKey: string | undefined;
  /** A header of the answer (none on the bus). */
  setHeader(name: string, value: string): void;
}

/** A signed-in caller's port. */
export interface PipelinesPort extends SystemPort {
  user: Principal;
  /** A monitor the caller may see, or undefined: out of scope answers like missing. */
  visibleMonitor(monitor_id: string): Promise<ResolvedMonitor | undefined>;
  /** Stages the audit entries of changes made in `tx`, as the caller's. */
  audit(tx: StagingTx, changes: AuditChange | AuditChange[]): Promise<void>;
  /** A write of one statement with its audit entry (lib/audit.ts). */
  auditedWrite<T>(changes: AuditChange, write: Parameters<typeof auditedWrite<T>>[4]): Promise<T>;
  /** The page of a list held whole, its total in the answer's X-Total-Count. */
  page<T>(items: T[], page: Page): T[];
}

type Ctx = Context<unknown, RequestMeta>;

const configOf = (caller: Caller): ConfigPort => ({
  site: (id) => resolveSite(caller, id),
  plant: (id) => resolvePlant(caller, id),
  function: (id) => resolveFunction(caller, id),
  monitors: (ids) => resolveMonitors(caller, ids),
});

/** How long the storage route waits for ems (a cluster may run without it: the route answers without its bytes). */
export const EMS_TIMEOUT_MS = 5000;

const emsOf = (caller: Caller): EmsReader => ({
  monitorBytes: async () => (await emsClient.call(caller, "storage.monitors", {}, { timeout: EMS_TIMEOUT_MS, retries: 0 })).monitors,
});

const isEmitter = (caller: Caller): caller is Caller & Emitter => typeof (caller as Partial<Emitter>).emit === "function";

/**
 * The port of the service itself (`caller`: the broker on a job's tick, else the call's context,
 * from which events leave carrying its meta along).
 */
export function systemPort(env: PipelinesEnv, broker: ServiceBroker, caller: Caller): SystemPort {
  const meta = (caller as Partial<Ctx>).meta;
  const from: Emitter = isEmitter(caller) ? caller : broker;
  return {
    ...env,
    config: configOf(caller),
    ems: emsOf(caller),
    emit: (event, payload) => pipelinesEvents.emit(from, event, payload),
    forget: (pipeline_id) => void pipelinesEvents.broadcast(from, "pipelines.changed", pipeline_id ? { pipeline_id } : {}, "pipelines"),
    resolveStale: () => new SharedCache(broker).clean("pipelines.resolve:**"),
    ingestKey: meta?.ingestKey,
    setHeader(name, value) {
      if (meta) meta.$responseHeaders = { ...meta.$responseHeaders, [name]: value };
    },
  };
}

/** The port of a signed-in caller: 401 without one. */
export function userPort(env: PipelinesEnv, ctx: Ctx): PipelinesPort {
  const user = ctx.meta.user as Principal | undefined;
  if (!user) throw new DomainError(401, MSG.invalidCredentials);
  return {
    ...systemPort(env, ctx.broker, ctx),
    user,
    visibleMonitor: (id) => visibleMonitor(ctx, user, id),
    audit: (tx, changes) => stageAudit(env.streams, tx, ctx, changes),
    auditedWrite: (changes, write) => auditedWrite(env.db, env.streams, ctx, changes, write),
    page: (items, page) => pageOf(ctx, items, page),
  };
}

/** What the service does through its broker, as plain functions: count a domain fact, emit an event. */
export const brokerBound = (broker: ServiceBroker): Pick<PipelinesEnv, "count" | "emit"> => ({
  count: (name, labels, value) => countDomain(broker, name, labels, value),
  emit: (event, payload) => pipelinesEvents.emit(broker, event, payload),
});
