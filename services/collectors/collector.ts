/** What a collector of any kind is to the replica running it (kinds.ts, runner.ts). */
import type { CollectedPipeline } from "../pipelines/contract";
import type { CollectorsPort } from "./port";

/** One pipeline's collection, running until stopped (or ended by itself: its position moved under it). */
export interface RunningCollector {
  readonly ended: boolean;
  stop(): Promise<void>;
}

export type StartCollector = (port: CollectorsPort, pipeline: CollectedPipeline) => RunningCollector;
