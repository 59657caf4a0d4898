/**
 * What the config service tells the others: `config.<entity>.created|updated|deleted`, the
 * payload the entity as stored plus the ids of its site, plant and function. A deleted event
 * carries the row as it was. And what it learns: the pipelines service's registrations.
 */
import type { MonitorTag } from "./rules";

export type ConfigChange = "created" | "updated" | "deleted";

export interface SiteEvent {
  site_id: string;
  site_name: string;
  location: string;
  latitude: string;
  longitude: string;
  timezone: string;
  retention_period: number;
  edge_firmware: { current_version: string; previous_version: string };
}

export interface PlantEvent {
  plant_id: string;
  plant_name: string;
  site_id: string;
}

export interface FunctionEvent {
  function_id: string;
  function_name: string;
  plant_id: string;
  site_id: string;
}

export interface AssetEvent {
  asset_id: string;
  asset_name: string;
  asset_category: string;
  is_critical: "Yes" | "No";
  attributes: Record<string, unknown>;
  function_id: string;
  plant_id: string;
  site_id: string;
}

export interface MonitorEvent {
  monitor_id: string;
  monitor_name: string;
  monitor_type: string;
  asset_id: string | null;
  function_id: string;
  plant_id: string;
  site_id: string;
  tags: MonitorTag[];
  specs: Record<string, unknown>;
  attributes: Record<string, unknown>;
  created_at: number;
}

export interface ConfigEvents {
  site: SiteEvent;
  plant: PlantEvent;
  function: FunctionEvent;
  asset: AssetEvent;
  monitor: MonitorEvent;
}

export type ConfigEntity = keyof ConfigEvents;

/** `pipelines.monitor.registered`, emitted by the pipelines service. */
export interface MonitorRegistered {
  monitor_id: string;
  pipeline_id: string;
  data_source?: string | null;
  data_source_subtype?: string | null;
  slave_id?: number | string | null;
  data_type?: string | null;
}

/** `pipelines.monitor.unregistered`, emitted by the pipelines service. */
export interface MonitorUnregistered {
  monitor_id: string;
  pipeline_id: string;
}
