/**
 * What cm's domain modules work with (docs/architecture.md, "The service shape"): the database,
 * the caller, config's answers as plain async functions (in the caller's scope where they say
 * "visible"), the answer's headers and a log. The schema builds one per call: `use(ctx)` for an
 * HTTP operation, `system(caller)` for internal actions, events, streams and jobs.
 */
import type { DataSource, EntityManager } from "typeorm";
import type { Principal } from "../../lib/access";
import type { Caller } from "../../lib/contract";
import { pageOf, type Page } from "../../lib/paging";
import { configReader, type ConfigReader } from "../config/contract";

/** The database or one of its transactions: what a repo function takes first. */
export type Queryable = DataSource | EntityManager;

export interface CmPort {
  db: DataSource;
  user: Principal;
  /** config's answers (services/config/contract.ts). */
  config: ConfigReader;
  /** The page of a list held whole, its total in the X-Total-Count header. */
  page<T>(items: T[], page: Page): T[];
  /** Sets a header of the answer (an internal call has none: nothing happens). */
  setHeader(name: string, value: string): void;
  logger: { info(message: string): void };
}

/** What the schema hands over to build a port: the caller, and the request's meta when it is one. */
export interface CmPortSource {
  db: DataSource;
  caller: Caller;
  user: Principal;
  meta?: { $responseHeaders?: Record<string, string> };
  logger: { info(message: string): void };
}

export function cmPort({ db, caller, user, meta, logger }: CmPortSource): CmPort {
  return {
    db,
    user,
    config: configReader(caller, user),
    page: (items, page) => pageOf({ meta: meta ?? {} }, items, page),
    setHeader(name, value) {
      if (meta) meta.$responseHeaders = { ...meta.$responseHeaders, [name]: value };
    },
    logger,
  };
}
