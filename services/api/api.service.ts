/**
 * The API gateway: the routes the code base declares (each action's `http`, gathered by
 * catalog.ts), HTTP Basic, API tokens and the console's session (sign-in.ts), module access,
 * JSON bodies (gateway-route.ts), and the one place where errors become the
 * `{error: {status, message}}` envelope.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import ApiGateway from "moleculer-web";
import { SharedCache } from "../../lib/cache";
import { clientOrigin, TrustedProxies, type ClientOrigin } from "../../lib/client-address";
import { config } from "../../lib/config";
import { DomainError } from "../../lib/errors";
import { withRequestId } from "../../lib/logging";
import { jsonTextOf } from "../../lib/json-text";
import { SignInThrottle } from "../../lib/throttle";
import { openThrottleStore } from "../../lib/throttle-redis";
import type { CredentialsChanged } from "../auth/contract";
import { DOMAIN_SERVICE_SCHEMAS } from "../domain-services";
import type { ApiLocals, ApiMethods, GatewayMeta, GatewayRequest } from "./api.types";
import { declaredServices, RouteCatalog, type AnnouncedService, type GatewayAlias } from "./catalog";
import type { SignInLocked } from "./contract";
import { authenticate, authorize } from "./authentication";
import { Drain } from "./drain";
import { gatewayRoute, onError } from "./gateway-route";
import { acceptableRequestId, armServer, toEnvelope } from "./http";
import { PrincipalCache, TokenCache } from "./principals";
import { RateLimits } from "./rate-limits";
import { SESSION_SCHEMAS, sessionActions } from "./session.actions";
import { SessionStore } from "./sessions";
import { SignIn } from "./sign-in";

/**
 * How long the gateway trusts a verified caller without asking auth: a few seconds, never longer
 * than auth's own cache (AUTH_CACHE_TTL_S; 0 turns both off). Changes reach it by broadcast at
 * once; the bound only matters for a broadcast lost while this node was cut off from the bus.
 */
const PRINCIPAL_TTL_S = 5;

/** moleculer-web listens in its `started`; this gateway listens in its own, once its routes are known. */
const { started: listen, ...Gateway } = ApiGateway as ServiceSchema & { started: (this: unknown) => Promise<void> };

type ErrorHandler = (this: unknown, req: GatewayRequest, res: ServerResponse, err: unknown) => void;

