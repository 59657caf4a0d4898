/**
 * The gateway as its modules see it: the request as moleculer-web hands it on, the meta it
 * builds for the services, and the schema's locals and methods, typed once here so that the
 * route's guard (gateway-route.ts) and the session actions are checked against the service
 * api.service.ts builds.
 */
import type { IncomingMessage } from "node:http";
import type { Context } from "moleculer";
import type { Principal } from "../../lib/access";
import type { RequestMeta } from "../../lib/contract";
import type { ClientOrigin, TrustedProxies } from "../../lib/client-address";
import type { ThrottleStore } from "../../lib/throttle";
import type { GatewayAlias, RouteCatalog } from "./catalog";
import type { Drain } from "./drain";
import type { PrincipalCache, TokenCache } from "./principals";
import type { RateLimits } from "./rate-limits";
import type { SignIn } from "./sign-in";
import type { SessionStore } from "./sessions";

export type GatewayRequest = IncomingMessage & {
  body?: unknown;
  query?: Record<string, unknown>;
  parsedUrl?: string;
  $alias?: GatewayAlias;
  $ctx?: Context;
  /** Who sent the request (lib/client-address.ts), worked out once. */
  $origin?: ClientOrigin;
  /** sha256 of the raw body (hex), on an ingestion request that carries an `Idempotency-Key`. */
  $bodyFingerprint?: string;
};

/**
 * The meta as the gateway builds it: the services' RequestMeta, its user not yet known (null on
 * routes without auth); on the session routes also the cookie's session id and whether the
 * request came over https (session.actions.ts).
 */
export type GatewayMeta = Omit<RequestMeta, "user"> & { user?: Principal | null; https?: boolean; sessionId?: string };

export interface ApiLocals {
  /** Verified Basic callers, a few seconds (principals.ts). */
  principals: PrincipalCache;
  /** Verified API tokens, under the same rules as `principals`. */
  tokens: TokenCache;
  /** Every sign-in: the caches above, the throttle, lockout notices (sign-in.ts). */
  signIns: SignIn;
  catalog: RouteCatalog;
  /** /openapi.json as last made; dropped when the routes change. */
  document: string | undefined;
  /** TRUST_PROXY: whose X-Forwarded-For and X-Forwarded-Proto are believed. */
  proxies: TrustedProxies;
  /** The store of the sign-in throttle and of the operations' rate limits (Redis in a cluster). */
  throttleStore: ThrottleStore;
  /** The operations' declared rate limits, per client address. */
  rateLimits: RateLimits;
  /** The console's sessions, in the cacher. */
  sessions: SessionStore;
  /** From SIGTERM on (bin/runtime.ts drain): every answer closes its connection, so clients reconnect elsewhere. */
  drain: Drain;
}

export interface ApiMethods {
  readinessCheck(): Promise<void>;
  beginDrain(): void;
  finishDrain(timeoutMs: number): Promise<void>;
  refreshRoutes(): boolean;
  originOf(req: GatewayRequest): ClientOrigin;
  /** The throttled sign-in the session actions use too (session.actions.ts SessionHost). */
  signIn<T>(ctx: Context<unknown, GatewayMeta>, username: string | null, verify: () => Promise<T>): Promise<T>;
  addRoute(route: Record<string, unknown>, toBottom?: boolean): unknown;
}
