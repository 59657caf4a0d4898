/**
 * The ems service as its handlers see it (`this`): the schema's locals and methods, typed once
 * here so that the action modules are checked against the service ems.service.ts builds, without
 * importing the schema itself.
 */
import type { ActionSchema, Context, Service, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { Caller, RequestMeta } from "../../lib/contract";
import type { EmsPort } from "./port";

export interface EmsLocals {
  db: DataSource;
}

export interface EmsMethods {
  /** The port of an HTTP operation: its caller and scope (401 without a caller). */
  use(ctx: Context<unknown, Partial<RequestMeta>>): EmsPort;
  /** The port of an internal action, event, stream message or job: the whole deployment. */
  system(caller: Caller): EmsPort;
}

/** `this` in ems's handlers, events and methods. */
export type EmsThis = Service<ServiceSettingSchema> & EmsLocals & EmsMethods;

/** A group of the service's actions, spread into its schema's `actions`. */
export type EmsActions = Record<string, ActionSchema<EmsThis>>;
