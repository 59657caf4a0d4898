/**
 * The resources pipelines answers with, as the docs show them (announced in the service's
 * `openapi` setting), and the field docs its operations share. Times are epoch ms.
 */
import { arr, bool, int, measured, nullable, num, obj, ref, str, strings, type JsonSchema } from "../../lib/openapi-schema";
import type { FieldDoc } from "../../lib/operations";
import { COMPONENTS } from "./pipelines.repo";
import { PIPELINE_STATUSES } from "./rules";
import { DATA_SOURCES, DATA_TYPES, EDGE_SUBTYPES } from "./schemas";

const PIPELINE = "7b1e4c2a-5d3f-4e8a-9c6b-1f2a3b4c5d6e";

/** Example ids, one per kind of thing, so that an example reads as one story. */
export const EXAMPLE = {
  pipeline_id: PIPELINE,
  site_id: "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9",
  plant_id: "c2d4e6f8-1a3b-4c5d-8e7f-9a0b1c2d3e4f",
  function_id: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
  monitor_id: "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a",
  action_id: "0d1e2f3a-4b5c-4d6e-8f7a-8b9c0d1e2f3a",
  /** 2026-01-15 10:30 UTC (16:00 in Asia/Kolkata). */
  ts: 1768473000000,
  mac: "02:42:ac:11:00:02",
  created: { id: PIPELINE, ingest_key: "pk_rdeEK0LRgyU26PpiXYkzVpfk8PEZNcIhMsbEr8RTQrc" },
} as const;

/** An ingest key as a rotation answers it. */
export const EXAMPLE_INGEST_KEY = "pk_Qm9vdHN0cmFwS2V5Um90YXRlZDIwMjZGZWJydWFyeQ";

const text = (description: string, example?: string): JsonSchema => ({
  type: "string",
  description,
  ...(example !== undefined ? { examples: [example] } : {}),
});
const uuid = (description: string): JsonSchema => ({ type: "string", format: "uuid", description });
const described = (schema: JsonSchema, description: string): JsonSchema => ({ ...schema, description });
const epochMs = (description: string): JsonSchema => measured("integer", "epoch ms", description);
const epochMsOrNull = (description: string): JsonSchema => ({ type: ["integer", "null"], "x-unit": "epoch ms", description });
const oneOf = (values: readonly string[], description: string): JsonSchema => ({ type: "string", enum: [...values], description });

const modbusSettings = { mac_address: EXAMPLE.mac, port: "/dev/ttyUSB0", stopbit: 1, bytesize: 8, parity: "N", baudrate: 9600, sampling_rate: 10 };
const modbusTag = { tag_name: "Pressure", tag_desc: "Discharge pressure", tag_unit: "bar", address: "40001", decode_bits: "16", decode_type: "float", scale: 1 };
const opcUaSettings = { mac_address: EXAMPLE.mac, sampling_rate: 5, server_url: "opc.tcp://historian.pune-works.local:4840", user_name: "opc", user_password: "s3cret" };
const opcUaTag = { tag_name: "Pressure", tag_desc: "Discharge pressure", tag_unit: "bar", address: "ns=2;s=Press2.P1" };

const pipelineFields = {
  pipeline_id: uuid("the pipeline's id"),
  pipeline_name: str,
  function_id: described(str, "the function it feeds, or null when placed on a plant only"),
  plant_id: str,
  site_id: str,
  data_type: oneOf(DATA_TYPES, "what the pipeline's data is"),
  data_source: oneOf(DATA_SOURCES, "where the data comes from"),
  data_source_subtype: described(str, `${EDGE_SUBTYPES.join(", ")}, or a third-party integration's own subtype`),
  status: oneOf(PIPELINE_STATUSES, "stopped when created; starting/stopping while an action is queued, then running/stopped, or error"),
  created_at: epochMs("when it was created"),
};

/** A pipeline the service collects itself (docs/collectors.md) says what it collected; absent on the others. */
const COLLECTION_COUNTS = {
  collected: described(int, "readings collected from the pipeline's source and stored (collected pipelines only)"),
  rejected: described(int, "readings of its source rejected (collected pipelines only)"),
};

