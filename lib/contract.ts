/**
 * What a service's contract module (`services/<name>/contract.ts`) is made of: the params and
 * reply of each action other services call, and a typed client over them. Consumers import the
 * owner's contract and call through its client, so a boundary type is written once, by its owner.
 *
 *   // services/config/contract.ts
 *   export interface ConfigActions {
 *     "monitors.resolve": { params: { monitor_ids: string[] }; reply: ResolvedMonitor[] };
 *   }
 *   export const configClient = serviceClient<ConfigActions>("config");
 *
 *   // a consumer
 *   const monitors = await configClient.call(ctx, "monitors.resolve", { monitor_ids });
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

export type ActionMap = Record<string, ActionContract>;

export interface ServiceClient<A extends ActionMap> {
  readonly service: string;
  call<K extends keyof A & string>(caller: Caller, action: K, params: A[K]["params"], opts?: CallingOptions): Promise<A[K]["reply"]>;
}

export function serviceClient<A extends ActionMap>(service: string): ServiceClient<A> {
  return {
    service,
    call(caller, action, params, opts) {
      return caller.call(`${service}.${action}`, params, opts);
    },
  };
}

/** The meta every request carries from the gateway: who calls, and headers a service sets on the answer. */
export interface RequestMeta {
  user: Principal;
  /** Set by the gateway on ingestion routes: the pipeline's bearer key. */
  ingestKey?: string;
  $responseHeaders?: Record<string, string>;
}
