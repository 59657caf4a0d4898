/** The condition of an asset, and of a function's assets: status, faults and the open event (assets.ts). */
import type { Context } from "moleculer";
import type { RequestMeta } from "../../lib/contract";
import { PAGE_FIELDS, PAGE_PARAMS } from "../../lib/paging";
import { MAX_TEXT } from "../../lib/validation";
import * as assets from "./assets";
import type { CmActions } from "./cm.types";
import { MSG } from "./messages";
import { ASSET_ID_FIELD, EXAMPLES, FUNCTION_ID } from "./openapi";

const text = { type: "string", max: MAX_TEXT } as const;
const excess = { unknown: MSG.excessInputs } as const;

export const assetsActions: CmActions = {
  "assets.get": {
    http: {
      op: 73,
      routes: ["GET /_cm/assets/:asset_id"],
      group: "cm",
      summary: "Condition of an asset",
      description: "The asset's status from its monitors' latest values, the faults its latest spectra show, and its open event.",
      fields: { asset_id: ASSET_ID_FIELD },
      answer: { schema: "$CmAsset", example: EXAMPLES.asset },
      errors: [[400, MSG.excessInputs], [400, MSG.invalidAssetId]],
    },
    params: { asset_id: text, $$messages: excess },
    handler(ctx: Context<{ asset_id: string }, RequestMeta>) {
      return assets.getAsset(this.use(ctx), ctx.params.asset_id);
    },
  },

  "assets.severity": {
    http: {
      routes: ["GET /_cm/assets/:asset_id/_severity"],
      group: "cm",
      summary: "ISO 20816-3 severity of an asset",
      description:
        "The zone (A-D) of each velocity tag (a condition monitor's tag in mm/s RMS, 10-1000 Hz) of the asset's monitors from its latest value, " +
        "against the boundaries of the asset's machine_group and foundation (attributes; else from kw, and rigid), and the worst of them. " +
        "A value on a boundary is in the upper zone; a tag without a reading has value, zone and timestamp null.",
      fields: { asset_id: ASSET_ID_FIELD },
      answer: { schema: "$CmSeverity", example: EXAMPLES.severity },
      errors: [[400, MSG.excessInputs], [400, MSG.invalidAssetId]],
    },
    params: { asset_id: text, $$messages: excess },
    handler(ctx: Context<{ asset_id: string }, RequestMeta>) {
      return assets.assetSeverity(this.use(ctx), ctx.params.asset_id);
    },
  },

  "assets.list": {
    http: {
      op: 74,
      routes: ["GET /_cm/assets/_list"],
      group: "cm",
      summary: "Condition of a function's assets",
      description: "The condition of each asset of the function, as the asset operation answers it.",
      fields: { function_id: { description: "the function's id", example: FUNCTION_ID }, ...PAGE_FIELDS },
      answer: { schema: "$CmAsset[]", example: [EXAMPLES.asset] },
      errors: [[400, MSG.excessInputs], [400, MSG.invalidFunctionId]],
    },
    params: { function_id: text, ...PAGE_PARAMS, $$messages: excess },
    handler(ctx: Context<{ function_id: string; limit?: number; offset?: number }, RequestMeta>) {
      return assets.listAssets(this.use(ctx), ctx.params);
    },
  },
};
