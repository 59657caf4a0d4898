/**
 * The gateway's HTTP edges: reading a JSON body, the error envelope, credentials from headers.
 * Pure functions over node's req/res so they are tested without a broker.
 */
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { DomainError, fieldOf, httpStatusOf } from "../../lib/errors";

export interface Envelope {
  error: { status: number; message: string; field?: string };
}

const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** JSON.parse that refuses keys which could reach an object's prototype once merged. */
export function parseJsonObject(text: string): Record<string, unknown> {
  let poisoned = false;
  const value: unknown = JSON.parse(text, (key, v) => {
    if (FORBIDDEN_KEYS.has(key)) poisoned = true;
    return v;
  });
  if (poisoned || value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new DomainError(400, "Invalid request body");
  }
  return value as Record<string, unknown>;
}

export function hasForbiddenKey(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) return true;
    if (hasForbiddenKey((value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

/** Names the query parser drops as they stand on every object (`toString=x` would pass unseen). */
const PARSER_DROPPED = new Set([...FORBIDDEN_KEYS, ...Object.getOwnPropertyNames(Object.prototype)]);

/**
 * Whether the URL's query names a forbidden key (`a[__proto__]=1`, `toString=x` included). The
 * query parser drops such keys silently, so they are looked for in the raw URL.
 */
export function hasForbiddenQueryKey(url: string | undefined): boolean {
  const at = url?.indexOf("?") ?? -1;
  if (!url || at === -1) return false;
  for (const key of new URLSearchParams(url.slice(at + 1)).keys()) {
    if (key.split(/[[\].]/).some((part) => PARSER_DROPPED.has(part))) return true;
  }
  return false;
}

const isJson = (contentType: string | undefined): boolean =>
  !!contentType && /^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(contentType.trim());

function readRaw(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on("data", (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(new DomainError(413, "Payload too large"));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on("error", (err) => {
      if (!failed) reject(err);
    });
  });
}

/**
 * Reads the body of any method (some GET and DELETE operations of the spec take one). `onRaw`
 * sees the bytes as sent, before they are parsed (an idempotent request's fingerprint).
 */
export async function readJsonBody(req: IncomingMessage, limit: number, onRaw?: (raw: Buffer) => void): Promise<Record<string, unknown>> {
  const raw = await readRaw(req, limit);
  onRaw?.(raw);
  const text = raw.toString("utf8");
  if (text.trim() === "") return {};
  if (!isJson(req.headers["content-type"])) throw new DomainError(400, "Invalid content type");
  try {
    return parseJsonObject(text);
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw new DomainError(400, "Invalid request body");
  }
}

/** Errors that Moleculer and moleculer-web raise themselves, by their type. */
const FRAMEWORK_ERRORS: Record<string, { status: number; message: string }> = {
  NOT_FOUND: { status: 404, message: "Not found" },
  // A path whose percent-encoding does not decode (`/_config/plants/%ZZ`) names no resource.
  UNABLE_DECODE_PARAM: { status: 404, message: "Not found" },
  SERVICE_NOT_FOUND: { status: 503, message: "Service unavailable" },
  SERVICE_NOT_AVAILABLE: { status: 503, message: "Service unavailable" },
  SERVICE_UNAVAILABLE: { status: 503, message: "Service unavailable" },
  REQUEST_TIMEOUT: { status: 504, message: "Service timed out" },
  REQUEST_REJECTED: { status: 503, message: "Service unavailable" },
  // This node's own transporter is down: the service behind it is unreachable, as far as the caller can tell.
  BAD_GATEWAY: { status: 503, message: "Service unavailable" },
  QUEUE_FULL: { status: 503, message: "Service unavailable" },
  RATE_LIMIT_EXCEEDED: { status: 429, message: "Too many requests" },
  PAYLOAD_TOO_LARGE: { status: 413, message: "Payload too large" },
};

/** The envelope for any error: a domain error as it stands, anything else without its details. */
export function toEnvelope(err: unknown, faultMessage = "Internal error"): Envelope {
  const e = err as { name?: string; type?: string; code?: unknown; message?: string };
  if (e?.type === "DOMAIN_ERROR" || err instanceof DomainError) {
    const status = httpStatusOf(e.code);
    const field = fieldOf(err);
    return { error: { status, message: status === 500 && !e.message ? faultMessage : (e.message ?? faultMessage), ...(field ? { field } : {}) } };
  }
  const known = e?.type ? FRAMEWORK_ERRORS[e.type] : undefined;
  if (known) return { error: { ...known } };
  // moleculer-web raises these two without a type: an alias whose action has no live node, and its rate limiter.
  if (e?.name === "ServiceNotFoundError" || e?.name === "ServiceNotAvailableError" || e?.name === "ServiceUnavailableError") {
    return { error: { status: 503, message: "Service unavailable" } };
  }
  if (e?.name === "RateLimitExceeded") return { error: { status: 429, message: "Too many requests" } };
  if (e?.name === "RequestTimeoutError") return { error: { status: 504, message: "Service timed out" } };
  return { error: { status: 500, message: faultMessage } };
}

/**
 * Node answers a request it cannot parse (a URL or headers past 16 KB: 431) with a bare status
 * line; this `clientError` listener sends the envelope instead, then closes the connection.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || err.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : 400;
  const message = status === 431 ? "Request line or headers too large" : "Invalid request";
  const body = JSON.stringify({ error: { status, message } } satisfies Envelope);
  const security = Object.entries(API_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n${security}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * What the gateway's HTTP server answers before moleculer-web sees a request: the headers every
 * answer carries (first, whoever answers), the envelope for a request node cannot parse, and for
 * an `Expect` other than 100-continue (node's own 417 has no body).
 */
export function armServer(server: Server): void {
  server.prependListener("request", setSecurityHeaders);
  server.on("clientError", answerClientError);
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
    setSecurityHeaders(req, res);
    sendEnvelope(res, { error: { status: 417, message: "Expectation failed" } });
  });
}

/** Headers of every answer (docs/security.md, challenge and headers); the HTML pages add their Content-Security-Policy (openapi.ts). */
export const API_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  // Answers hold a tenant's data: no shared or browser cache keeps them.
  "Cache-Control": "no-store",
} as const;

