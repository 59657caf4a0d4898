/**
 * What a service's contract module (`services/<name>/contract.ts`) is made of: the params and
 * reply of each action other services call, the payload of each event it emits and of each
 * stream it publishes, and a typed client over them. Consumers import the owner's contract and
 * call through its client, so a boundary type is written once, by its owner.
 *
 *   // services/config/contract.ts
 *   export interface ConfigContract {
 *     "monitors.resolve": { params: { monitor_ids: string[] }; reply: ResolvedMonitor[] };
 *   }
 *   export const configClient = serviceClient<ConfigContract>("config");
 *
 *   // a consumer
 *   const monitors = await configClient.call(ctx, "monitors.resolve", { monitor_ids });
 *
 * Events go the same way: the owner declares `{ "<event>": Payload }` and sends through
 * `eventSender<ItsEvents>()`; a consumer's handler takes `Context<Payload>`. Streams: the owner
 * declares `{ <stream>: Message }`, producers stage through `StreamClient<ItsStreams>` and
 * consumers declare `StreamConsumers<TheirThis, ItsStreams>` (mixins/stream.mixin.ts).
 */
import type { CallingOptions, Context } from "moleculer";
import type { Principal } from "./access";

/** Anything that can call an action: a request's context (its meta travels on) or a broker. */
export type Caller = Pick<Context, "call">;

/** An action's params and reply, as its owner declares them. */
export interface ActionContract {
  params: unknown;
  reply: unknown;
}

/** A service's actions by name (an interface is fine: no index signature is needed). */
export type ActionMap<A> = { [K in keyof A]: ActionContract };

/** What the owner's handler takes and answers: `handler(ctx: Context<ParamsOf<C, "x">>): Promise<ReplyOf<C, "x">>`. */
export type ParamsOf<A extends ActionMap<A>, K extends keyof A> = A[K]["params"];
export type ReplyOf<A extends ActionMap<A>, K extends keyof A> = A[K]["reply"];

export interface ServiceClient<A extends ActionMap<A>> {
  readonly service: string;
  call<K extends keyof A & string>(caller: Caller, action: K, params: A[K]["params"], opts?: CallingOptions): Promise<A[K]["reply"]>;
}

export function serviceClient<A extends ActionMap<A>>(service: string): ServiceClient<A> {
  return {
    service,
    call(caller, action, params, opts) {
      return caller.call(`${service}.${action}`, params, opts);
    },
  };
}

/**
 * A call made as a child of `caller` (same user, request id and trace) whose meta stays its own:
 * a Context's `call` merges a sub-call's meta back into the caller's, so an action that sets its
 * own response headers (a list's X-Total-Count) would leak them into the caller's answer.
 */
export function callApart<A extends ActionMap<A>, K extends keyof A & string>(
  client: ServiceClient<A>,
  caller: Caller,
  action: K,
  params: A[K]["params"],
): Promise<A[K]["reply"]> {
  const ctx = caller as Partial<Context>;
  if (ctx.broker && ctx.meta) return client.call(ctx.broker, action, params, { parentCtx: ctx as Context });
  return client.call(caller, action, params);
}

/** Anything that can emit or broadcast: a context (its meta travels on) or a broker. */
export type Emitter = Pick<Context, "emit" | "broadcast">;

/** Moleculer's groups: only these services' listeners get the event. */
type Groups = string | string[];

/** Emits and broadcasts a service's events, each with the payload its owner declares. */
export interface EventSender<E> {
  emit<K extends keyof E & string>(from: Emitter, event: K, payload: E[K], groups?: Groups): Promise<void>;
  broadcast<K extends keyof E & string>(from: Emitter, event: K, payload: E[K], groups?: Groups): Promise<void>;
}

export function eventSender<E>(): EventSender<E> {
  // In an options object, not bare: a context's emit adds itself (parentCtx) to that object.
  const opts = (groups?: Groups) => (groups === undefined ? undefined : { groups });
  return {
    emit: (from, event, payload, groups) => from.emit(event, payload, opts(groups)),
    broadcast: (from, event, payload, groups) => from.broadcast(event, payload, opts(groups)),
  };
}

/** The meta every request carries from the gateway: who calls, and headers a service sets on the answer. */
export interface RequestMeta {
  user: Principal;
  /** Set by the gateway on ingestion routes: the pipeline's bearer key. */
  ingestKey?: string;
  /**
   * Set by the gateway on ingestion routes that carry an `Idempotency-Key` header: the key as
   * sent (the service checks it) and sha256 of the raw body in hex (docs/api-tour.md, "Retries").
   */
  idempotency?: { key: string; fingerprint: string };
  /** Set by the gateway when the caller signed in with an API token (auth's tokens); never the token itself. */
  token?: {
    token_id: string;
    scope: "read" | "write";
    /** The admin who issued the token, when that is not its user: audit entries name them (docs/security.md, "What an API token may not do"). */
    via_token_of?: string;
  };
  /** Set by the gateway on every route: the caller's address (the socket's peer, or X-Forwarded-For from a TRUST_PROXY proxy). */
  client?: string;
  $responseHeaders?: Record<string, string>;
}
