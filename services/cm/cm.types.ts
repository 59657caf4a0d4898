/**
 * The cm service as its handlers see it (`this`): the schema's locals and methods, typed once here
 * so that the action modules are checked against the service cm.service.ts builds, without
 * importing the schema itself.
 */
import type { ActionSchema, Context, Service, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { Caller, RequestMeta } from "../../lib/contract";
import type { ResolvedMonitor } from "../config/contract";
import type { Reading, WaveformMessage } from "../pipelines/contract";
import type { assetView } from "./views";

/** What cm keeps of a capture of the `waveforms` stream (and what `ingest.waveform` takes). */
export type Waveform = Pick<WaveformMessage, "monitor_id" | "tag" | "axis" | "ts" | "sample_rate_hz" | "samples">;

export interface CmLocals {
  db: DataSource;
}

export interface CmMethods {
  storeWaveform(w: Waveform): Promise<boolean>;
  storeReadings(caller: Caller, readings: Reading[]): Promise<number>;
  evaluateAssets(caller: Caller, assetIds: Iterable<string>): Promise<void>;
  assetObject(ctx: Context<unknown, RequestMeta>, asset: { asset_id: string; asset_name: string }): Promise<ReturnType<typeof assetView>>;
  monitorOrFail(ctx: Context<unknown, RequestMeta>, id: string): Promise<ResolvedMonitor>;
}

/** `this` in cm's handlers, events and methods. */
export type CmThis = Service<ServiceSettingSchema> & CmLocals & CmMethods;

/** A group of the service's actions, spread into its schema's `actions`. */
export type CmActions = Record<string, ActionSchema<CmThis>>;
