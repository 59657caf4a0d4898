/**
 * The one error type of the domain. Services throw it with the spec's status and message;
 * only the api gateway turns it into the `{error: {status, message}}` envelope.
 */
import { Errors } from "moleculer";

export class DomainError extends Errors.MoleculerError {
  /** `field`: the input the error is about, when it is about one (EXTENSIONS.md: the envelope's optional `field`). */
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
