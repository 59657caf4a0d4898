/**
 * Input rules of pipelines (spec ops 46-52): the action params and the per-subtype settings and
 * tag items, as fastest-validator schemas. A pipeline's settings and tags depend on its subtype,
 * so the action params take them as objects and `checkPipelineBody` checks them against the
 * subtype's schema with the same messages.
 */
import type { ValidationSchema } from "fastest-validator";
import { compileParams, MAX_TEXT, type Checker, type Finding, type InputMessages } from "../../lib/validation";
import { MSG } from "./messages";
import { PAGE_PARAMS } from "../../lib/paging";
import { OPCUA_SECURITY_MODES, OPCUA_SECURITY_POLICIES } from "../../lib/opcua-source";

export const DATA_TYPES = ["Condition", "Process", "Energy", "Production", "Others"] as const;
// The spec spells the edge source both ways.
export const DATA_SOURCES = ["Edge IOT Gateway", "Edge IoT Gateway", "Third-Party-Apps", "Cloud"] as const;
export const EDGE_SUBTYPES = ["File", "SQL", "Modbus RTU", "OPC-UA"] as const;
export type EdgeSubtype = (typeof EDGE_SUBTYPES)[number];

export const text = { type: "string", max: MAX_TEXT } as const;
export const optText = { ...text, optional: true } as const;
/** The path's id of every operation on one pipeline. */
export const idParams = { pipeline_id: text } as const;
const int = { type: "number", integer: true } as const;
const optInt = { ...int, optional: true } as const;
const bool = { type: "boolean" } as const;
const optBool = { ...bool, optional: true } as const;
const textList = { type: "array", max: 1000, items: text } as const;

/** `settings.server_url` and `tags[2].tag_name` both name the key `server_url` / `tag_name`. */
export const leafKey = (field: string): string => field.replace(/\[\d+\]/g, "").split(".").pop() ?? field;

/** Edge-server messages (op 50): a missing key names itself, an unknown key is `Invalid input key`. */
export const EDGE_MESSAGES: InputMessages = {
  insufficient: (field) => MSG.insufficientInput(leafKey(field)),
  unknown: MSG.invalidInputKey,
};

const firmware = {
  type: "object",
  strict: true,
  props: { current_version: optText, previous_version: optText },
} as const;

/** Declared as an array of objects and sent as one object (spec op 50): both are taken. */
const gatewayFirmware = [firmware, { type: "array", max: 1, items: firmware }];

const option = { type: "object", props: { value: { type: "any", optional: true }, inputDisplay: { type: "any", optional: true } } };

/** One registration item (ops 48, 50): a slave of the gateway and the monitor it feeds. */
const registrationItem = {
  type: "object",
  strict: true,
  props: {
    monitor_id: text,
    slave_id: [text, int],
    registered_by_asset: bool,
    asset_id: { ...optText, nullable: true },
    asset_name: { ...optText, nullable: true },
    address: { ...optText, nullable: true },
    function_id: { ...optText, nullable: true },
    function_name: { ...optText, nullable: true },
    monitor_name: { ...optText, nullable: true },
    asset_options: { type: "array", optional: true, max: 10000, items: option },
    monitor_options: { type: "array", optional: true, max: 10000, items: option },
  },
};

const list = (max = 1000) => ({ type: "array", max, items: "object" }) as const;
const page = PAGE_PARAMS;

// ---------------------------------------------------------------- action params

export const thirdPartyCreateParams = {
  pipeline_name: text,
  data_type: { type: "enum", values: [...DATA_TYPES] },
  data_source: { type: "enum", values: [...DATA_SOURCES] },
  data_source_subtype: text,
  site_id: optText,
  plant_id: optText,
  function_id: optText,
  settings: { type: "object" },
  tags: list(),
  registration: { ...list(), optional: true },
  function_enabled_in_registration: optBool,
  firmware_update: { ...optInt, min: 0 },
  data_directory: optText,
} as const;

export const thirdPartyUpdateParams = {
  pipeline_id: text,
  pipeline_name: optText,
  data_type: { type: "enum", values: [...DATA_TYPES], optional: true },
  data_source: { type: "enum", values: [...DATA_SOURCES], optional: true },
  data_source_subtype: optText,
  site_id: optText,
  plant_id: optText,
  function_id: optText,
  settings: { type: "object", optional: true },
  tags: list(),
  registration: { ...list(), optional: true },
  function_enabled_in_registration: optBool,
  firmware_update: { ...optInt, min: 0 },
  data_directory: optText,
} as const;

