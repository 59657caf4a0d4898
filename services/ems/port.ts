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
import { configReader, type ConfigReader } from "../config/contract";

/** The database or one of its transactions: what a repo function takes first. */
export type Queryable = DataSource | EntityManager;

export interface EmsPort {
  db: DataSource;
  /** config's answers (services/config/contract.ts). */
  config: ConfigReader;
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
    config: configReader(caller, user),
    page: (items, page) => pageOf({ meta: meta ?? {} }, items, page),
    logger,
  };
}
