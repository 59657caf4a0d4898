/**
 * `AlertingPort`: everything a domain module of the alerting service may use, and nothing of
 * Moleculer (docs/architecture.md, "The service shape"). The schema builds one per call: `use(ctx)`
 * for a signed-in caller (401 without one), `system(ctx)` for what the service does on its own
 * (internal actions, events, jobs: the system acts, its scope is everything).
 */
import type { Context, ServiceBroker } from "moleculer";
import type { DataSource } from "typeorm";
import { scopeOf, type Principal, type Scope } from "../../lib/access";
import { auditedWrite, stageAudit, type AuditChange, type AuditSource, type AuditStreams } from "../../lib/audit";
import type { Caller, RequestMeta } from "../../lib/contract";
import { DomainError } from "../../lib/errors";
import { countDomain, type DomainCounter, type DomainLabels } from "../../lib/metrics";
import { setTotal } from "../../lib/paging";
import type { StagingTx } from "../../lib/streams/outbox";
import type { StreamClient } from "../../mixins/stream.mixin";
import { authClient, type UserContact } from "../auth/contract";
import {
  resolveFunction,
  resolveMonitors,
  resolvePlant,
  resolveSite,
  type ResolvedFunction,
  type ResolvedMonitor,
  type ResolvedPlant,
  type ResolvedSite,
} from "../config/contract";
import { pipelinesClient, type ResolvedPipeline } from "../pipelines/contract";
import { STREAMS, type AlertingStreams, type AlertOpened } from "./contract";
import { MSG } from "./messages";
import { transactional, type Transactional } from "./sql";
import type { SeriesClock } from "./triggers.repo";

/** What the service holds while it runs: its database, streams, and the live path's buffers. */
export interface AlertingEnv {
  db: DataSource;
  /** Opened alerts' notices are staged on the alerts stream through it, audit entries on the audit stream. */
  streams: StreamClient<AlertingStreams & AuditStreams>;
  /** The batch of each pipeline being evaluated: a pipeline's batches run one after another. */
  pipelineTails: Map<string, Promise<unknown>>;
  /** Series clocks of batches that changed no state, written together every CLOCK_FLUSH_MS. */
  pendingClocks: Map<string, SeriesClock>;
  logger: { warn(...a: unknown[]): void; error(...a: unknown[]): void };
}

/** What config answers, as plain functions. */
export interface ConfigPort {
  site(site_id: string): Promise<ResolvedSite | null>;
  plant(plant_id: string): Promise<ResolvedPlant | null>;
  function(function_id: string): Promise<ResolvedFunction | null>;
  /** The monitors that exist among the ids, by id. */
  monitors(monitor_ids: string[]): Promise<Map<string, ResolvedMonitor>>;
}

/**
 * What alerting asks the pipelines service, which is optional: without one to ask, a gateway is
 * unknown (null) and its id stands for its name.
 */
export interface PipelinesPort {
  /** Whether a pipelines service is reachable. */
  available(): boolean;
  /** A gateway, null when unknown or when there is no pipelines service; `fresh` skips the cache. */
  resolve(pipeline_id: string, fresh?: boolean): Promise<ResolvedPipeline | null>;
}

export interface AlertingPort {
  /** The service's database: queries, transactions, the hot path's prepared read. */
  db: Transactional;
  /** The caller; null for the system (an event, a job, another service's call). */
  user: Principal | null;
  /** What the caller may see: everything for the system. */
  scope: Scope;
  config: ConfigPort;
  pipelines: PipelinesPort;
  /** A user as auth knows them, null when unknown. */
  userNamed(username: string): Promise<UserContact | null>;
  /** Stages the audit entries of changes made in `tx`, as the caller's. */
  audit(tx: StagingTx, changes: AuditChange | AuditChange[]): Promise<void>;
  /** A write of one statement with its audit entries (lib/audit.ts). */
  auditedWrite<T>(changes: Parameters<typeof auditedWrite<T>>[3], write: Parameters<typeof auditedWrite<T>>[4]): Promise<T>;
  /** Stages an alert's notice on the alerts stream in `tx` (message id `id`, keyed by its watcher). */
  stageNotice(tx: StagingTx, id: string, notice: AlertOpened): Promise<void>;
  /** Publishes what is staged now rather than at the outbox's next tick (after the commit). */
  flushNotices(): void;
  /** A list's total, in the answer's X-Total-Count (nowhere on the bus). */
  setTotal(total: number): void;
  /** Counts a domain fact (lib/metrics.ts). */
  count<N extends DomainCounter>(name: N, labels: DomainLabels<N>): void;
  /** Runs `work` after the work queued before it under the same key, on this replica. */
  inOrder<T>(key: string, work: () => Promise<T>): Promise<T>;
  /** Series clocks of batches that changed no state, to be written with the next flush. */
  pendingClocks: Map<string, SeriesClock>;
  logger: AlertingEnv["logger"];
}

type Ctx = Context<unknown, Partial<RequestMeta>>;

function inOrder<T>(tails: Map<string, Promise<unknown>>, key: string, work: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  const run = previous.then(work, work);
  const tail = run.catch(() => undefined);
  tails.set(key, tail);
  return run.finally(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
}

/** The port of the service itself (`ctx`: the event's or internal call's context; none on a job's tick). */
export function systemPort(env: AlertingEnv, broker: ServiceBroker, ctx?: Ctx): AlertingPort {
  const caller: Caller = ctx ?? broker;
  const source: AuditSource = ctx ?? { meta: {} };
  const user = ctx?.meta.user ?? null;
  const available = () => broker.registry.actions.isAvailable("pipelines.resolve");
  return {
    db: transactional(env.db),
    user,
    // Internal callers (another service, no user) act for the system.
    scope: user ? scopeOf(user) : { kind: "all" },
    config: {
      site: (id) => resolveSite(caller, id),
      plant: (id) => resolvePlant(caller, id),
      function: (id) => resolveFunction(caller, id),
      monitors: (ids) => resolveMonitors(caller, ids),
    },
    pipelines: {
      available,
      resolve: async (pipeline_id, fresh = false) =>
        available() ? pipelinesClient.call(caller, "resolve", { pipeline_id }, fresh ? { meta: { $cache: false } } : undefined) : null,
    },
    userNamed: (username) => authClient.call(caller, "users.resolve", { username }),
    audit: (tx, changes) => stageAudit(env.streams, tx, source, changes),
    auditedWrite: (changes, write) => auditedWrite(env.db, env.streams, source, changes, write),
    stageNotice: (tx, id, notice) => env.streams.stage(tx, STREAMS.alerts, id, notice, notice.watcher_id),
    flushNotices: () => env.streams.flush(),
    setTotal: (total) => {
      if (ctx) setTotal(ctx, total);
    },
    count: (name, labels) => countDomain(broker, name, labels),
    inOrder: (key, work) => inOrder(env.pipelineTails, key, work),
    pendingClocks: env.pendingClocks,
    logger: env.logger,
  };
}

/** The port of a signed-in caller: 401 without one. */
export function userPort(env: AlertingEnv, ctx: Ctx): AlertingPort {
  if (!ctx.meta.user) throw new DomainError(401, MSG.invalidCredentials);
  return systemPort(env, ctx.broker, ctx);
}
