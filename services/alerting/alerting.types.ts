/**
 * The alerting service as its handlers see it (`this`): the schema's locals and methods, typed
 * once here so that the action modules (*.actions.ts) are checked against the same service the
 * schema builds.
 */
import type { ActionSchema, Context, Service, ServiceSettingSchema } from "moleculer";
import type { RequestMeta } from "../../lib/contract";
import type { AlertingEnv, AlertingPort } from "./port";

/** The gateway's meta; events and other services' calls carry no user (they act for the system). */
export type Ctx<P = Record<string, unknown>> = Context<P, Partial<RequestMeta>>;
export type AnyCtx = Context<unknown, Partial<RequestMeta>>;

/** The schema's locals: what the ports are built from (port.ts), the service's logger aside. */
export type AlertingLocals = Omit<AlertingEnv, "logger">;

/** The ports the domain modules work over (port.ts). */
export interface PortMethods {
  /** A signed-in caller's port: 401 without one. */
  use(ctx: AnyCtx): AlertingPort;
  /** The service's own port: internal actions, events (`ctx`), jobs (none). */
  system(ctx?: AnyCtx): AlertingPort;
}

export type AlertingMethods = PortMethods;
export type AlertingThis = Service<ServiceSettingSchema> & AlertingLocals & AlertingMethods;
/** Actions whose handlers see the service as `this`. */
export type AlertingActions = Record<string, ActionSchema<AlertingThis>>;
