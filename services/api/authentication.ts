/**
 * Who a request's caller is and what it may reach, moleculer-web's `authenticate` and
 * `authorize` of the gateway's route: by the route's group (lib/operations.ts ROUTE_GROUPS),
 * HTTP Basic, an API token, the console's session cookie, a pipeline's ingest key or none; the
 * refusals of a change the caller's browser or token may not make; the declared rate limits;
 * then the module grant of the group.
 */
import type { Context } from "moleculer";
import { hasModule, type Principal } from "../../lib/access";
import type { ClientOrigin } from "../../lib/client-address";
import { DomainError } from "../../lib/errors";
import type { GatewayMeta, GatewayRequest } from "./api.types";
import type { GatewayAlias } from "./catalog";
import { IDEMPOTENCY_KEY } from "./gateway-route";
import { fromConsole, parseBasic, parseBearer } from "./http";
import type { RateLimits } from "./rate-limits";
import { sessionIdOf, type SessionStore } from "./sessions";
import type { SignIn } from "./sign-in";

/** What authentication needs of the gateway. */
export interface AuthenticationHost {
  originOf(req: GatewayRequest): ClientOrigin;
  rateLimits: RateLimits;
  sessions: SessionStore;
  signIns: SignIn;
}

/** Methods that change nothing: no console header needed with a cookie. */
const SAFE_METHODS = new Set(["GET", "HEAD"]);

/** The caller of the request (null: none, on routes that need none), or the refusal. */
export async function authenticate(host: AuthenticationHost, ctx: Context<unknown, GatewayMeta>, req: GatewayRequest, alias: GatewayAlias): Promise<Principal | null> {
  const origin = host.originOf(req);
  ctx.meta.client = origin.address;
  const sessionId = sessionIdOf(req);
  // A GET that changes something (op 64's run, op 65's schedule) is a change (docs/security.md, "GETs that change something").
  const changes = alias.changes || !SAFE_METHODS.has(req.method ?? "GET");
  // Another site's page can make a signed-in browser send the cookie, but not this header (docs/security.md, the console session).
  if (changes && sessionId && req.headers.authorization === undefined && !fromConsole(req)) throw new DomainError(403, "Unauthorized operation");
  // Nor may it use Basic credentials the browser keeps since it answered a challenge (Sec-Fetch-Site: browsers only).
  if (changes && /^(cross|same)-site$/.test(String(req.headers["sec-fetch-site"] ?? ""))) throw new DomainError(403, "Unauthorized operation");
  // Issuing or revoking tokens, changing a credential: a person's doing, never an integration's (docs/security.md, "What an API token may not do").
  if (alias.refusesTokens && parseBearer(req.headers.authorization)) throw new DomainError(403, "Unauthorized operation");
  if (alias.rateLimit) await host.rateLimits.take(alias, origin.address);
  if (alias.auth === "none") return null;
  if (alias.auth === "session") {
    ctx.meta.https = origin.https;
    if (!sessionId) return null;
    ctx.meta.sessionId = sessionId;
    // A sign-in replaces the session; it does not need to read it.
    return req.method === "POST" ? null : ((await host.sessions.resume(sessionId)) ?? null);
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
  if (token) return host.signIns.token(ctx, changes, token);
  // The console's cookie, where no Authorization header is sent.
  if (req.headers.authorization === undefined && sessionId) {
    const user = await host.sessions.resume(sessionId);
    if (user) return user;
  }
  const credentials = parseBasic(req.headers.authorization);
  if (!credentials) throw new DomainError(401, "Invalid credentials");
  return host.signIns.basic(ctx, credentials);
}

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

/** The module grant of the route's group: 401 with the group's text without it. */
export function authorize(ctx: Context<unknown, GatewayMeta>, alias: GatewayAlias): void {
  const user = ctx.meta.user;
  if (alias.auth !== "basic" || !alias.module || !user) return;
  if (!hasModule(user, alias.module)) throw new DomainError(401, deniedMessage(alias, user));
}
