/**
 * The alerting service as its handlers see it (`this`): the schema's locals and methods, typed
 * once here so that the action and method modules (watchers.actions.ts, alerts.actions.ts,
 * watchers.methods.ts, live.ts) are checked against the same service the schema builds.
 */
import type { ActionSchema, Context, Service, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { Principal, Scope } from "../../lib/access";
import type { BatchOutcome, Describer } from "./evaluation";
import type { Reading } from "./evaluator";
import type { FunctionSummary, GatewaySummary } from "./lookups";
import type { SeriesClock, Transactional } from "./repo";
import type { WatcherBody, WatcherRow, WatcherView } from "./watchers";

export interface Meta {
  user?: Principal;
  $responseHeaders?: Record<string, string>;
}
export type Ctx<P = Record<string, unknown>> = Context<P, Meta>;
export type AnyCtx = Context<unknown, Meta>;

export interface AlertingLocals {
  db: DataSource;
  outboxTimer?: NodeJS.Timeout;
  draining?: Promise<unknown>;
  /** The batch of each pipeline being evaluated: a pipeline's batches run one after another. */
  pipelineTails: Map<string, Promise<unknown>>;
  /** Series clocks of batches that changed no state, written together every CLOCK_FLUSH_MS. */
  pendingClocks: Map<string, SeriesClock>;
  clockTimer?: NodeJS.Timeout;
}

/** Scope checks and watcher writes (watchers.methods.ts). */
export interface WatcherMethods {
  scope(ctx: AnyCtx): Scope;
  requireWrite(ctx: AnyCtx): void;
  functionInScope(ctx: AnyCtx, function_id: string, message: string): Promise<FunctionSummary>;
  watcherInScope(ctx: AnyCtx, watcher_id: string): Promise<WatcherRow>;
  gatewayInScope(ctx: AnyCtx, pipeline_id: string): Promise<GatewaySummary>;
  checkPlacement(ctx: AnyCtx, body: WatcherBody): Promise<FunctionSummary>;
  views(ctx: AnyCtx, rows: WatcherRow[]): Promise<WatcherView[]>;
  saveWatcher(row: WatcherRow, isNew: boolean, existsMessage: string): Promise<void>;
  systemWatcher(ctx: AnyCtx, gateway: GatewaySummary, monitorId: string | null, current: WatcherRow | null): Promise<WatcherRow>;
  syncSystemWatcher(ctx: AnyCtx, pipeline_id: string, monitorId: string | null, asked?: boolean): Promise<string | null>;
}

/** The readings stream's evaluation, the clocks' flush and the outbox's drain (live.ts). */
export interface LiveMethods {
  describer(): Describer;
  evaluate(readings: Reading[], buffered?: boolean): Promise<BatchOutcome>;
  flushClocks(): Promise<void>;
  inPipelineOrder<T>(pipeline_id: string, work: () => Promise<T>): Promise<T>;
  drain(): Promise<void>;
  tx(): Transactional;
}

export type AlertingMethods = WatcherMethods & LiveMethods;
export type AlertingThis = Service<ServiceSettingSchema> & AlertingLocals & AlertingMethods;
/** Actions whose handlers see the service as `this`. */
export type AlertingActions = Record<string, ActionSchema<AlertingThis>>;
