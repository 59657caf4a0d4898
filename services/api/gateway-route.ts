/**
 * The gateway's one moleculer-web route: its aliases are the operations the catalog knows
 * (catalog.ts), and before any alias the guard answers the documents and the console, 404 and
 * 405 from the known routes, refuses forbidden keys and reads the JSON body.
 */
import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { config } from "../../lib/config";
import { DomainError } from "../../lib/errors";
import type { Method } from "../../lib/operations";
import { retryAfterOf } from "../../lib/throttle";
import type { ApiLocals, GatewayRequest } from "./api.types";
import { serveConsole } from "./console";
import { hasForbiddenKey, hasForbiddenQueryKey, readJsonBody, sendErrorAnswer, toEnvelope } from "./http";
import { buildOpenApi, serveDocument } from "./openapi";

/** The IETF draft's header (docs/api-tour.md, "Retries"), as node names it. */
export const IDEMPOTENCY_KEY = "idempotency-key";

/** Every error the gateway answers, in the envelope, with the headers its status asks for. */
export function onError(req: GatewayRequest, res: ServerResponse, err: unknown): void {
  sendErrorAnswer(req, res, toEnvelope(err), retryAfterOf(err));
}

/** The one route of the gateway; its aliases are what the services declare. */
export function gatewayRoute(aliases: Record<string, unknown>) {
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
    onError,
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