export const PIPELINES_SCHEMAS = {
  History: obj(
    {
      monitor_id: uuid("the monitor's id"),
      tag: text("the tag's name", "vibration"),
      tag_unit: text("the tag's unit", "mm/s"),
      bucket_ms: measured("integer", "ms", "the buckets' size; 0 when the points are the raw readings"),
      points: arr(ref("HistoryPoint")),
    },
    ["monitor_id", "tag", "tag_unit", "bucket_ms", "points"],
  ),
  HistoryPoint: obj(
    {
      timestamp: epochMs("a raw reading's time; a bucket's start (or `from` for a first bucket that begins before it)"),
      value: described(num, "the reading, or the mean of the bucket's readings"),
      min: described(num, "the bucket's lowest reading (the reading itself when raw)"),
      max: described(num, "the bucket's highest reading (the reading itself when raw)"),
      count: described(int, "readings in the bucket (1 when raw)"),
    },
    ["timestamp", "value", "min", "max", "count"],
  ),
  PipelineCreated: obj(
    {
      id: uuid("the new pipeline's id"),
      ingest_key: described(str, "secret, shown once: the gateway sends it as `Authorization: Bearer <ingest_key>` to the ingestion routes"),
    },
    ["id", "ingest_key"],
  ),
  Storage: obj(
    {
      sites: arr(
        obj(
          {
            site_id: uuid("the site"),
            site_name: str,
            readings: described(int, "readings kept, raw and compressed"),
            compressed_readings: described(int, "of them, those kept compressed (past HISTORY_COMPRESS_AFTER)"),
            bytes: described(int, "what the site's readings take on disk: raw rows, chunks, rollups, their indexes and TOAST"),
            bytes_per_reading: { ...nullable("number"), description: "bytes over readings; null without readings" },
            oldest: { ...nullable("integer"), description: "the oldest reading kept, epoch ms" },
            newest: { ...nullable("integer"), description: "the newest reading kept, epoch ms" },
            retention_period: described(int, "days the site's readings are kept"),
          },
          ["site_id", "site_name", "readings", "compressed_readings", "bytes", "bytes_per_reading", "oldest", "newest", "retention_period"],
        ),
      ),
    },
    ["sites"],
  ),
  IngestKey: obj(
    {
      ingest_key: described(str, "secret, shown once: the pipeline's new key; the one it replaces works for INGEST_KEY_GRACE_S more"),
    },
    ["ingest_key"],
  ),
  // Config owns it (sites' edge_firmware); this is a copy of the same content, so either service alone documents it.
  Firmware: obj({
    current_version: text("the firmware version running now", "2.4.1"),
    previous_version: text("the version before it; set to the old current_version when only current_version changes", "2.3.0"),
    latest_version: text("the newest version released (lists only; ignored when sent)", "2.5.0"),
  }),
  PipelineAction: obj({
    action_id: uuid("the action's id, which the gateway acks"),
    action: oneOf(["start", "stop"], "what the gateway is asked to do"),
    status: oneOf(["in_progress", "completed", "failed"], "in_progress until the gateway acks it or it times out (failed)"),
    issued_at: epochMs("when it was queued"),
    completed_at: epochMsOrNull("when it was acked or timed out; null while in progress"),
    error: described(str, "a pipeline the service collects itself (docs/collectors.md): why its source failed, on its latest start; absent otherwise"),
  }),
  Pipeline: obj({
    ...pipelineFields,
    total_event_count: described(int, "readings and waveforms received"),
    firmware_update: int,
    data_directory: str,
    settings: { type: "object", description: "per subtype: mac_address and the subtype's fields; sampling_rate in Hz", examples: [modbusSettings] },
    tags: { ...arr({ type: "object" }), description: "what the pipeline reads: tag_name, tag_desc, tag_unit and the subtype's fields", examples: [[modbusTag]] },
    registration: { ...arr({ type: "object" }), description: "per slave: monitor_id, slave_id, registered_by_asset and optional names" },
    function_enabled_in_registration: bool,
    gateway_firmware: { ...ref("Firmware"), description: "edge-server pipelines only" },
    ...COLLECTION_COUNTS,
  }),
  PipelineListItem: obj({
    ...pipelineFields,
    plant_name: str,
    function_name: described(str, "null when the pipeline is on a plant only"),
    gateway_firmware: ref("Firmware"),
    total_events: described(int, "readings and waveforms received"),
    latest_event: { ...arr({ type: "object" }), description: "the last readings (or waveform) received, at most 5" },
    heart_beats: obj(Object.fromEntries(COMPONENTS.map((c) => [c, epochMsOrNull(`when the gateway's ${c} last reported; null when never`)]))),
    last_actions: { ...arr(ref("PipelineAction")), description: "the last 5 actions, newest first" },
    expired_license_caution: bool,
    ...COLLECTION_COUNTS,
  }),
  Reading: obj(
    {
      monitor_id: uuid("a monitor the pipeline is mapped to"),
      tag_id: described(str, "one of the monitor's tags that the pipeline maps"),
      ts: epochMs("when the value was measured"),
      value: described(num, "in the tag's unit"),
    },
    ["monitor_id", "tag_id", "ts", "value"],
  ),
  IngestAnswer: obj({
    accepted: described(int, "readings kept"),
    rejected: arr(obj({ index: described(int, "the reading's place in the list, from 0"), reason: str })),
  }),
  GatewayConfig: obj({
    ...strings("pipeline_id", "pipeline_name", "data_type", "data_source", "data_source_subtype", "status"),
    settings: { type: "object" },
    tags: arr({ type: "object" }),
    registration: arr({ type: "object" }),
    monitors: arr(
      obj({
        ...strings("monitor_id", "monitor_name", "monitor_type"),
        asset_attributes: { type: "object" },
        tags: arr(obj(strings("tag_id", "tag_name", "tag_unit"))),
      }),
    ),
  }),
};

