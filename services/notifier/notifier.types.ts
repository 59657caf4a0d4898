/**
 * The notifier service as its handlers see it (`this`): the schema's locals and the method that
 * builds the port (port.ts) a domain module is given. Action modules import these, never the schema.
 */
import type { ActionSchema, Context, Service, ServiceBroker, ServiceSettingSchema } from "moleculer";
import type { NotifierPort, NotifierPortSource } from "./port";

export type NotifierLocals = NotifierPortSource;

export interface NotifierMethods {
  /** The port of internal actions, the alerts stream, timers and lifecycle (the notifier serves no HTTP route). */
  system(ctx: Context | ServiceBroker): NotifierPort;
}

export type NotifierThis = Service<ServiceSettingSchema> & NotifierLocals & NotifierMethods;

/** A module of the notifier's actions, spread into the service's `actions`. */
export type NotifierActions = Record<string, ActionSchema<NotifierThis>>;