export const edgeCreateParams = {
  function_id: optText,
  plant_id: optText,
  site_id: optText,
  pipeline_name: text,
  data_type: { type: "enum", values: [...DATA_TYPES] },
  data_source: { type: "enum", values: [...DATA_SOURCES] },
  data_source_subtype: { type: "enum", values: [...EDGE_SUBTYPES] },
  settings: { type: "object" },
  gateway_firmware: gatewayFirmware,
  tags: list(),
  registration: { ...list(), optional: true },
  function_enabled_in_registration: optBool,
  $$messages: EDGE_MESSAGES,
} as const;

/** Op 52: the spec names the required fields; the rest are taken as on create, all optional. */
export const edgeUpdateParams = {
  pipeline_id: text,
  function_id: optText,
  plant_id: optText,
  site_id: optText,
  pipeline_name: text,
  data_type: { type: "enum", values: [...DATA_TYPES], optional: true },
  data_source: { type: "enum", values: [...DATA_SOURCES], optional: true },
  data_source_subtype: { type: "enum", values: [...EDGE_SUBTYPES], optional: true },
  settings: { type: "object" },
  gateway_firmware: [...gatewayFirmware.map((r) => ({ ...r, optional: true }))],
  tags: list(),
  registration: { ...list(), optional: true },
  function_enabled_in_registration: optBool,
  $$messages: EDGE_MESSAGES,
} as const;

export const listParams = {
  plant_id: optText,
  function_id: optText,
  ...page,
  $$messages: { unknown: MSG.excessInputs },
} as const;

export const countParams = {
  plant_id: optText,
  function_id: optText,
  status: optText,
  $$messages: { unknown: MSG.excessInputs },
} as const;

// ---------------------------------------------------------------- per-subtype rules

const tagBase = { tag_name: text, tag_desc: text, tag_unit: text };
const strictItems = (props: ValidationSchema) => ({ type: "array", max: 1000, items: { type: "object", strict: true, props } });

/** An OPC-UA source's security (docs/collectors.md#opc-ua): optional, None when left out. */
const opcuaSecurity = {
  security_mode: { type: "enum", values: [...OPCUA_SECURITY_MODES], optional: true },
  security_policy: { type: "enum", values: [...OPCUA_SECURITY_POLICIES], optional: true },
};

const EDGE_SETTINGS: Record<EdgeSubtype, ValidationSchema> = {
  "OPC-UA": { mac_address: text, server_url: text, user_name: text, user_password: text, sampling_rate: optInt, ...opcuaSecurity },
  File: {
    mac_address: text,
    separator: text,
    rows_skipped: [text, int],
    time_format: text,
    input_file: text,
    file_name: text,
    file_path: text,
    time_field: text,
    ignore_fields: textList,
    sampling_rate: optInt,
  },
  "Modbus RTU": {
    mac_address: text,
    port: text,
    stopbit: int,
    bytesize: int,
    parity: text,
    baudrate: int,
    sampling_rate: int,
    collect_fft: optBool,
    fft_intervel: optInt,
    fft_intervel_type: { type: "enum", values: ["minutes", "hours"], optional: true },
  },
  SQL: {
    mac_address: text,
    server_address: text,
    port: int,
    username: text,
    // Declared integer by the spec, sent as a string too.
    password: [text, int],
    sampling_rate: optInt,
    config: {
      type: "object",
      strict: true,
      props: {
        database: text,
        table: text,
        time_field: text,
        last_collected: text,
        time_field_format: optText,
        ignore_type: { ...textList, optional: true },
        ignore_columns: { ...textList, optional: true },
        conditions: {
          type: "array",
          optional: true,
          max: 100,
          items: { type: "object", strict: true, props: { column_name: text, comparison: text, threshold: [text, { type: "number" }] } },
        },
        operator: { type: "enum", values: ["OR", "AND"], optional: true },
        frequency: optInt,
        frequency_unit: optText,
      },
    },
  },
};

const EDGE_TAGS: Record<EdgeSubtype, ValidationSchema> = {
  "OPC-UA": { ...tagBase, monitor_id: text, address: text, tag_id: text },
  // `moniter_id`: the spec's spelling, kept on purpose.
  File: { ...tagBase, field_name: text, tag_id: text, moniter_id: optText, registered_by_asset: optBool, asset_id: optText, is_production: optBool },
  "Modbus RTU": {
    ...tagBase,
    address: text,
    decode_bits: { type: "enum", values: ["8", "16", "32", "64"] },
    decode_type: { type: "enum", values: ["unsign_int", "float", "int"] },
    scale: int,
  },
  SQL: { ...tagBase, column_name: text, monitor_id: text },
};