/** Sets the headers every answer carries, before anything else handles the request. */
export function setSecurityHeaders(_req: IncomingMessage, res: ServerResponse): void {
  for (const [name, value] of Object.entries(API_HEADERS)) res.setHeader(name, value);
}

export const BASIC_CHALLENGE = 'Basic realm="ims", charset="UTF-8"';

/** The console's own requests say so; its page would otherwise meet the browser's password prompt. */
export const fromConsole = (req: IncomingMessage): boolean => String(req.headers["x-requested-with"] ?? "").trim().toLowerCase() === "ims-console";

/**
 * Whether a 401 carries the Basic challenge: everywhere but the console's sign-in routes and the
 * console's own requests, where a browser would put its password prompt in front of the page.
 */
export function challenges(req: IncomingMessage): boolean {
  const path = (req.url ?? "/").split("?")[0]!;
  return !path.startsWith("/_auth/") && path !== "/_auth" && !fromConsole(req);
}

/**
 * How long a client waits before it asks again a service that is away or not up yet (503): a
 * restarting replica or a node joining the bus takes a few seconds.
 */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

/** The envelope of an error with the headers its status asks for: the challenge of a 401, the wait of a 429 or a 503. */
export function sendErrorAnswer(req: IncomingMessage, res: ServerResponse, envelope: Envelope, retryAfterS: number | undefined): void {
  if (!res.headersSent) {
    if (envelope.error.status === 401 && challenges(req)) res.setHeader("WWW-Authenticate", BASIC_CHALLENGE);
    if (envelope.error.status === 429 && retryAfterS !== undefined) res.setHeader("Retry-After", String(retryAfterS));
    if (envelope.error.status === 503) res.setHeader("Retry-After", String(retryAfterS ?? UNAVAILABLE_RETRY_AFTER_S));
  }
  sendEnvelope(res, envelope);
}

export function sendEnvelope(res: ServerResponse, envelope: Envelope, httpStatus = envelope.error.status): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify(envelope);
  res.statusCode = httpStatus;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

export interface BasicCredentials {
  username: string;
  password: string;
}

/** `Authorization: Basic base64(username:password)`; null when absent or malformed. */
export function parseBasic(header: string | undefined): BasicCredentials | null {
  if (!header) return null;
  const m = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!m || !m[1]) return null;
  const decoded = Buffer.from(m[1], "base64").toString("utf8");
  const sep = decoded.indexOf(":");
  if (sep <= 0) return null;
  return { username: decoded.slice(0, sep), password: decoded.slice(sep + 1) };
}

export function parseBearer(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1] ?? null;
}

const REQUEST_ID_RE = /^[\w.:-]{1,128}$/;

export function acceptableRequestId(value: unknown): string | undefined {
  return typeof value === "string" && REQUEST_ID_RE.test(value) ? value : undefined;
}
