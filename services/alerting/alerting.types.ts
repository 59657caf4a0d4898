/**
 * The alerting service as its handlers see it (`this`): the schema's locals and methods, typed
 * once here so that the action and method modules (watchers.actions.ts, alerts.actions.ts,
 * watchers.methods.ts, live.ts) are checked against the same service the schema builds.
 */
import type { ActionSchema, Context, Service, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { Scope } from "../../lib/access";
import type { AuditStreams } from "../../lib/audit";
import type { RequestMeta } from "../../lib/contract";
import type { StreamClient } from "../../mixins/stream.mixin";
import type { ResolvedFunction } from "../config/contract";
import type { ResolvedPipeline } from "../pipelines/contract";
import type { AlertingStreams } from "./contract";
import type { BatchOutcome, Describer } from "./evaluation";
import type { Reading } from "./evaluator";
import type { Transactional } from "./sql";
import type { SeriesClock } from "./triggers.repo";
import type { WatcherBody, WatcherView } from "./watchers";
import type { WatcherRow } from "./watchers.repo";

/** The gateway's meta; events and other services' calls carry no user (they act for the system). */
export type Ctx<P = Record<string, unknown>> = Context<P, Partial<RequestMeta>>;
export type AnyCtx = Context<unknown, Partial<RequestMeta>>;

export interface AlertingLocals {
  db: DataSource;
  /** The stream mixin's client: opened alerts' notices are staged on the alerts stream through it, audit entries on the audit stream. */
  streams: StreamClient<AlertingStreams & AuditStreams>;
  /** The batch of each pipeline being evaluated: a pipeline's batches run one after another. */
  pipelineTails: Map<string, Promise<unknown>>;
  /** Series clocks of batches that changed no state, written together every CLOCK_FLUSH_MS. */
  pendingClocks: Map<string, SeriesClock>;
}

/** Who writes a watcher (the request), and the watcher as it was (null: a new one), for the audit trail. */
export interface WatcherAudit {
  ctx: AnyCtx;
  before: WatcherRow | null;
}

/** Scope checks and watcher writes (watchers.methods.ts). */
export interface WatcherMethods {
  scope(ctx: AnyCtx): Scope;
  functionInScope(ctx: AnyCtx, function_id: string, message: string): Promise<ResolvedFunction>;
  watcherInScope(ctx: AnyCtx, watcher_id: string): Promise<WatcherRow>;
  gatewayInScope(ctx: AnyCtx, pipeline_id: string): Promise<ResolvedPipeline>;
  checkPlacement(ctx: AnyCtx, body: WatcherBody): Promise<ResolvedFunction>;
  views(ctx: AnyCtx, rows: WatcherRow[]): Promise<WatcherView[]>;
  saveWatcher(row: WatcherRow, isNew: boolean, existsMessage: string, audit: WatcherAudit): Promise<void>;
  systemWatcher(ctx: AnyCtx, gateway: ResolvedPipeline, monitorId: string | null, current: WatcherRow | null): Promise<WatcherRow>;
  syncSystemWatcher(ctx: AnyCtx, pipeline_id: string, monitorId: string | null, asked?: boolean): Promise<string | null>;
}

/** The readings stream's evaluation and the clocks' flush (live.ts). */
export interface LiveMethods {
  describer(): Describer;
  evaluate(readings: Reading[], buffered?: boolean): Promise<BatchOutcome>;
  flushClocks(): Promise<void>;
  inPipelineOrder<T>(pipeline_id: string, work: () => Promise<T>): Promise<T>;
  tx(): Transactional;
}

export type AlertingMethods = WatcherMethods & LiveMethods;
export type AlertingThis = Service<ServiceSettingSchema> & AlertingLocals & AlertingMethods;
/** Actions whose handlers see the service as `this`. */
export type AlertingActions = Record<string, ActionSchema<AlertingThis>>;
