/**
 * What ems's domain modules work with (docs/architecture.md, "The service shape"): the database,
 * config's answers as plain async functions (in the caller's scope where they say "visible"),
 * the list's total header and a log. The schema builds one per call: `use(ctx)` for an HTTP
 * operation, `system(caller)` for internal actions, events, streams and jobs.
 */
import type { DataSource, EntityManager } from "typeorm";
import type { Principal } from "../../lib/access";
import type { Caller } from "../../lib/contract";
import { pageOf, type Page } from "../../lib/paging";
import {
  listMonitorIds,
  resolveMonitors,
  retentionCutoffs,
  visibleAsset,
  visibleFunction,
  visibleMonitor,
  type ResolvedAsset,
  type ResolvedFunction,
  type ResolvedMonitor,
  type RetentionCutoff,
} from "../config/contract";

/** The database or one of its transactions: what a repo function takes first. */
export type Queryable = DataSource | EntityManager;

/** config's answers ems reads: names, tags, the site's time zone, scope and retention. */
export interface EmsConfig {
  visibleMonitor(id: string): Promise<ResolvedMonitor | undefined>;
  visibleAsset(id: string): Promise<ResolvedAsset | undefined>;
  visibleFunction(id: string): Promise<ResolvedFunction | undefined>;
  /** The monitors that exist among the ids, by id, whoever's they are. */
  resolveMonitors(ids: string[]): Promise<Map<string, ResolvedMonitor>>;
  /** The monitors of a function or an asset, in the caller's scope. */
  monitorsOf(filter: { asset_id?: string; function_id?: string }): Promise<Map<string, ResolvedMonitor>>;
  retentionCutoffs(monitorIds: string[], now: number): Promise<RetentionCutoff[]>;
}

export interface EmsPort {
  db: DataSource;
  config: EmsConfig;
  /** The page of a list held whole, its total in the X-Total-Count header. */
  page<T>(items: T[], page: Page): T[];
  logger: { info(message: string): void };
}

/** What the schema hands over to build a port: the caller, and the request's meta when it is one. */
export interface EmsPortSource {
  db: DataSource;
  caller: Caller;
  user: Principal;
  meta?: object;
  logger: { info(message: string): void };
}

export function emsPort({ db, caller, user, meta, logger }: EmsPortSource): EmsPort {
  return {
    db,
    config: {
      visibleMonitor: (id) => visibleMonitor(caller, user, id),
      visibleAsset: (id) => visibleAsset(caller, user, id),
      visibleFunction: (id) => visibleFunction(caller, user, id),
      resolveMonitors: (ids) => resolveMonitors(caller, ids),
      monitorsOf: async (filter) => resolveMonitors(caller, await listMonitorIds(caller, filter)),
      retentionCutoffs: (monitorIds, now) => retentionCutoffs(caller, monitorIds, now),
    },
    page: (items, page) => pageOf({ meta: meta ?? {} }, items, page),
    logger,
  };
}