// ---------------------------------------------------------------- field docs of the operations

/** Where a pipeline goes: its plant, given or its function's. */
export const PLACE_FIELDS: Record<"site_id" | "plant_id" | "function_id", FieldDoc> = {
  site_id: { description: "the site; when given it must be the plant's", example: EXAMPLE.site_id },
  plant_id: { description: "the plant; give it, the function, or both", example: EXAMPLE.plant_id },
  function_id: { description: "the function the pipeline feeds; its plant becomes the pipeline's", example: EXAMPLE.function_id },
};

const REGISTRATION: FieldDoc = {
  description: "per slave of the gateway: monitor_id, slave_id and registered_by_asset (asset_id, asset_name, address optional); a monitor belongs to one gateway",
  example: [{ monitor_id: EXAMPLE.monitor_id, slave_id: "1", registered_by_asset: false }],
};

const COMMON_BODY: Record<string, FieldDoc> = {
  pipeline_name: { description: "a name for people", example: "Press line 2 gateway" },
  data_type: { description: "what the pipeline's data is", example: "Process" },
  registration: REGISTRATION,
  function_enabled_in_registration: {
    description: "true: registration may assign slaves to monitors of other functions of the plant",
    example: false,
  },
  ...PLACE_FIELDS,
};

export const EDGE_FIELDS: Record<string, FieldDoc> = {
  ...COMMON_BODY,
  data_source: { description: "where the data comes from (Edge IoT Gateway is taken too)", example: "Edge IOT Gateway" },
  data_source_subtype: { description: "how the gateway reads its source; decides the settings and tag fields", example: "Modbus RTU" },
  settings: {
    description:
      "mac_address (unique among gateways) and the subtype's fields: OPC-UA server_url, user_name, user_password, optionally security_mode (None, Sign, SignAndEncrypt) and security_policy; File separator, rows_skipped, " +
      "time_format, input_file, file_name, file_path, time_field, ignore_fields; Modbus RTU port, stopbit, bytesize, parity, baudrate, sampling_rate " +
      "(Hz), collect_fft, fft_intervel, fft_intervel_type; SQL server_address, port, username, password, config",
    example: modbusSettings,
  },
  tags: {
    description:
      "tag_name, tag_desc, tag_unit and the subtype's fields: OPC-UA monitor_id, address, tag_id; File field_name, tag_id, moniter_id; " +
      "Modbus RTU address, decode_bits, decode_type, scale; SQL column_name, monitor_id",
    example: [modbusTag],
  },
  gateway_firmware: {
    type: "object",
    description: "current_version and previous_version of the gateway's firmware (one object; a list of one is taken too)",
    example: { current_version: "2.1.0", previous_version: "2.0.0" },
  },
};

export const THIRD_PARTY_FIELDS: Record<string, FieldDoc> = {
  ...COMMON_BODY,
  data_source: { description: "where the data comes from", example: "Third-Party-Apps" },
  data_source_subtype: { description: "the integration; OPC-UA and File have settings rules of their own", example: "OPC-UA" },
  settings: {
    description:
      "mac_address, sampling_rate (Hz) and the subtype's fields: OPC-UA server_url, user_name, user_password, optionally security_mode (None, Sign, SignAndEncrypt) and security_policy; File file_name, file_path, time_field",
    example: opcUaSettings,
  },
  tags: { description: "tag_name, tag_desc, tag_unit; address, monitor_id and tag_id optional", example: [opcUaTag] },
  firmware_update: { description: "shown back by the fetch; 0 when not given", example: 0 },
  data_directory: { description: "where the integration keeps its files; shown back by the fetch", example: "/data/historian" },
};

/** The path's id, in the words of each kind. */
export const PIPELINE_ID: Record<"thirdparty" | "edge", FieldDoc> = {
  thirdparty: { description: "the pipeline's id", example: EXAMPLE.pipeline_id },
  edge: { description: "the gateway's (edge-server pipeline's) id", example: EXAMPLE.pipeline_id },
};

/** The list filters: at least one of them. */
export const FILTER_FIELDS: Record<string, FieldDoc> = {
  plant_id: { description: "a plant's pipelines; give it, function_id, or both", example: EXAMPLE.plant_id },
  function_id: { description: "a function's pipelines", example: EXAMPLE.function_id },
};

/** The ingestion routes' path id: the pipeline the bearer key belongs to. */
export const INGEST_ID: FieldDoc = { description: "the pipeline whose ingest key is the bearer token", example: EXAMPLE.pipeline_id };
