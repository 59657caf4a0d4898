/**
 * Idempotent ingestion (docs/api-tour.md#retries-the-idempotency-key-header): a gateway's `Idempotency-Key` header makes a retried
 * readings or waveform request answer what the first answered, and store nothing again.
 *
 * The key is claimed in the transaction that stores what the request brings, with the answer the
 * request gives: both commit or neither does. A request committed whose answer was lost (the
 * process or the bus died) is answered again from its key; one that failed leaves no key behind
 * and is stored when it is retried. Only 200 answers are recorded (a batch whose every reading
 * was rejected included): a refusal stores nothing, and its repeat is checked again.
 *
 * A repeat while the first is still in its transaction answers 409 at once, rather than waiting
 * for it: the wait would hold one of the service's pooled connections per repeat, which a gateway
 * retrying in a loop could exhaust; 409 tells it to wait and send again (the IETF draft's answer).
 *
 * The fingerprint is sha256 of the raw body as the gateway (services/api) received it; a caller
 * on the bus that gives none gets sha256 of the params' JSON instead (the two never match).
 */
import { createHash } from "node:crypto";
import type { EntityManager } from "typeorm";
import { badRequest, conflict, DomainError } from "../../lib/errors";
import type { Ctx } from "./pipelines.types";
import type { PipelinesEnv, SystemPort } from "./port";
import { MSG } from "./messages";
import * as keysRepo from "./idempotency.repo";
import { DAY_MS } from "../../lib/time";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** The header an answer given again from its key carries (as Stripe's API names it). */
export const REPLAYED_HEADER = "Idempotent-Replayed";
/** How long a key is kept: a repeat after that is a new request. */
export const KEY_KEPT_MS = DAY_MS;

/** 1 to 255 printable ASCII characters (space to tilde). */
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

/** The routes that take a key; part of the fingerprint, so that one key cannot serve both. */
export type KeyedRoute = "readings" | "waveforms";

export interface KeyedRequest {
  key: string;
  /** sha256 of the route and the body's fingerprint. */
  fingerprint: Buffer;
}

/** The request's key and fingerprint; undefined without the header. 400 for a key that is not 1-255 printable characters. */
export function keyedRequest(ctx: Ctx<{ pipeline_id: string }>, route: KeyedRoute): KeyedRequest | undefined {
  const sent = ctx.meta.idempotency;
  if (sent === undefined) return undefined;
  if (typeof sent.key !== "string" || !VALID_KEY.test(sent.key)) throw badRequest(MSG.invalidInput(IDEMPOTENCY_HEADER), IDEMPOTENCY_HEADER);
  const body = sent.fingerprint || paramsFingerprint(ctx.params);
  return { key: sent.key, fingerprint: createHash("sha256").update(`${route}\n${body}`).digest() };
}

function paramsFingerprint(params: { pipeline_id: string }): string {
  const { pipeline_id: _path, ...body } = params;
  return createHash("sha256").update(JSON.stringify(body)).digest("hex");
}

/** What a request whose key was used before answers again. */
export interface Replay {
  answer: unknown;
}

/**
 * Claims the request's key in `tx`, recording `answer`: undefined when this transaction holds it
 * (store, and commit); the first answer when a request with the key and the same body committed;
 * 422 when its body differed; 409 while the first is in its transaction.
 */
export async function claimKey(tx: EntityManager, pipeline_id: string, request: KeyedRequest, answer: unknown): Promise<Replay | undefined> {
  const now = Date.now();
  const claim = await keysRepo.claimIdempotencyKey(tx, pipeline_id, request.key, request.fingerprint, JSON.stringify(answer), now, now - KEY_KEPT_MS);
  if (claim === "claimed") return undefined;
  if (claim === "busy") throw conflict(MSG.idempotencyInProgress);
  const recorded = await keysRepo.recordedIdempotencyKey(tx, pipeline_id, request.key);
  // Purged between the two statements (a key at the edge of its 24 h): as good as in progress, the retry stores it.
  if (!recorded) throw conflict(MSG.idempotencyInProgress);
  if (!recorded.fingerprint.equals(request.fingerprint)) throw new DomainError(422, MSG.idempotencyKeyReused);
  return { answer: JSON.parse(recorded.answer) as unknown };
}

/**
 * What an ingestion answers: the answer of this request, or (`replayed`) what the first request
 * with its key answered, stored once then. Each front door says so in its own way.
 */
export type Ingested<A> = { answer: A; replayed: false } | { answer: unknown; replayed: true };

/** An ingestion's answer over HTTP or the bus: a replayed one carries the Idempotent-Replayed header. */
export function answered<A>(port: SystemPort, outcome: Ingested<A>): unknown {
  if (outcome.replayed) port.setHeader(REPLAYED_HEADER, "true");
  return outcome.answer;
}

/** The periodic purge: keys older than KEY_KEPT_MS (a lookup ignores them already). */
export async function purgeKeys(env: PipelinesEnv, now = Date.now()): Promise<number> {
  return keysRepo.deleteIdempotencyKeysBefore(env.db, now - KEY_KEPT_MS);
}
