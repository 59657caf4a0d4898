/**
 * Params validation with the spec's messages. Actions declare their params beside the handler
 * (fastest-validator schemas, strict: unknown keys are refused) and, where the spec names them,
 * the messages a failure answers with. This middleware replaces Moleculer's own validator so that
 * every failure is a DomainError the gateway can put in the envelope as it stands.
 *
 * An action names its messages inside its params, under `$$messages` (an InputMessages object);
 * the key is taken out before the schema is compiled. `$$oneOf: [keys]` (also taken out): exactly
 * one of these optional keys must be sent; none answers as if the first were a missing required
 * input (before any other fault, as a required first key would), more than one `Excess inputs`
 * naming the second (after the schema's own checks).
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

/**
 * An instant in epoch ms from outside: an integer up to the last one a JS Date holds, so that
 * PostgreSQL's bigint and `toISOString` take it (1e308 is an "integer" to JavaScript).
 */
export const EPOCH_MS = { type: "number", integer: true, min: 0, max: 8_640_000_000_000_000 } as const;

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
  return findingOf(errors, messages).message;
}

/** The input at fault and the operation's message for it: a missing one first, then an unknown key, then a wrong value. */
export function findingOf(errors: FvError[], messages: InputMessages = {}): Finding {
  const missing = errors.find((e) => e.type === "required");
  if (missing) return { message: pick(messages.insufficient ?? "Insufficient inputs", missing.field ?? ""), field: missing.field ?? "" };
  const unknown = errors.find((e) => e.type === "objectStrict");
  if (unknown) return { message: pick(messages.unknown ?? messages.invalid, fieldName(unknown)), field: fieldName(unknown) };
  const first = errors[0];
  const field = first ? fieldName(first) : "";
  return { message: pick(messages.invalid, field), field };
}

export interface Finding {
  message: string;
  field: string;
}

export type Checker = (params: unknown) => true | Finding;

/**
 * The path of the first string (value or key) that holds U+0000, which PostgreSQL's text and
 * jsonb cannot store: every action's params are refused as invalid input when they hold one
 * (ParamsMiddleware), rather than failing with a 500 at the database.
 */
export function nulPath(value: unknown): string | undefined {
  const at = nulAt(value);
  return at === undefined ? undefined : at.reduce<string>((path, key) => (typeof key === "number" ? `${path}[${key}]` : path ? `${path}.${key}` : key), "");
}

/**
 * The keys down to the first U+0000, innermost last; built only on the way back from a find, so
 * that a capture's 65,536 samples cost a type check each (this runs on every action's params).
 */
function nulAt(value: unknown): (string | number)[] | undefined {
  if (typeof value === "string") return value.includes("\u0000") ? [] : undefined;
  if (value === null || typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item !== "string" && (item === null || typeof item !== "object")) continue;
      const found = nulAt(item);
      if (found !== undefined) return [i, ...found];
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (key.includes("\u0000")) return [key];
    const found = nulAt((value as Record<string, unknown>)[key]);
    if (found !== undefined) return [key, ...found];
  }
  return undefined;
}

export function compileParams(schema: ValidationSchema, messages?: InputMessages): Checker {
  const check = fv.compile({ $$strict: true, ...schema });
  return (params: unknown) => {
    const res = check((params ?? {}) as object);
    if (res === true) return true;
    return findingOf(res as FvError[], messages);
  };
}

/** The broker middleware: validates `ctx.params` of local actions that declare `params`. */
export const ParamsMiddleware: Middleware = {
  name: "Params",
  localAction(handler, action) {
    const declared = action.params as (ValidationSchema & { $$messages?: InputMessages; $$oneOf?: string[] }) | undefined;
    if (!declared || typeof declared !== "object") return handler;
    const { $$messages, $$oneOf, ...schema } = declared;
    const check = compileParams(schema as ValidationSchema, $$messages);
    const next = handler as (ctx: Context) => Promise<unknown>;
    return function validateParams(ctx: Context) {
      const sent = $$oneOf?.filter((k) => (ctx.params as Record<string, unknown> | null)?.[k] !== undefined);
      if ($$oneOf && sent?.length === 0) return Promise.reject(badRequest(pick($$messages?.insufficient ?? "Insufficient inputs", $$oneOf[0]), $$oneOf[0]));
      const res = check(ctx.params);
      if (res !== true) return Promise.reject(badRequest(res.message, res.field));
      if (sent && sent.length > 1) return Promise.reject(badRequest("Excess inputs", sent[1]));
      // Valid by shape, yet PostgreSQL could not store it: bad input, not a fault.
      const nul = nulPath(ctx.params);
      if (nul !== undefined) return Promise.reject(badRequest(invalidInput($$messages, nul), nul));
      return next(ctx);
    } as typeof handler;
  },
};
