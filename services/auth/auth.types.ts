/**
 * The auth service as its handlers see it (`this`): the schema's locals and its two methods, which
 * build the port (port.ts) a domain module is given. Action modules import these, never the schema.
 */
import type { ActionSchema, Service, ServiceSettingSchema } from "moleculer";
import type { ThrottleStore } from "../../lib/throttle";
import type { AuthCtx, AuthPort, AuthPortSource, AuthRequestPort } from "./port";

export interface AuthLocals extends AuthPortSource {
  /** Where OTP requests are counted: Redis in a cluster, as the gateway counts sign-ins. */
  throttleStore: ThrottleStore;
  /** Set once the bootstrap admin exists: from then on a joining notifier node is told every contact. */
  announcing: boolean;
}

export interface AuthMethods {
  /** The port of an HTTP request: 401 without a caller. */
  use(ctx: AuthCtx): AuthRequestPort;
  /** The port of internal actions, events and start-up. */
  system(ctx: AuthCtx): AuthPort;
}

export type AuthThis = Service<ServiceSettingSchema> & AuthLocals & AuthMethods;

/** A module of auth's actions, spread into the service's `actions`. */
export type AuthActions = Record<string, ActionSchema<AuthThis>>;
