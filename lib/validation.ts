/**
 * Params validation with the spec's messages. Actions declare their params beside the handler
 * (fastest-validator schemas, strict: unknown keys are refused) and, where the spec names them,
 * the messages a failure answers with. This middleware replaces Moleculer's own validator so that
 * every failure is a DomainError the gateway can put in the envelope as it stands.
 *
 * An action names its messages inside its params, under `$$messages` (an InputMessages object);
 * the key is taken out before the schema is compiled.
 */
import Validator, { type ValidationError as FvError, type ValidationSchema } from "fastest-validator";
import type { Context, Middleware } from "moleculer";
import { badRequest } from "./errors";

export interface InputMessages {
  /** A required input is missing. Default `Insufficient inputs`; a function gets the missing field's path. */
  insufficient?: string | ((field: string) => string);
  /** A key the operation does not know. Default `Invalid input: <field>`. */
  unknown?: string | ((field: string) => string);
  /** A value of the wrong type or outside its range. Default `Invalid input: <field>`. */
  invalid?: string | ((field: string) => string);
}

const fv = new Validator({ useNewCustomCheckerFunction: true });

/** Strings from outside are bounded; a 100 KB name is bad input, not data. */
export const MAX_TEXT = 255;

/** The message of an invalid value of `field`: the operation's own, else `Invalid input: <field>`. */
export function invalidInput(messages: InputMessages | undefined, field: string): string {
  return pick(messages?.invalid, field);
}

function pick(message: string | ((field: string) => string) | undefined, field: string): string {
  if (typeof message === "function") return message(field);
  return message ?? `Invalid input: ${field}`;
}

function fieldName(e: FvError): string {
  if (e.type === "objectStrict") {
    const actual = String(e.actual ?? "");
    const first = actual.split(",")[0]?.trim();
    const parent = e.field ? `${e.field}.` : "";
    return `${parent}${first}`;
  }
  return e.field ?? "";
}

/** Turns fastest-validator's findings into the one message the operation answers with. */
export function messageFor(errors: FvError[], messages: InputMessages = {}): string {
  const missing = errors.find((e) => e.type === "required");
  if (missing) return pick(messages.insufficient ?? "Insufficient inputs", missing.field ?? "");
  const unknown = errors.find((e) => e.type === "objectStrict");
  if (unknown) return pick(messages.unknown ?? messages.invalid, fieldName(unknown));
  const first = errors[0];
  return pick(messages.invalid, first ? fieldName(first) : "");
}

export type Checker = (params: unknown) => true | string;

/**
 * The path of the first string (value or key) that holds U+0000, which PostgreSQL's text and
 * jsonb cannot store: every action's params are refused as invalid input when they hold one
 * (ParamsMiddleware), rather than failing with a 500 at the database.
 */
export function nulPath(value: unknown, path = ""): string | undefined {
  if (typeof value === "string") return value.includes("\u0000") ? path : undefined;
  if (value === null || typeof value !== "object") return undefined;
  const isArray = Array.isArray(value);
  for (const [key, item] of Object.entries(value)) {
    const at = isArray ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (key.includes("\u0000")) return at;
    const found = nulPath(item, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

export function compileParams(schema: ValidationSchema, messages?: InputMessages): Checker {
  const check = fv.compile({ $$strict: true, ...schema });
  return (params: unknown) => {
    const res = check((params ?? {}) as object);
    if (res === true) return true;
    return messageFor(res as FvError[], messages);
  };
}

/** The broker middleware: validates `ctx.params` of local actions that declare `params`. */
export const ParamsMiddleware: Middleware = {
  name: "Params",
  localAction(handler, action) {
    const declared = action.params as (ValidationSchema & { $$messages?: InputMessages }) | undefined;
    if (!declared || typeof declared !== "object") return handler;
    const { $$messages, ...schema } = declared;
    const check = compileParams(schema as ValidationSchema, $$messages);
    const next = handler as (ctx: Context) => Promise<unknown>;
    return function validateParams(ctx: Context) {
      const res = check(ctx.params);
      if (res !== true) return Promise.reject(badRequest(res));
      // Valid by shape, yet PostgreSQL could not store it: bad input, not a fault.
      const nul = nulPath(ctx.params);
      if (nul !== undefined) return Promise.reject(badRequest(invalidInput($$messages, nul)));
      return next(ctx);
    } as typeof handler;
  },
};