const THIRD_PARTY_SETTINGS: Record<string, ValidationSchema> = {
  "OPC-UA": { server_url: text, user_name: text, user_password: text, ...opcuaSecurity },
  File: { file_name: text, file_path: text, time_field: optText },
};

const THIRD_PARTY_TAG = { ...tagBase, address: optText, monitor_id: optText, tag_id: optText };

const settingsOf = (props: ValidationSchema, strict: boolean): ValidationSchema => ({ settings: { type: "object", strict, props } });

const edgeSettings = Object.fromEntries(
  EDGE_SUBTYPES.map((s) => [s, compileParams(settingsOf(EDGE_SETTINGS[s], true), EDGE_MESSAGES)]),
) as Record<EdgeSubtype, Checker>;
const edgeTags = Object.fromEntries(
  EDGE_SUBTYPES.map((s) => [s, compileParams({ tags: strictItems(EDGE_TAGS[s]) }, EDGE_MESSAGES)]),
) as Record<EdgeSubtype, Checker>;
const registrationSchema = { registration: { type: "array", max: 1000, items: registrationItem } };
const registrationCheck = compileParams(registrationSchema, EDGE_MESSAGES);
const registrationCheckThirdParty = compileParams(registrationSchema);
const thirdPartyTags = compileParams({ tags: strictItems(THIRD_PARTY_TAG) });
const thirdPartySettingsBase = compileParams(settingsOf({ mac_address: text, sampling_rate: optInt }, false));
const thirdPartySettings = Object.fromEntries(
  Object.entries(THIRD_PARTY_SETTINGS).map(([s, schema]) => [s, compileParams(settingsOf(schema, false))]),
) as Record<string, Checker>;

export interface PipelineBody {
  data_type: string;
  data_source_subtype: string;
  settings: Record<string, unknown>;
  tags: Record<string, unknown>[];
  registration?: Record<string, unknown>[];
}

/** The first rule the body breaks (the spec's message and the input at fault), or null. Ops 50 and 52. */
export function checkEdgeBody(body: PipelineBody): Finding | null {
  const subtype = body.data_source_subtype as EdgeSubtype;
  if (subtype === "SQL" && body.data_type !== "Production") return { message: MSG.sqlOnlyProduction, field: "data_type" };
  const settings = edgeSettings[subtype]({ settings: body.settings });
  if (settings !== true) return settings;
  const tags = edgeTags[subtype]({ tags: body.tags });
  if (tags !== true) return tags;
  const production = body.data_type === "Production" ? -1 : body.tags.findIndex((t) => t.is_production !== undefined);
  if (production >= 0) return { message: MSG.invalidInput("is_production"), field: `tags[${production}].is_production` };
  if (body.registration) {
    const reg = registrationCheck({ registration: body.registration });
    if (reg !== true) return reg;
  }
  return null;
}

/** Ops 46 and 48: the settings every third-party pipeline has, its subtype's, and tag items. */
export function checkThirdPartyBody(body: Partial<PipelineBody> & { data_source_subtype: string }): Finding | null {
  if (body.settings) {
    const base = thirdPartySettingsBase({ settings: body.settings });
    if (base !== true) return base;
    const bySubtype = thirdPartySettings[body.data_source_subtype];
    if (bySubtype) {
      const res = bySubtype({ settings: body.settings });
      if (res !== true) return res;
    }
    if (!Object.values(body.settings).every(isPlainValue)) return { message: MSG.invalidInput("settings"), field: "settings" };
  }
  if (body.tags) {
    const tags = thirdPartyTags({ tags: body.tags });
    if (tags !== true) return tags;
  }
  if (body.registration) {
    const reg = registrationCheckThirdParty({ registration: body.registration });
    if (reg !== true) return reg;
  }
  return null;
}

/** Third-party settings are open (integrations differ) but hold plain, bounded values. */
function isPlainValue(v: unknown): boolean {
  if (v === null || typeof v === "number" || typeof v === "boolean") return true;
  if (typeof v === "string") return v.length <= 4096;
  if (Array.isArray(v)) return v.length <= 1000 && v.every(isPlainValue);
  if (typeof v === "object") return JSON.stringify(v).length <= 65536;
  return false;
}
