/**
 * The ems service as its handlers see it (`this`): the schema's locals and methods, typed once
 * here so that the action modules are checked against the service ems.service.ts builds, without
 * importing the schema itself.
 */
import type { ActionSchema, Service, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { Caller } from "../../lib/contract";
import type { ResolvedMonitor } from "../config/contract";
import type { energyMetrics } from "./metrics";
import type { Reading } from "./rollup";
import type { Range } from "./time";

export interface EmsLocals {
  db: DataSource;
}

export interface EmsMethods {
  storeReadings(caller: Caller, readings: Reading[]): Promise<number>;
  groupMetrics(monitors: ResolvedMonitor[], range: Range): Promise<ReturnType<typeof energyMetrics>>;
}

/** `this` in ems's handlers, events and methods. */
export type EmsThis = Service<ServiceSettingSchema> & EmsLocals & EmsMethods;

/** A group of the service's actions, spread into its schema's `actions`. */
export type EmsActions = Record<string, ActionSchema<EmsThis>>;
