/** The asset operations: create, delete, update, fetch, list, count. */
import type { Context } from "moleculer";
import type { FieldDoc } from "../../lib/operations";
import { PAGE_FIELDS } from "../../lib/paging";
import * as assets from "./assets";
import type { ConfigActions } from "./config.types";
import type { AssetFilter } from "./contract";
import { MSG } from "./messages";
import { hidden, ID_FIELDS } from "./openapi";
import { id, list, name, optId, optText, page, readBack, text } from "./params";

const optNumber = { type: "number", min: 0, optional: true, nullable: true } as const;
const optAttr = { ...text, optional: true, nullable: true } as const;
/** The spec's attributes, each of its type (units in the AssetAttributes schema); no other key. */
const attributes = {
  type: "object",
  strict: true,
  optional: true,
  nullable: true,
  props: {
    machine_type: optAttr,
    rotating_speed: optNumber,
    manufacturer: optAttr,
    machine_model: optAttr,
    serial_no: optAttr,
    phases: optAttr,
    kw: optNumber,
    frequency: optNumber,
    volts: optNumber,
    amp: optNumber,
    // ISO 20816-3's machine group and foundation (cm's severity zones, docs/api-tour.md).
    machine_group: { type: "enum", values: [1, 2], optional: true, nullable: true },
    foundation: { type: "enum", values: ["rigid", "flexible"], optional: true, nullable: true },
  },
} as const;

const WRITE_FIELDS: Record<string, FieldDoc> = {
  asset_name: { description: "unique within its function, case-insensitively", example: "Main Hydraulic Pump" },
  function_id: { ...ID_FIELDS.function_id, description: "the function the asset is on" },
  // No example: they are derived from the function, and a value that is not its own is refused.
  plant_id: { description: "the function's plant; optional, checked when given" },
  site_id: { description: "the function's site; optional, checked when given" },
  asset_category: { description: "e.g. Rotating, Stationary", example: "Rotating" },
  is_critical: { enum: ["yes", "no"], description: "whether the asset is critical (any case); no when not given", example: "yes" },
  attributes: {
    type: "$AssetAttributes",
    description:
      "the machine's data, every key optional: rotating_speed in RPM, kw in kW, frequency in Hz, volts in V, amp in A; machine_group (1 or 2) and foundation (rigid or flexible) as ISO 20816-3 classes the machine",
    example: { machine_type: "pump", rotating_speed: 1480, manufacturer: "Kirloskar", kw: 15, frequency: 50, volts: 415, amp: 28.5 },
  },
};

const FILTER_FIELDS: Record<string, FieldDoc> = {
  function_id: { ...ID_FIELDS.function_id, description: "only the function's assets" },
  asset_category: { description: "only this category (any case); All: every category", example: "Rotating" },
  is_critical: { enum: ["Yes", "No"], description: "only critical (Yes) or other (No) assets, any case" },
};

const filterParams = { function_id: optId, asset_category: optText, is_critical: optText };

export const assetActions: ConfigActions = {
  "assets.create": {
    http: {
      op: 11,
      routes: ["POST /_config/assets"],
      group: "assets",
      summary: "Create an asset",
      fields: WRITE_FIELDS,
      answer: { id: true },
      errors: [[400, MSG.invalidAssetData], [400, MSG.assetExists("<asset_name>")], [403, MSG.unauthorizedOperation]],
    },
    params: {
      asset_name: name,
      function_id: id,
      plant_id: optId,
      site_id: optId,
      asset_category: name,
      is_critical: optText,
      attributes,
      $$messages: { invalid: MSG.invalidAssetData },
    },
    handler(ctx: Context<assets.AssetWrite>) {
      return assets.createAsset(this.use(ctx), ctx.params);
    },
  },

  "assets.remove": {
    http: {
      op: 12,
      routes: ["DELETE /_config/assets/:asset_id"],
      group: "assets",
      summary: "Delete an asset",
      description: "An asset with monitors attached is kept.",
      fields: { asset_id: ID_FIELDS.asset_id },
      answer: { text: MSG.assetDeleted },
      errors: [[400, MSG.invalidAssetId("<asset_id>")], [400, MSG.assetHasMonitors], [403, MSG.unauthorizedOperation]],
    },
    params: { asset_id: id },
    handler(ctx: Context<{ asset_id: string }>) {
      return assets.removeAsset(this.use(ctx), ctx.params.asset_id);
    },
  },

  "assets.update": {
    http: {
      op: 13,
      routes: ["PUT /_config/assets/:asset_id"],
      group: "assets",
      summary: "Update an asset",
      description: "The create body with is_critical required. Assets do not move: function_id must be the asset's own. Attributes left out are kept.",
      fields: {
        asset_id: ID_FIELDS.asset_id,
        ...WRITE_FIELDS,
        is_critical: { ...WRITE_FIELDS.is_critical, description: "whether the asset is critical (any case)" },
        ...hidden("function_name", "plant_name", "site_name", "monitor_count"),
      },
      answer: { text: MSG.assetUpdated },
      errors: [[400, MSG.invalidAssetId("<asset_id>")], [400, MSG.invalidAssetData], [400, MSG.assetExists("<asset_name>")], [403, MSG.unauthorizedOperation]],
    },
    params: {
      asset_id: id,
      asset_name: name,
      function_id: id,
      plant_id: optId,
      site_id: optId,
      asset_category: name,
      is_critical: text,
      attributes,
      ...readBack("function_name", "plant_name", "site_name", "monitor_count"),
      $$messages: { invalid: MSG.invalidAssetData },
    },
    handler(ctx: Context<assets.AssetWrite & { asset_id: string; is_critical: string }>) {
      return assets.updateAsset(this.use(ctx), ctx.params);
    },
  },

  "assets.get": {
    http: {
      op: 14,
      routes: ["GET /_config/assets/:asset_id"],
      group: "assets",
      summary: "Fetch an asset",
      fields: { asset_id: ID_FIELDS.asset_id },
      answer: { schema: "$Asset" },
      errors: [[400, MSG.invalidAssetId("<asset_id>")]],
    },
    params: { asset_id: id },
    handler(ctx: Context<{ asset_id: string }>) {
      return assets.getAsset(this.use(ctx), ctx.params.asset_id);
    },
  },

  "assets.list": {
    http: {
      op: 15,
      routes: ["GET /_config/assets/_list"],
      group: "assets",
      summary: "List assets",
      description: "The assets the caller may see, filtered by the query, with their monitor counts.",
      fields: { ...FILTER_FIELDS, ...PAGE_FIELDS },
      answer: { schema: "$AssetListItem[]" },
      errors: [[400, MSG.excessInputs], [400, MSG.invalidInput("<field>")]],
    },
    params: { ...filterParams, ...page, $$messages: list },
    handler(ctx: Context<AssetFilter>) {
      return assets.listAssets(this.use(ctx), ctx.params);
    },
  },

  "assets.count": {
    http: {
      op: 16,
      routes: ["GET /_config/assets/_count"],
      group: "assets",
      summary: "Count assets",
      description: "How many assets the list would answer for the same query.",
      fields: FILTER_FIELDS,
      answer: { schema: "integer", example: 12 },
      errors: [[400, MSG.excessInputs], [400, MSG.invalidInput("<field>")]],
    },
    params: { ...filterParams, $$messages: list },
    handler(ctx: Context<AssetFilter>) {
      return assets.countAssets(this.use(ctx), ctx.params);
    },
  },
};
