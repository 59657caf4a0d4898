/**
 * `AuthPort`: everything auth's domain modules (users.ts, otp.ts, tokens.ts, run-tokens.ts,
 * credentials.ts, lockout.ts) may use (docs/architecture.md, "The service shape"): the database,
 * the caller, the audit trail staged in auth's outbox, the credential cache and its broadcast,
 * auth's user events and announcements, and the notifier's and config's actions as plain async functions. Built per
 * call by the schema's `use(ctx)` (an HTTP caller, 401 without one) or `system(ctx)`.
 */
import type { KeyObject } from "node:crypto";
import type { Context, ServiceBroker } from "moleculer";
import type { DataSource, EntityManager } from "typeorm";
import type { Principal } from "../../lib/access";
import { auditedWrite, stageAudit, type AuditChange, type AuditStreams } from "../../lib/audit";
import type { SharedCache } from "../../lib/cache";
import type { RequestMeta } from "../../lib/contract";
import { DomainError } from "../../lib/errors";
import { setTotal } from "../../lib/paging";
import type { StagingTx } from "../../lib/streams/outbox";
import type { RequestLimit } from "../../lib/throttle";
import type { StreamClient } from "../../mixins/stream.mixin";
import { resolvePlant, resolveSite, type ResolvedPlant, type ResolvedSite } from "../config/contract";
import { notifierClient, type EmailSendParams } from "../notifier/contract";
import { authEvents, type AuthEvents, type CredentialsChanged, type UsersAnnounced } from "./contract";
import { MSG } from "./messages";

/** The database, or a transaction of it: what every repo function takes first. */
export type Queryable = DataSource | EntityManager;

/** What an audit entry's changes may be: given, or made from the write's result (null: nothing to record). */
export type AuditChanges<T> = AuditChange | AuditChange[] | ((result: T) => AuditChange | AuditChange[] | null);

export interface PortLogger {
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

export interface AuthPort {
  db: DataSource;
  logger: PortLogger;
  /** The key of the fingerprints under which verified credentials are cached; new at each start. */
  credentialSecret: KeyObject;
  /** Verified credentials, in the broker's cacher (credentials.ts, `credentialKey`). */
  cache: SharedCache;
  /** OTP requests per email (docs/security.md). */
  otpLimit: RequestLimit;
  /** Stages the request's audit entries in the transaction `tx` (lib/audit.ts). */
  stageAudit(tx: StagingTx, changes: AuditChange | AuditChange[]): Promise<void>;
  /** A write and its audit entries, committed together (lib/audit.ts, `auditedWrite`). */
  auditedWrite<T>(changes: AuditChanges<T>, write: (db: Queryable) => Promise<T>): Promise<T>;
  /** Broadcasts `auth.credentials.changed` to every api and auth replica. */
  credentialsChanged(change: CredentialsChanged): Promise<void>;
  /**
   * Emits `auth.user.created|updated|removed` once the write is committed, awaited, so that in one
   * process the notifier's copy of the contacts is current when the write answers; a bus that
   * fails is logged, as the write stands and the next announcement carries it.
   */
  userChanged<K extends "auth.user.created" | "auth.user.updated" | "auth.user.removed">(event: K, user: AuthEvents[K]): Promise<void>;
  /** Emits one part of `auth.users.announced` (announcements.ts). */
  usersAnnounced(part: UsersAnnounced): Promise<void>;
  /** Hands an email to the notifier, which records it and delivers it behind (`notifier.email.send`). */
  sendEmail(email: EmailSendParams): Promise<void>;
  resolveSite(site_id: string): Promise<ResolvedSite | null>;
  resolvePlant(plant_id: string): Promise<ResolvedPlant | null>;
}

/** The port of an HTTP request: who calls, and the API token it signed in with, if any. */
export interface AuthRequestPort extends AuthPort {
  caller: Principal;
  token: RequestMeta["token"];
  /** A list's total, answered in the X-Total-Count header. */
  setTotal(total: number): void;
}

/** The schema's locals a port is built from (auth.types.ts, `AuthLocals`). */
export interface AuthPortSource {
  broker: ServiceBroker;
  logger: PortLogger;
  db: DataSource;
  credentialSecret: KeyObject;
  cache: SharedCache;
  /** The stream mixin's client: audit entries are staged through auth's outbox, in the change's transaction. */
  streams: StreamClient<AuditStreams>;
  otpLimit: RequestLimit;
}

export type AuthCtx = Context<unknown, Partial<RequestMeta>>;

/** `system(ctx)`: internal actions, events and start-up; the context (or the broker) carries calls and the audit's request id. */
export function systemPort(self: AuthPortSource, ctx: AuthCtx | ServiceBroker): AuthPort {
  const source = "meta" in ctx ? ctx : { requestID: null, meta: {} };
  return {
    db: self.db,
    logger: self.logger,
    credentialSecret: self.credentialSecret,
    cache: self.cache,
    otpLimit: self.otpLimit,
    stageAudit: (tx, changes) => stageAudit(self.streams, tx, source, changes),
    auditedWrite: (changes, write) => auditedWrite(self.db, self.streams, source, changes, write),
    // A broadcast, not an emit: every api replica caches principals of its own and must drop them all.
    credentialsChanged: (change) => authEvents.broadcast(self.broker, "auth.credentials.changed", change),
    userChanged: (event, user) => authEvents.emit(ctx, event, user).catch((err: unknown) => self.logger.warn(`${event} not sent:`, err)),
    usersAnnounced: (part) => authEvents.emit(ctx, "auth.users.announced", part),
    sendEmail: async (email) => {
      await notifierClient.call(ctx, "email.send", email);
    },
    resolveSite: (site_id) => resolveSite(ctx, site_id),
    resolvePlant: (plant_id) => resolvePlant(ctx, plant_id),
  };
}

/** `use(ctx)`: an HTTP caller's request; the gateway sets `meta.user` on every route that needs one. */
export function requestPort(self: AuthPortSource, ctx: AuthCtx): AuthRequestPort {
  const caller = ctx.meta.user;
  if (!caller) throw new DomainError(401, MSG.invalidCredentials);
  return { ...systemPort(self, ctx), caller, token: ctx.meta.token, setTotal: (total) => setTotal(ctx, total) };
}
