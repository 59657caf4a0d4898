/**
 * `MqttPort`: everything the mqtt service's domain modules use: the pipelines service's Sparkplug
 * actions as plain async functions, and the log. Built once by the schema's `system()`, since a
 * gateway's session outlives any request.
 */
import type { SparkplugIngested, SparkplugMessage, SparkplugNode } from "../pipelines/contract";

export interface MqttLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface MqttPort {
  /** CONNECT's check: the pipeline these credentials open, as an edge node; null when wrong. */
  connect(pipeline_id: string, ingest_key: string): Promise<SparkplugNode | null>;
  /** The host's lookup of a node seen on the plant's broker. */
  nodeOf(edge_node: string): Promise<SparkplugNode | null>;
  /** A node's messages that waited behind each other, stored in one transaction, each once: an answer a message. */
  readings(pipeline_id: string, messages: SparkplugMessage[]): Promise<SparkplugIngested[]>;
  birth(pipeline_id: string, ts: number): Promise<void>;
  death(pipeline_id: string, ts: number): Promise<void>;
  /** The node let go of its pipeline: a pending stop completes. */
  release(pipeline_id: string): Promise<void>;
  /**
   * The node is connected here (front door: its connection; plant's broker: its birth until its
   * death): while it is, on any replica, a stop waits for its release; with none, a stop completes
   * when it is queued (docs/sparkplug.md#stopping). Resolves once the pipelines service can see it.
   */
  present(pipeline_id: string): Promise<void>;
  /** No longer connected here (told before its release). */
  absent(pipeline_id: string): Promise<void>;
  /** The node was heard (a message other than a birth or death): `heart_beats.gateway`. */
  heard(pipeline_id: string, ts: number): Promise<void>;
  log: MqttLog;
}
