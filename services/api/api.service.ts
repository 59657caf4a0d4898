/**
 * The API gateway: the routes the services declare (each action's `http`, gathered from the
 * registry by catalog.ts), HTTP Basic authentication, module access, JSON bodies, and the one
 * place where errors become the `{error: {status, message}}` envelope.
 */
import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { Server as NetServer } from "node:net";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import ApiGateway from "moleculer-web";
import { hasModule, type Principal } from "../../lib/access";
import { LocalCache, SharedCache } from "../../lib/cache";
import { clientOrigin, TrustedProxies, type ClientOrigin } from "../../lib/client-address";
import { config } from "../../lib/config";
import { DomainError } from "../../lib/errors";
import { withRequestId } from "../../lib/logging";
import { jsonTextOf } from "../../lib/json-text";
import type { RequestMeta } from "../../lib/contract";
import {
  addressKey,
  RequestLimit,
  retryAfterOf,
  SignInThrottle,
  throttledError,
  TOO_MANY_REQUESTS,
  type Lockout,
  type ThrottleStore,
} from "../../lib/throttle";
import { openThrottleStore } from "../../lib/throttle-redis";
import { authClient, type CredentialsChanged, type VerifiedToken } from "../auth/contract";
import {
  acceptableRequestId,
  answerClientError,
  hasForbiddenKey,
  hasForbiddenQueryKey,
  fromConsole,
  parseBasic,
  parseBearer,
  readJsonBody,
  sendEnvelope,
  sendErrorAnswer,
  setSecurityHeaders,
  toEnvelope,
  type BasicCredentials,
} from "./http";
import type { Method } from "../../lib/operations";
import { declaredServices, RouteCatalog, type AnnouncedService, type GatewayAlias } from "./catalog";
import { DOMAIN_SERVICE_SCHEMAS } from "../domain-services";
import { buildOpenApi, serveDocument } from "./openapi";
import { serveConsole } from "./console";
import { settledWithin } from "../../lib/wait";
import { PrincipalCache, TokenCache } from "./principals";
import { apiEvents, type SignInLocked } from "./contract";
import { SESSION_SCHEMAS, sessionActions } from "./session.actions";
import { SessionStore, sessionIdOf } from "./sessions";

