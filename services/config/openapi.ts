/**
 * The resources config answers with, as the docs show them (announced in the service's
 * `openapi` setting), and the field docs its operations share. Ids are UUIDs the service makes.
 */
import { arr, bool, int, measured, obj, ref, type JsonSchema } from "../../lib/openapi-schema";
import type { FieldDoc } from "../../lib/operations";

/** A text with what it holds and, where it helps, a realistic value. */
const text = (description: string, example?: string): JsonSchema => ({
  type: "string",
  description,
  ...(example !== undefined ? { examples: [example] } : {}),
});
const uuid = (description: string): JsonSchema => ({ type: "string", format: "uuid", description });
const count = (description: string): JsonSchema => ({ ...int, minimum: 0, description });
const epochMs = (description: string): JsonSchema => ({ type: ["integer", "null"], "x-unit": "epoch ms", description });
const yesNo: JsonSchema = { type: "string", enum: ["Yes", "No"], description: "whether the asset is critical to the function" };

export const CONFIG_SCHEMAS: Record<string, JsonSchema> = {
  Firmware: obj({
    current_version: text("the firmware version running now", "2.4.1"),
    previous_version: text("the version before it; set to the old current_version when only current_version changes", "2.3.0"),
    latest_version: text("the newest version released (lists only; ignored when sent)", "2.5.0"),
  }),
  Site: obj({
    site_id: uuid("the site's id"),
    site_name: text("unique among sites, case-insensitively", "Pune Works"),
    location: text("where the site is", "Chakan MIDC, Pune"),
    latitude: text("decimal degrees as text, -90..90; empty when not set", "18.7606"),
    longitude: text("decimal degrees as text, -180..180; empty when not set", "73.8636"),
    timezone: text("IANA time zone name; trends and retention follow it", "Asia/Kolkata"),
    retention_period: measured("integer", "days", "how long the site's readings are kept (default 180)"),
    edge_firmware: ref("Firmware"),
  }),
  Plant: obj({
    plant_id: uuid("the plant's id"),
    plant_name: text("unique within its site, case-insensitively", "Press Shop"),
    site_id: uuid("the site the plant is on"),
    site_name: text("the site's name", "Pune Works"),
  }),
  PlantListItem: obj({
    plant_id: uuid("the plant's id"),
    plant_name: text("unique within its site", "Press Shop"),
    site_id: uuid("the site the plant is on"),
    site_name: text("the site's name", "Pune Works"),
    function_count: count("functions on the plant"),
    pipeline_count: count("pipelines (gateways) on the plant"),
  }),
  Function: obj({
    function_id: uuid("the function's id"),
    function_name: text("unique within its plant, case-insensitively", "Hydraulics"),
    plant_name: text("the plant's name", "Press Shop"),
    site_name: text("the site's name", "Pune Works"),
  }),
  FunctionListItem: obj({
    function_id: uuid("the function's id"),
    function_name: text("unique within its plant", "Hydraulics"),
    plant_name: text("the plant's name", "Press Shop"),
    site_name: text("the site's name", "Pune Works"),
    monitor_count: count("monitors of the function, those on its assets included"),
  }),
  AssetAttributes: obj({
    machine_type: text("what the machine is, e.g. motor, pump, fan", "pump"),
    rotating_speed: { ...measured("number", "RPM", "running speed; condition monitoring takes it / 60 as the fundamental frequency in Hz"), minimum: 0 },
    manufacturer: text("maker", "Kirloskar"),
    machine_model: text("model", "KDS-1500"),
    serial_no: text("serial number", "KB-20231187"),
    phases: text("electrical phases", "3"),
    kw: { ...measured("number", "kW", "rated power"), minimum: 0 },
    frequency: { ...measured("number", "Hz", "supply frequency"), minimum: 0 },
    volts: { ...measured("number", "V", "rated voltage"), minimum: 0 },
    amp: { ...measured("number", "A", "rated current"), minimum: 0 },
    machine_group: { type: "integer", enum: [1, 2], description: "ISO 20816-3 machine group: 1 large (300 kW to 50 MW), 2 medium (15 kW to 300 kW); absent: 1 from kw 300 up, else 2" },
    foundation: { ...text("ISO 20816-3 foundation; absent: rigid", "rigid"), enum: ["rigid", "flexible"] },
  }),
  Asset: obj({
    asset_id: uuid("the asset's id"),
    asset_name: text("unique within its function, case-insensitively", "Main Hydraulic Pump"),
    function_name: text("the function's name", "Hydraulics"),
    plant_name: text("the plant's name", "Press Shop"),
    site_name: text("the site's name", "Pune Works"),
    attributes: ref("AssetAttributes"),
    asset_category: text("e.g. Rotating, Stationary", "Rotating"),
    is_critical: yesNo,
  }),
  AssetListItem: obj({
    asset_id: uuid("the asset's id"),
    asset_name: text("unique within its function", "Main Hydraulic Pump"),
    is_critical: yesNo,
    asset_category: text("e.g. Rotating, Stationary", "Rotating"),
    function_name: text("the function's name", "Hydraulics"),
    plant_name: text("the plant's name", "Press Shop"),
    site_name: text("the site's name", "Pune Works"),
    monitor_count: count("monitors on the asset"),
  }),
  MonitorTag: obj({
    tag_id: text("the tag's id within the monitor; made by the service when not given", "3b8c1f0e-6d2a-4c1b-9e57-0f4a2d9c7b11"),
    tag_name: text("what the tag measures", "Velocity RMS"),
    tag_desc: text("a longer description", "DE bearing, horizontal"),
    tag_unit: text("unit of its values; energy monitors are read by kWh, kW, V and A", "mm/s"),
    thresholds: obj({
      operational: text("below it a value shows green (a number as text; empty: not set)", "2.8"),
      caution: text("below it a value shows yellow (a number as text; empty: not set)", "4.5"),
      warning: text("below it a value shows orange, at or above it red (a number as text; empty: not set)", "7.1"),
    }),
  }),
  Monitor: obj({
    monitor_id: uuid("the monitor's id"),
    monitor_name: text("unique within its function, case-insensitively", "Pump DE Bearing"),
    monitor_type: text("e.g. condition-monitor, process-monitor, energy-monitor", "condition-monitor"),
    function_id: uuid("the function the monitor is on (an asset's monitor is on the asset's function)"),
    created_at: epochMs("when the monitor was created"),
    gateway: {
      ...obj({
        pipeline_id: text("the pipeline (gateway) it is registered to"),
        data_source: text("the pipeline's data source", "modbus"),
        data_source_subtype: text("the pipeline's data source subtype", "tcp"),
        slave_id: { type: ["integer", "null"], description: "the device's slave id on the data source, or null" },
      }),
      description: "the pipeline the monitor is registered to; an empty object while it is not registered",
    },
    tags: arr(ref("MonitorTag")),
    specs: obj({ speed_type: text("the machine's speed regime", "fixed") }),
    attributes: { type: "object", description: "the client's own keys and values" },
  }),
  MonitorListItem: obj({
    monitor_id: uuid("the monitor's id"),
    monitor_name: text("unique within its function", "Pump DE Bearing"),
    monitor_type: text("e.g. condition-monitor, process-monitor, energy-monitor", "condition-monitor"),
    created_at: epochMs("when the monitor was created"),
    device_registered: { ...bool, description: "whether a pipeline (gateway) has registered the monitor" },
  }),
};

/** The ids of the hierarchy, as path, query and body fields. */
export const ID_FIELDS = {
  site_id: { description: "a site's id", example: "5d0c4e8a-3f2b-4b7e-9a61-1c2d3e4f5a6b" },
  plant_id: { description: "a plant's id", example: "8a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d" },
  function_id: { description: "a function's id", example: "0f1e2d3c-4b5a-4968-8776-655443322110" },
  asset_id: { description: "an asset's id", example: "7c6b5a49-3827-4165-a3b2-c1d0e9f8a7b6" },
  monitor_id: { description: "a monitor's id", example: "1a2b3c4d-5e6f-4a8b-9c0d-1e2f3a4b5c6d" },
  pipeline_id: { description: "a pipeline's (gateway's) id", example: "9e8d7c6b-5a49-4382-a716-5f4e3d2c1b0a" },
} satisfies Record<string, FieldDoc>;

/** Fields a fetch or list answers that an update accepts back and ignores. */
export const hidden = (...names: string[]): Record<string, FieldDoc> => Object.fromEntries(names.map((n) => [n, { hidden: true }]));
