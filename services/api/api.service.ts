/**
 * The API gateway: the routes the services declare (each action's `http`, gathered from the
 * registry by catalog.ts), HTTP Basic authentication, module access, JSON bodies, and the one
 * place where errors become the `{error: {status, message}}` envelope.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import ApiGateway from "moleculer-web";
import { hasModule, type Principal } from "../../lib/access";
import { config } from "../../lib/config";
import { DomainError } from "../../lib/errors";
import { withRequestId } from "../../lib/logging";
import { jsonTextOf } from "../../lib/json-text";
import type { RequestMeta } from "../../lib/contract";
import { authClient, type CredentialsChanged } from "../auth/contract";
import {
  acceptableRequestId,
  answerClientError,
  hasForbiddenKey,
  hasForbiddenQueryKey,
  parseBasic,
  parseBearer,
  readJsonBody,
  sendEnvelope,
  toEnvelope,
} from "./http";
import type { Method, Operation } from "../../lib/operations";
import { RouteCatalog, type AnnouncedService } from "./catalog";
import { buildOpenApi, serveDocument } from "./openapi";
import { PrincipalCache } from "./principals";

type GatewayRequest = IncomingMessage & {
  body?: unknown;
  query?: Record<string, unknown>;
  parsedUrl?: string;
  $alias?: Operation;
  $ctx?: Context;
};

/** The meta as the gateway builds it: the services' RequestMeta, its user not yet known (null on routes without auth). */
export type GatewayMeta = Omit<RequestMeta, "user"> & { user?: Principal | null };

function deniedMessage(op: Operation, user: Principal): string {
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
  catalog: RouteCatalog;
  /** /openapi.json as last made; dropped when the routes change. */
  document: string | undefined;
}

interface ApiMethods {
  refreshRoutes(): boolean;
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
    onError(_req: GatewayRequest, res: ServerResponse, err: unknown) {
      sendEnvelope(res, toEnvelope(err));
    },
  };
}

/** Before any alias: the documents, 404 and 405 from the declared routes, forbidden keys, the JSON body. */
async function guard(this: ApiLocals, req: GatewayRequest, res: ServerResponse, next: (err?: unknown) => void) {
  try {
    const url = req.parsedUrl ?? "/";
    if ((req.method === "GET" || req.method === "HEAD") && serveDocument(url, res, () => (this.document ??= JSON.stringify(buildOpenApi(this.catalog))))) return;
    const methods = this.catalog.methodsAt(url);
    if (methods.length === 0) throw new DomainError(404, "Not found");
    if (!methods.includes(req.method as Method)) {
      res.setHeader("Allow", methods.join(", "));
      throw new DomainError(405, "This method is not allowed");
    }
    if (hasForbiddenKey(req.query) || hasForbiddenQueryKey(req.url)) throw new DomainError(400, "Invalid request body");
    const limit = url.startsWith("/_ingest/") ? config().bodyLimitBytes * 8 : config().bodyLimitBytes;
    req.body = await readJsonBody(req, limit);
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
      sendEnvelope(res, toEnvelope(err));
    },
  },

  events: {
    /** Auth's broadcast: a user's password, type, place or modules changed, or the user is gone. */
    "auth.credentials.changed"(ctx: Context<CredentialsChanged>) {
      this.principals.forget(ctx.params.username);
    },
    /** Broadcasts sent while this node was cut off are lost: trust nothing cached before. */
    "$transporter.connected"() {
      this.principals.clear();
    },
    /** A node came or went, or a service of it: its routes come with it (and stay, answering 503, when it goes). */
    "$services.changed"() {
      this.refreshRoutes();
    },
  },

  created() {
    // Read at creation, not at import, so a test can choose the port before starting a broker.
    this.settings.port = config().port;
    this.principals = new PrincipalCache(Math.min(config().authCacheTtlS, PRINCIPAL_TTL_S) * 1000);
    this.catalog = new RouteCatalog();
    this.document = undefined;
    // moleculer-web made its server in its own created(), which runs before this one.
    const server = (this as unknown as { server?: Server }).server;
    server?.on("clientError", answerClientError);
    // An `Expect` other than 100-continue: Node's own 417 has no body; this one has the envelope.
    server?.on("checkExpectation", (_req: IncomingMessage, res: ServerResponse) => sendEnvelope(res, { error: { status: 417, message: "Expectation failed" } }));
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

    async authenticate(ctx: Context<unknown, GatewayMeta>, _route: unknown, req: GatewayRequest, _res: unknown, alias: Operation) {
      if (alias.auth === "none") return null;
      if (alias.auth === "ingest") {
        const key = parseBearer(req.headers.authorization);
        if (!key) throw new DomainError(401, "Invalid ingest key");
        ctx.meta.ingestKey = key;
        return null;
      }
      const credentials = parseBasic(req.headers.authorization);
      if (!credentials) throw new DomainError(401, "Invalid credentials");
      if (!this.principals.enabled) return authClient.call(ctx, "authenticate", credentials);
      const username = credentials.username.toLowerCase();
      const fingerprint = this.principals.fingerprint(username, credentials.password);
      const cached = this.principals.get(username, fingerprint);
      if (cached) return cached;
      const mark = this.principals.mark();
      const principal = await authClient.call(ctx, "authenticate", credentials);
      this.principals.set(username, fingerprint, principal, mark);
      return principal;
    },

    authorize(ctx: Context<unknown, GatewayMeta>, _route: unknown, _req: GatewayRequest, _res: unknown, alias: Operation) {
      const user = ctx.meta.user;
      if (alias.auth !== "basic" || !alias.module || !user) return;
      if (!hasModule(user, alias.module)) throw new DomainError(401, deniedMessage(alias, user));
    },
  },
};

export default ApiService;