const ApiService: ServiceSchema<ServiceSettingSchema & { port: number } & Record<string, unknown>, ApiMethods, ApiLocals> = {
  name: "api",
  mixins: [Gateway],

  settings: {
    port: 3000,
    ip: "0.0.0.0",
    log4XXResponses: false,
    logRouteRegistration: "debug",
    logRequest: "debug",
    logResponse: "debug",
    rootCallOptions(options: { requestID?: string }, req: IncomingMessage, res: ServerResponse) {
      options.requestID = acceptableRequestId(req.headers["x-request-id"]) ?? randomUUID();
      res.setHeader("X-Request-Id", options.requestID);
    },
    routes: [gatewayRoute({})],
    onError,
    openapi: { schemas: SESSION_SCHEMAS },
  },

  actions: {
    // session.create, session.get, session.remove: the console's sign-in (POST|GET|DELETE /_auth/session)
    ...sessionActions,
  },

  events: {
    /** Auth's broadcast: a user's password, type, place or modules changed, or the user is gone. */
    async "auth.credentials.changed"(ctx: Context<CredentialsChanged>) {
      this.tokens.forget(ctx.params.username);
      // A revoked token leaves its user's password as it was.
      if (ctx.params.token_id === undefined) this.principals.forget(ctx.params.username);
      // The user's console sessions end too (every replica writes a new epoch; one would do).
      if (ctx.params.token_id === undefined) await this.sessions.endAllOf(ctx.params.username);
    },
    /** Another replica (or this one) locked someone out: what this replica verified lately must meet the lock. */
    "api.signin.locked"(ctx: Context<SignInLocked>) {
      this.signIns.forgetLocked(ctx.params);
    },
    /** Broadcasts sent while this node was cut off are lost: trust nothing cached before. */
    "$transporter.connected"() {
      this.principals.clear();
      this.tokens.clear();
    },
    /** A node came or went, or a service of it: what it announces joins the declared routes (which stay, answering 503, while their service is away). */
    "$services.changed"() {
      this.refreshRoutes();
    },
  },

  created() {
    const cfg = config();
    // Read at creation, not at import, so a test can choose the port before starting a broker.
    this.settings.port = cfg.port;
    this.principals = new PrincipalCache(Math.min(cfg.authCacheTtlS, PRINCIPAL_TTL_S) * 1000);
    this.tokens = new TokenCache(Math.min(cfg.authCacheTtlS, PRINCIPAL_TTL_S) * 1000);
    // Every route of the code base from the start: one whose service is not up yet answers 503, not 404.
    this.catalog = new RouteCatalog(declaredServices(Object.values(DOMAIN_SERVICE_SCHEMAS)));
    this.document = undefined;
    this.proxies = new TrustedProxies(cfg.trustProxy);
    this.throttleStore = openThrottleStore(cfg);
    const throttle = cfg.signInThrottle ? new SignInThrottle(this.throttleStore, { windowMs: cfg.throttleWindowS * 1000 }) : undefined;
    this.signIns = new SignIn({ broker: this.broker, logger: this.logger, principals: this.principals, tokens: this.tokens, throttle });
    this.rateLimits = new RateLimits(this.throttleStore, this.logger);
    this.sessions = new SessionStore(new SharedCache(this.broker), cfg.sessionTtlS);
    // moleculer-web made its server in its own created(), which runs before this one.
    const server = (this as unknown as { server?: Server }).server;
    if (server) armServer(server);
    this.drain = new Drain(server, this.logger);
  },

  async stopped() {
    await this.throttleStore.close();
  },

  /**
   * Listening only once every service of this process has started and its routes are known, so
   * that a fresh start never answers 503 for a service that is merely not up yet.
   */
  async started() {
    const local = this.broker.services.map((s) => s.fullName).filter((name) => name !== this.fullName);
    await this.broker.waitForServices(local);
    this.refreshRoutes();
    await listen.call(this);
  },

  methods: {
    /** SIGTERM (bin/runtime.ts): still serving, but no connection is kept open for more. */
    beginDrain(): void {
      this.drain.begin();
    },

    /** After the grace: no new connection, the requests in flight completed, cut after `timeoutMs` (drain.ts). */
    finishDrain(timeoutMs: number): Promise<void> {
      return this.drain.finish(timeoutMs);
    },

    /**
     * For /ready (lib/health.ts): an api that reaches none of the services its routes need would
     * answer every request 503, so a load balancer must not send it any.
     */
    async readinessCheck(): Promise<void> {
      const available = new Set((this.broker.registry.getServiceList({ onlyAvailable: true }) as { name: string }[]).map((s) => s.name));
      const needed = new Set(this.catalog.operations().map((op) => op.action.split(".")[0]!));
      needed.delete(this.name);
      if (![...needed].some((name) => available.has(name))) throw new Error(needed.size ? `none of ${[...needed].sort().join(", ")} reachable` : "no service discovered");
    },

    /** The routes from the registry; the gateway's route is made anew when they changed. */
    refreshRoutes(): boolean {
      const services = this.broker.registry.getServiceList({ withActions: true }) as unknown as AnnouncedService[];
      if (!this.catalog.update(services)) return false;
      this.document = undefined;
      this.addRoute(gatewayRoute(this.catalog.aliases()));
      return true;
    },

    /**
     * moleculer-web logs every answer from 500 up with its stack. A domain error is an answer a
     * service chose, the interface's own 500s included (`Something went wrong` for a note on an
     * unknown alert), and a 503 or 504 is a service away or slow (a restart, a failover), which
     * the envelope names: a warning line each, without a stack. Faults (500 `Internal error`) keep
     * moleculer-web's error log.
     */
    errorHandler(req: GatewayRequest, res: ServerResponse, err: unknown) {
      const domain = err instanceof DomainError || (err as { type?: string } | null)?.type === "DOMAIN_ERROR";
      const { status, message } = toEnvelope(err).error;
      // Outside the request's action: its log lines are given its id here.
      const header = res.getHeader("X-Request-Id");
      const requestId = typeof header === "string" ? header : undefined;
      if (!domain && status !== 503 && status !== 504) {
        return withRequestId(requestId, () => (ApiGateway.methods as { errorHandler: ErrorHandler }).errorHandler.call(this, req, res, err));
      }
      if (status >= 500) withRequestId(requestId, () => this.logger.warn(`${req.method} ${req.url}: ${status} ${message}`));
      (this as unknown as { sendError: ErrorHandler }).sendError(req, res, err);
    },

    /** moleculer-web's encoder: a cached list from a service in this process comes with its JSON text already made (lib/json-text.ts). */
    encodeResponse(_req: GatewayRequest, _res: ServerResponse, data: unknown): string {
      return jsonTextOf(data) ?? JSON.stringify(data);
    },

    /** moleculer-web's hooks of the route: who the caller is, and whether its modules reach the route (authentication.ts). */
    authenticate(ctx: Context<unknown, GatewayMeta>, _route: unknown, req: GatewayRequest, _res: unknown, alias: GatewayAlias) {
      return authenticate(this, ctx, req, alias);
    },

    authorize(ctx: Context<unknown, GatewayMeta>, _route: unknown, _req: GatewayRequest, _res: unknown, alias: GatewayAlias) {
      authorize(ctx, alias);
    },

    originOf(req: GatewayRequest): ClientOrigin {
      req.$origin ??= clientOrigin(req, this.proxies);
      return req.$origin;
    },

    /** The throttled sign-in (sign-in.ts guard), which the console's password sign-in uses too (session.actions.ts). */
    signIn<T>(ctx: Context<unknown, GatewayMeta>, username: string | null, verify: () => Promise<T>): Promise<T> {
      return this.signIns.guard(ctx, username, verify);
    },
  },
};

export default ApiService;