type GatewayRequest = IncomingMessage & {
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

/** The IETF draft's header (EXTENSIONS.md §6), as node names it. */
const IDEMPOTENCY_KEY = "idempotency-key";

/**
 * The meta as the gateway builds it: the services' RequestMeta, its user not yet known (null on
 * routes without auth); on the session routes also the cookie's session id and whether the
 * request came over https (session.actions.ts).
 */
export type GatewayMeta = Omit<RequestMeta, "user"> & { user?: Principal | null; https?: boolean; sessionId?: string };

/** Methods that change nothing: no console header needed with a cookie. */
const SAFE_METHODS = new Set(["GET", "HEAD"]);

function deniedMessage(op: GatewayAlias, user: Principal): string {
  switch (op.denied) {
    case "configuration":
      return "You do not have access to this module";
    case "users":
      return "Unauthorized access";
    default:
      return `Unauthorized access to module by ${user.user_type}`;
  }
}

/**
 * How long the gateway trusts a verified caller without asking auth: a few seconds, never longer
 * than auth's own cache (AUTH_CACHE_TTL_S; 0 turns both off). Changes reach it by broadcast at
 * once; the bound only matters for a broadcast lost while this node was cut off from the bus.
 */
const PRINCIPAL_TTL_S = 5;

interface ApiLocals {
  principals: PrincipalCache;
  /** Verified API tokens, under the same rules as `principals`. */
  tokens: TokenCache;
  catalog: RouteCatalog;
  /** /openapi.json as last made; dropped when the routes change. */
  document: string | undefined;
  /** TRUST_PROXY: whose X-Forwarded-For and X-Forwarded-Proto are believed. */
  proxies: TrustedProxies;
  /** Failed sign-in throttling (lib/throttle.ts); undefined when SIGNIN_THROTTLE=false (the benchmark's comparison). */
  throttle: SignInThrottle | undefined;
  /** The store of the sign-in throttle and of the operations' rate limits (Redis in a cluster). */
  throttleStore: ThrottleStore;
  /** Per action with a `rateLimit` declaration: its counter of calls per client address. */
  rateLimits: Map<string, RequestLimit>;
  /** (user, address) pairs this replica recorded as known lately, so that a verified caller is not written on every cache miss. */
  knownAddresses: LocalCache<boolean>;
  /** The console's sessions, in the cacher. */
  sessions: SessionStore;
  /** From SIGTERM on (bin/runtime.ts drain): every answer closes its connection, so clients reconnect elsewhere. */
  draining: boolean;
}

interface ApiMethods {
  readinessCheck(): Promise<void>;
  beginDrain(): void;
  finishDrain(timeoutMs: number): Promise<void>;
  refreshRoutes(): boolean;
  originOf(req: GatewayRequest): ClientOrigin;
  signIn<T>(ctx: Context<unknown, GatewayMeta>, username: string | null, verify: () => Promise<T>): Promise<T>;
  signInWithBasic(ctx: Context<unknown, GatewayMeta>, credentials: BasicCredentials): Promise<Principal>;
  countFailure(username: string | null, address: string): Promise<void>;
  forgetLocked(locked: SignInLocked): void;
  notifyLockout(username: string, address: string, lockouts: Lockout[]): void;
  rememberAddress(username: string, address: string): void;
  signInWithToken(ctx: Context<unknown, GatewayMeta>, changes: boolean, token: string): Promise<Principal>;
  takeRateLimit(alias: GatewayAlias, address: string): Promise<void>;
  verifyToken(ctx: Context<unknown, GatewayMeta>, token: string): Promise<VerifiedToken>;
  addRoute(route: Record<string, unknown>, toBottom?: boolean): unknown;
}

/** The one route of the gateway; its aliases are what the services declare. */
function gatewayRoute(aliases: Record<string, unknown>) {
  return {
    path: "/",
    mappingPolicy: "restrict",
    autoAliases: false,
    mergeParams: true,
    bodyParsers: false,
    authentication: true,
    authorization: true,
    logging: false,
    aliases,
    use: [guard],
    onError(req: GatewayRequest, res: ServerResponse, err: unknown) {
      sendErrorAnswer(req, res, toEnvelope(err), retryAfterOf(err));
    },
  };
}

/** Before any alias: the documents, 404 and 405 from the declared routes, forbidden keys, the JSON body. */
async function guard(this: ApiLocals, req: GatewayRequest, res: ServerResponse, next: (err?: unknown) => void) {
  try {
    const url = req.parsedUrl ?? "/";
    if (req.method === "GET" || req.method === "HEAD") {
      if (serveDocument(url, res, () => (this.document ??= JSON.stringify(buildOpenApi(this.catalog))))) return;
      if (serveConsole(url, req, res)) return;
    }
    const methods = this.catalog.methodsAt(url);
    if (methods.length === 0) throw new DomainError(404, "Not found");
    if (!methods.includes(req.method as Method)) {
      res.setHeader("Allow", methods.join(", "));
      throw new DomainError(405, "This method is not allowed");
    }
    if (hasForbiddenKey(req.query) || hasForbiddenQueryKey(req.url)) throw new DomainError(400, "Invalid request body");
    const ingest = url.startsWith("/_ingest/");
    const limit = ingest ? config().bodyLimitBytes * 8 : config().bodyLimitBytes;
    // The bytes as sent: a retry sends them again, and hashing them costs a sixth of serializing the parsed body.
    const keyed = ingest && req.headers[IDEMPOTENCY_KEY] !== undefined;
    req.body = await readJsonBody(req, limit, keyed ? (raw) => (req.$bodyFingerprint = createHash("sha256").update(raw).digest("hex")) : undefined);
    next();
  } catch (err) {
    next(err);
  }
}

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
    onError(req: GatewayRequest, res: ServerResponse, err: unknown) {
      sendErrorAnswer(req, res, toEnvelope(err), retryAfterOf(err));
    },
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
      this.forgetLocked(ctx.params);
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
    // Read at creation, not at import, so a test can choose the port before starting a broker.
    this.settings.port = config().port;
    this.principals = new PrincipalCache(Math.min(config().authCacheTtlS, PRINCIPAL_TTL_S) * 1000);
    this.tokens = new TokenCache(Math.min(config().authCacheTtlS, PRINCIPAL_TTL_S) * 1000);
    // Every route of the code base from the start: one whose service is not up yet answers 503, not 404.
    this.catalog = new RouteCatalog(declaredServices(Object.values(DOMAIN_SERVICE_SCHEMAS)));
    this.document = undefined;
    const cfg = config();
    this.proxies = new TrustedProxies(cfg.trustProxy);
    this.throttleStore = openThrottleStore(cfg);
    this.throttle = cfg.signInThrottle ? new SignInThrottle(this.throttleStore, { windowMs: cfg.throttleWindowS * 1000 }) : undefined;
    this.rateLimits = new Map();
    this.knownAddresses = new LocalCache({ ttlMs: 10 * 60_000 });
    this.sessions = new SessionStore(new SharedCache(this.broker), cfg.sessionTtlS);
    // moleculer-web made its server in its own created(), which runs before this one.
    const server = (this as unknown as { server?: Server }).server;
    // Before moleculer-web's own listener: every answer, whoever makes it, carries these.
    server?.prependListener("request", setSecurityHeaders);
    this.draining = false;
    server?.prependListener("request", (_req: IncomingMessage, res: ServerResponse) => {
      if (this.draining) res.setHeader("Connection", "close");
    });
    server?.on("clientError", answerClientError);
    // An `Expect` other than 100-continue: Node's own 417 has no body; this one has the envelope.
    server?.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
      setSecurityHeaders(req, res);
      sendEnvelope(res, { error: { status: 417, message: "Expectation failed" } });
    });
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
    /** SIGTERM: still serving, but no connection is kept open for more. */
    beginDrain(): void {
      this.draining = true;
    },

    /**
     * After the grace: no new connection; the requests in flight complete (their answers close
     * their connections) and idle keep-alive connections end at their keep-alive timeout, which
     * clients know from the `Keep-Alive` header and do not reuse a connection close to. Closing
     * them at once (http's `server.close()` does) races a client writing its next request on one:
     * ECONNRESET. Whatever is still open after `timeoutMs` is cut. moleculer-web's own stop then
     * finds the server closed.
     */
    async finishDrain(timeoutMs: number): Promise<void> {
      this.draining = true;
      const server = (this as unknown as { server?: Server }).server;
      if (!server?.listening) return;
      // net's close: the listening socket only; 'close' comes once every connection has ended.
      const closed = new Promise<void>((resolve) => server.once("close", () => resolve()));
      NetServer.prototype.close.call(server);
      if (!(await settledWithin(closed, timeoutMs))) {
        this.logger.warn(`requests still in flight after ${timeoutMs} ms of draining: their connections are closed`);
        server.closeAllConnections();
        await closed;
      }
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

    async authenticate(ctx: Context<unknown, GatewayMeta>, _route: unknown, req: GatewayRequest, _res: unknown, alias: GatewayAlias) {
      const origin = this.originOf(req);
      ctx.meta.client = origin.address;
      const sessionId = sessionIdOf(req);
      // A GET that changes something (op 64's run, op 65's schedule) is a change (EXTENSIONS §8).
      const changes = alias.changes || !SAFE_METHODS.has(req.method ?? "GET");
      // Another site's page can make a signed-in browser send the cookie, but not this header (EXTENSIONS §3).
      if (changes && sessionId && req.headers.authorization === undefined && !fromConsole(req)) throw new DomainError(403, "Unauthorized operation");
      // Nor may it use Basic credentials the browser keeps since it answered a challenge (Sec-Fetch-Site: browsers only).
      if (changes && /^(cross|same)-site$/.test(String(req.headers["sec-fetch-site"] ?? ""))) throw new DomainError(403, "Unauthorized operation");
      // Issuing or revoking tokens, changing a credential: a person's doing, never an integration's (EXTENSIONS §8).
      if (alias.refusesTokens && parseBearer(req.headers.authorization)) throw new DomainError(403, "Unauthorized operation");
      if (alias.rateLimit) await this.takeRateLimit(alias, origin.address);
      if (alias.auth === "none") return null;
      if (alias.auth === "session") {
        ctx.meta.https = origin.https;
        if (!sessionId) return null;
        ctx.meta.sessionId = sessionId;
        // A sign-in replaces the session; it does not need to read it.
        return req.method === "POST" ? null : ((await this.sessions.resume(sessionId)) ?? null);
      }
      if (alias.auth === "ingest") {
        const key = parseBearer(req.headers.authorization);
        if (!key) throw new DomainError(401, "Invalid ingest key");
        ctx.meta.ingestKey = key;
        const idempotencyKey = req.headers[IDEMPOTENCY_KEY];
        if (idempotencyKey !== undefined) ctx.meta.idempotency = { key: String(idempotencyKey), fingerprint: req.$bodyFingerprint ?? "" };
        return null;
      }
      // An API token (auth's tokens) where Basic credentials go; on ingestion routes a bearer is the pipeline's key (above).
      const token = parseBearer(req.headers.authorization);
      if (token) return this.signInWithToken(ctx, changes, token);
      // The console's cookie, where no Authorization header is sent.
      if (req.headers.authorization === undefined && sessionId) {
        const user = await this.sessions.resume(sessionId);
        if (user) return user;
      }
      const credentials = parseBasic(req.headers.authorization);
      if (!credentials) throw new DomainError(401, "Invalid credentials");
      return this.signInWithBasic(ctx, credentials);
    },

    /** A caller verified a moment ago by this very client passes at once (principals.ts); anyone else meets the throttle, then auth. */
    async signInWithBasic(ctx: Context<unknown, GatewayMeta>, credentials: BasicCredentials): Promise<Principal> {
      const username = credentials.username.toLowerCase();
      const verify = () => this.signIn(ctx, username, () => authClient.call(ctx, "authenticate", credentials));
      if (!this.principals.enabled) return verify();
      const fingerprint = this.principals.fingerprint(username, credentials.password, ctx.meta.client);
      const cached = this.principals.get(username, fingerprint);
      if (cached) return cached;
      const mark = this.principals.mark();
      const principal = await verify();
      this.principals.set(username, fingerprint, principal, mark);
      return principal;
    },

    originOf(req: GatewayRequest): ClientOrigin {
      req.$origin ??= clientOrigin(req, this.proxies);
      return req.$origin;
    },

    /**
     * Every sign-in (Basic, the console's session, an API token; `username` null for a token)
     * goes through here: refused with 429 while the throttle holds a lock on it, before `verify`
     * runs, so a locked-out caller costs no password hash; a 401 from `verify` counts as a
     * failure. A throttle store that does not answer (Redis away) lets the sign-in through to
     * the password check, logged: it must not lock every user out.
     */
    async signIn<T>(ctx: Context<unknown, GatewayMeta>, username: string | null, verify: () => Promise<T>): Promise<T> {
      const throttle = this.throttle;
      if (!throttle) return verify();
      const address = ctx.meta.client ?? "";
      const verdict = await throttle.check(username, address).catch((err: unknown) => {
        this.logger.warn(`sign-in throttle not applied: its store failed (${String(err)})`);
        return { allowed: true } as const;
      });
      if (!verdict.allowed) throw throttledError(verdict.retryAfterS);
      let result: T;
      try {
        result = await verify();
      } catch (err) {
        if ((err as { code?: unknown } | null)?.code === 401) await this.countFailure(username, address);
        throw err;
      }
      if (username !== null) this.rememberAddress(username, address);
      return result;
    },

    async countFailure(username: string | null, address: string): Promise<void> {
      let lockouts: Lockout[];
      try {
        lockouts = await this.throttle!.failed(username, address);
      } catch (err) {
        this.logger.warn(`sign-in failure not counted: the throttle's store failed (${String(err)})`);
        return;
      }
      if (lockouts.length === 0) return;
      const locked: SignInLocked = {};
      if (lockouts.includes("address")) locked.address = address;
      if (username !== null && (lockouts.includes("user-address") || lockouts.includes("user"))) locked.username = username;
      // This replica at once, before the failure is answered; the others by broadcast.
      this.forgetLocked(locked);
      apiEvents.broadcast(this.broker, "api.signin.locked", locked).catch((err: unknown) => this.logger.warn(`api.signin.locked not sent: ${String(err)}`));
      if (locked.username) this.notifyLockout(locked.username, address, lockouts);
    },

    forgetLocked(locked: SignInLocked): void {
      if (locked.address !== undefined) {
        this.principals.clear();
        this.tokens.clear();
      } else if (locked.username !== undefined) this.principals.forget(locked.username);
    },

    /** The account's owner hears of a lock by email, once per window however many locks follow (auth sends it, if the user exists). */
    notifyLockout(username: string, address: string, lockouts: Lockout[]): void {
      const throttle = this.throttle!;
      const scope = lockouts.includes("user") ? "account" : "address";
      void (async () => {
        if (!(await throttle.firstNotice(username))) return;
        await authClient.call(this.broker, "lockout.notify", { username, address, scope, minutes: Math.ceil(config().throttleWindowS / 60) });
      })().catch((err: unknown) => this.logger.warn(`lockout notice for ${username} not sent: ${String(err)}`));
    },

    /** A successful sign-in makes its address one the user signs in from (lib/throttle.ts); recorded once in a while, not on every miss. */
    rememberAddress(username: string, address: string): void {
      const key = LocalCache.key(username, addressKey(address));
      if (this.knownAddresses.get(key)) return;
      this.knownAddresses.set(key, true);
      this.throttle?.succeeded(username, address).catch((err: unknown) => this.logger.warn(`known address not recorded: ${String(err)}`));
    },

    /**
     * A bearer token signs in as its user (auth answers 401 `Invalid credentials` for an unknown,
     * revoked or expired one, as for a wrong password); a `read` token may only read.
     */
    async signInWithToken(ctx: Context<unknown, GatewayMeta>, changes: boolean, token: string): Promise<Principal> {
      const verified = await this.verifyToken(ctx, token);
      if (verified.scope === "read" && changes) throw new DomainError(403, "Unauthorized operation");
      ctx.meta.token = {
        token_id: verified.token_id,
        scope: verified.scope,
        // An admin's token for another user: what it does is audited with the admin's name beside the user's.
        ...(verified.issued_by && verified.issued_by !== verified.principal.username ? { via_token_of: verified.issued_by } : {}),
      };
      return verified.principal;
    },

    /**
     * One call of an operation that declares a rate limit, counted per client address in the
     * throttle's store (Redis in a cluster: every replica counts the same calls); past the limit
     * 429 `Too many requests` with `Retry-After`. A store that does not answer lets the call through, logged.
     */
    async takeRateLimit(alias: GatewayAlias, address: string): Promise<void> {
      const { limit, windowS } = alias.rateLimit!;
      let counter = this.rateLimits.get(alias.action);
      if (!counter) {
        counter = new RequestLimit(this.throttleStore, `rate:${alias.action}`, limit, { windowMs: windowS * 1000 });
        this.rateLimits.set(alias.action, counter);
      }
      const verdict = await counter.take(addressKey(address)).catch((err: unknown) => {
        this.logger.warn(`rate limit of ${alias.action} not applied: its store failed (${String(err)})`);
        return { allowed: true } as const;
      });
      if (!verdict.allowed) throw throttledError(verdict.retryAfterS, TOO_MANY_REQUESTS);
    },

    /** Cached only until auth's broadcast drops it (revoked, or its user changed) or the token expires, whichever comes first. */
    async verifyToken(ctx: Context<unknown, GatewayMeta>, token: string): Promise<VerifiedToken> {
      if (!this.tokens.enabled) return this.signIn(ctx, null, () => authClient.call(ctx, "tokens.authenticate", { token }));
      const fingerprint = this.tokens.fingerprint(token);
      const cached = this.tokens.get(fingerprint);
      if (cached) return cached;
      const mark = this.tokens.mark();
      const verified = await this.signIn(ctx, null, () => authClient.call(ctx, "tokens.authenticate", { token }));
      this.tokens.set(fingerprint, verified, mark);
      return verified;
    },

    authorize(ctx: Context<unknown, GatewayMeta>, _route: unknown, _req: GatewayRequest, _res: unknown, alias: GatewayAlias) {
      const user = ctx.meta.user;
      if (alias.auth !== "basic" || !alias.module || !user) return;
      if (!hasModule(user, alias.module)) throw new DomainError(401, deniedMessage(alias, user));
    },
  },
};

export default ApiService;
