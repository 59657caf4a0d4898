/** SQL pipelines for the collectors' tests (docs/collectors.md): made through the API as a user would, and what they stored. */
import { Client } from "pg";
import type { Cluster } from "./cluster";
import type { TestNode } from "./node";
import { createEdge, monitor, nextMac, type Hierarchy } from "../e2e/pipelines-fixtures";

export interface SqlPipelineOptions {
  port: number;
  username?: string;
  password?: string;
  database: string;
  table: string;
  time_field?: string;
  /** column → the tag name (Pressure, Flow) of the pipeline's own monitor it is a reading of. */
  columns: Record<string, string>;
  conditions?: { column_name: string; comparison: string; threshold: string | number }[];
  operator?: "AND" | "OR";
  ignore_columns?: string[];
  time_field_format?: string;
  /** `Cloud` unless told. */
  data_source?: "Cloud" | "Third-Party-Apps";
  server_address?: string;
}

/** A started Cloud SQL pipeline of the hierarchy's function, its tags on a monitor of its own (tags `pressure`, `flow`); its id. */
export async function startSqlPipeline(c: Cluster, h: Hierarchy, o: SqlPipelineOptions): Promise<string> {
  const t = c as unknown as TestNode;
  const pump = await monitor(t, h.fn, `Pump ${nextMac()}`, "process-monitor", [
    { tag_id: "pressure", tag_name: "Pressure", tag_unit: "bar" },
    { tag_id: "flow", tag_name: "Flow", tag_unit: "m3/h" },
  ]);
  const { id } = await createEdge(t, {
    pipeline_name: `SQL ${o.table} ${nextMac()}`,
    function_id: h.fn,
    data_type: "Production",
    data_source: o.data_source ?? "Cloud",
    data_source_subtype: "SQL",
    settings: {
      mac_address: nextMac(),
      server_address: o.server_address ?? "127.0.0.1",
      port: o.port,
      username: o.username ?? "root",
      password: o.password ?? "",
      config: {
        database: o.database,
        table: o.table,
        time_field: o.time_field ?? "ts",
        last_collected: "none",
        ...(o.time_field_format ? { time_field_format: o.time_field_format } : {}),
        ignore_columns: o.ignore_columns ?? [],
        ...(o.conditions ? { conditions: o.conditions, operator: o.operator ?? "AND" } : {}),
        frequency: 1,
        frequency_unit: "seconds",
      },
    },
    gateway_firmware: { current_version: "1.0.0" },
    tags: Object.entries(o.columns).map(([column_name, tag_name]) => ({ tag_name, tag_desc: "", tag_unit: "", column_name, monitor_id: pump.id })),
  });
  await action(c, id, "start");
  return id;
}

export async function action(c: Cluster, id: string, what: "start" | "stop"): Promise<void> {
  const res = await c.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [id], action: what } });
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
}

export interface ListedPipeline {
  pipeline_id: string;
  status: string;
  heart_beats: Record<string, number | null>;
  last_actions: { action: string; status: string; error?: string }[];
  collected?: number;
  rejected?: number;
}

export async function listed(c: Cluster, h: Hierarchy, id: string): Promise<ListedPipeline> {
  const res = await c.http<ListedPipeline[]>("GET", `/_config/pipelines/_list?function_id=${h.fn}`);
  const p = res.body.find((x) => x.pipeline_id === id);
  if (!p) throw new Error(`pipeline ${id} not listed: ${JSON.stringify(res.body)}`);
  return p;
}

/** What a pipeline stored of a tag: `ts:value` texts, sorted (a reading stored twice shows twice); raw rows: the cluster runs with RAW_READINGS_ONLY. */
export async function stored(db: Client, pipeline_id: string, tag_id: string): Promise<string[]> {
  const { rows } = await db.query<{ t: string; value: number }>(
    `SELECT (extract(epoch FROM ts) * 1000)::bigint AS t, value FROM pipelines.readings WHERE pipeline_id = $1 AND tag_id = $2 ORDER BY ts, value`,
    [pipeline_id, tag_id],
  );
  return rows.map((r) => `${r.t}:${r.value}`);
}

export const sorted = (xs: string[]): string[] => [...xs].sort();
