/**
 * `CollectorsPort`: everything the collectors' domain modules use: the pipelines service's
 * collection actions as plain async functions, the source guard, the page size and the log. Built
 * once by the schema's `system()`, since a collection outlives any request.
 */
import type { SourceVerdict } from "../../lib/source-guard";
import type { CollectedAnswer, CollectedPage, CollectedPipeline } from "../pipelines/contract";

export interface CollectorsLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface CollectorsPort {
  /** The pipelines of these subtypes to collect now (a start as their latest action, or a stop pending). */
  pipelines(subtypes: string[]): Promise<CollectedPipeline[]>;
  /** A page stored with its position; rejects with code 409 when the position moved meanwhile. */
  page(page: CollectedPage): Promise<CollectedAnswer>;
  running(pipeline_id: string, ts: number): Promise<void>;
  failed(pipeline_id: string, cause: string): Promise<void>;
  heard(pipeline_id: string, ts: number): Promise<void>;
  stopped(pipeline_id: string): Promise<void>;
  /** Whether a source the user named may be reached, and at which address (lib/source-guard.ts). */
  checkSource(host: string, port: number): Promise<SourceVerdict>;
  /** Where the OPC-UA client keeps its certificate and the servers it trusts (OPCUA_PKI_DIR). */
  opcuaPkiDir: string;
  /** Rows a SQL page reads (COLLECTOR_PAGE_ROWS). */
  pageRows: number;
  log: CollectorsLog;
}
