/**
 * The one error type of the domain. Services throw it with the spec's status and message;
 * only the api gateway turns it into the `{error: {status, message}}` envelope.
 */
import { Errors, type Context, type Middleware } from "moleculer";

export class DomainError extends Errors.MoleculerError {
  /** `field`: the input the error is about, when it is about one (the envelope's optional `field`: docs/architecture.md, "How a request flows"). */
  constructor(status: number, message: string, field?: string) {
    super(message, status, "DOMAIN_ERROR", field ? { field } : undefined);
    this.name = "DomainError";
  }
}

/** The input a domain error names, as it crossed the bus (`data.field`). */
export function fieldOf(err: unknown): string | undefined {
  const field = (err as { data?: { field?: unknown } } | null)?.data?.field;
  return typeof field === "string" && field !== "" ? field : undefined;
}

export const badRequest = (message: string, field?: string): DomainError => new DomainError(400, message, field);
export const unauthorized = (message: string): DomainError => new DomainError(401, message);
export const forbidden = (message: string): DomainError => new DomainError(403, message);
export const notFound = (message: string): DomainError => new DomainError(404, message);
export const conflict = (message: string): DomainError => new DomainError(409, message);
export const internal = (message: string): DomainError => new DomainError(500, message);

/** The gateway's answer when what serves a request is away for now (services/api/http.ts): a retry later succeeds. */
export const SERVICE_UNAVAILABLE = "Service unavailable";
export const serviceUnavailable = (): DomainError => new DomainError(503, SERVICE_UNAVAILABLE);

/**
 * A status that can stand on an HTTP status line; anything else is a fault (500). 200 is the
 * spec's one success in an error envelope: notebook delete's `No notebooks deleted`.
 */
export function httpStatusOf(code: unknown): number {
  if (code === 200) return 200;
  return typeof code === "number" && Number.isInteger(code) && code >= 400 && code <= 599 ? code : 500;
}

/** True when a PostgreSQL error is the violation of a unique index. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  const code = e?.code ?? e?.driverError?.code;
  const name = e?.constraint ?? e?.driverError?.constraint;
  return code === "23505" && (constraint === undefined || name === constraint);
}

/**
 * SQLSTATEs of a server that cannot serve now: connection exceptions (class 08), shutting down
 * or starting up (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now), and
 * too many connections (53300).
 */
const UNAVAILABLE_STATES = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
/** The socket's own faults: nothing answers at the address, or the connection broke. */
const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
/** node-postgres says these without a code: the server closed a connection mid-query, or none could be had in time. */
const UNAVAILABLE_MESSAGES = /Connection terminated|not queryable|timeout exceeded when trying to connect/i;
const RELEASED_RUNNER = /^QueryRunner(Provider)?AlreadyReleasedError$/;

/**
 * True when an error says the database cannot be reached right now (stopped, restarting, killed,
 * unreachable), not that the statement was wrong: the request may succeed when retried later.
 * TypeORM wraps the driver's error (`driverError`); a host that resolves to several addresses
 * fails with an AggregateError of each attempt (`errors`).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (err === null || typeof err !== "object") return false;
  const e = err as { name?: unknown; code?: unknown; message?: unknown; driverError?: unknown; errors?: unknown };
  if (typeof e.code === "string" && (UNAVAILABLE_STATES.test(e.code) || UNAVAILABLE_CODES.has(e.code))) return true;
  if (typeof e.message === "string" && UNAVAILABLE_MESSAGES.test(e.message)) return true;
  // TypeORM releases a transaction's connection when it breaks: the statements that follow, COMMIT included, are never sent.
  if (typeof e.name === "string" && RELEASED_RUNNER.test(e.name)) return true;
  if (e.driverError !== undefined && e.driverError !== err && isDatabaseUnavailable(e.driverError)) return true;
  return Array.isArray(e.errors) && e.errors.some(isDatabaseUnavailable);
}

/**
 * A failure that says nothing against the request or message itself: the database is away, or a
 * service answered 503 because its own is (it crossed the bus as a domain error). Stream
 * consumers retry such a message until it goes through rather than dead-letter it.
 */
export function isTransient(err: unknown): boolean {
  if (isDatabaseUnavailable(err)) return true;
  const e = err as { type?: unknown; code?: unknown } | null;
  return e?.type === "DOMAIN_ERROR" && e.code === 503;
}

/**
 * An action that failed because its database is away answers 503 `Service unavailable`, as a
 * service that is away does: a client (a gateway, the console) retries it, where a 500 would say
 * the request itself is at fault. Each service's own errors stay as they are.
 */
export const DatabaseOutageMiddleware: Middleware = {
  name: "DatabaseOutage",
  localAction(handler) {
    const next = handler as (ctx: Context) => Promise<unknown>;
    return async function answerOutage(ctx: Context) {
      try {
        return await next(ctx);
      } catch (err) {
        if (isDatabaseUnavailable(err)) throw serviceUnavailable();
        throw err;
      }
    } as typeof handler;
  },
};
