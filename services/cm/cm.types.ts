/**
 * The cm service as its handlers see it (`this`): the schema's locals and methods, typed once here
 * so that the action modules are checked against the service cm.service.ts builds, without
 * importing the schema itself.
 */
import type { ActionSchema, Context, Service, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { Caller, RequestMeta } from "../../lib/contract";
import type { CmPort } from "./port";

export interface CmLocals {
  db: DataSource;
}

export interface CmMethods {
  /** The port of an HTTP operation: its caller and scope (401 without a caller). */
  use(ctx: Context<unknown, Partial<RequestMeta>>): CmPort;
  /** The port of an internal action, event, stream message or job: the whole deployment. */
  system(caller: Caller): CmPort;
}

/** `this` in cm's handlers, events and methods. */
export type CmThis = Service<ServiceSettingSchema> & CmLocals & CmMethods;

/** A group of the service's actions, spread into its schema's `actions`. */
export type CmActions = Record<string, ActionSchema<CmThis>>;
