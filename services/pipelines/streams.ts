/**
 * What the pipelines service publishes and emits, typed once for its consumers (alerting, cm,
 * ems): the `readings` and `waveforms` durable streams (mixins/stream.mixin.ts) and the
 * registration events the config service keeps its monitors' gateway from.
 */
import type { AcceptedReading } from "./rules";

/** One message of the `readings` stream: the readings one gateway request stored, in order. */
export interface ReadingBatch {
  batch_id: string;
  pipeline_id: string;
  site_id: string;
  plant_id: string;
  readings: AcceptedReading[];
}

/** A reading's stable id: its batch and its place in it (the same after any redelivery). */
export const readingId = (batch: Pick<ReadingBatch, "batch_id">, index: number): string => `${batch.batch_id}:${index}`;

/** One message of the `waveforms` stream: a vibration capture (contract: waveforms). */
export interface WaveformMessage {
  waveform_id: string;
  pipeline_id: string;
  site_id: string;
  plant_id: string;
  monitor_id: string;
  tag: string;
  axis: "x" | "y" | "z";
  /** Epoch ms of the capture. */
  ts: number;
  sample_rate_hz: number;
  samples: number[];
}

/** `pipelines.monitor.registered`: a pipeline feeds this monitor (sent again whenever the pipeline changes). */
export interface MonitorRegisteredEvent {
  monitor_id: string;
  pipeline_id: string;
  data_source: string;
  data_source_subtype: string;
  /** The registration's slave id when it is a number, else null. */
  slave_id: number | null;
  data_type: string;
}

/** `pipelines.monitor.unregistered`: the pipeline no longer feeds this monitor (or was deleted). */
export interface MonitorUnregisteredEvent {
  monitor_id: string;
  pipeline_id: string;
}

export const STREAMS = { readings: "readings", waveforms: "waveforms" } as const;
