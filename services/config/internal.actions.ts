/**
 * Internal actions: what other services need to know of the hierarchy (names, parents, time
 * zones, retention, tags). Not reachable over HTTP, cached, not scoped: they answer for the whole
 * deployment, null (or nothing) for what does not exist.
 */
import type { Context } from "moleculer";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import * as assets from "./assets";
import type { ConfigActions } from "./config.types";
import type { ConfigContract } from "./contract";
import * as functions from "./functions";
import * as monitors from "./monitors";
import { text } from "./params";
import * as plants from "./plants";
import * as sites from "./sites";

export const internalActions: ConfigActions = {
  "sites.resolve": {
    visibility: "public",
    readOnly: true,
    params: { site_id: text },
    handler(ctx: Context<ParamsOf<ConfigContract, "sites.resolve">>): Promise<ReplyOf<ConfigContract, "sites.resolve">> {
      return sites.resolveSite(this.system(ctx), ctx.params.site_id);
    },
  },
  "plants.resolve": {
    visibility: "public",
    readOnly: true,
    params: { plant_id: text },
    handler(ctx: Context<ParamsOf<ConfigContract, "plants.resolve">>): Promise<ReplyOf<ConfigContract, "plants.resolve">> {
      return plants.resolvePlant(this.system(ctx), ctx.params.plant_id);
    },
  },
  "functions.resolve": {
    visibility: "public",
    readOnly: true,
    params: { function_id: text },
    handler(ctx: Context<ParamsOf<ConfigContract, "functions.resolve">>): Promise<ReplyOf<ConfigContract, "functions.resolve">> {
      return functions.functionSummary(this.system(ctx), ctx.params.function_id);
    },
  },
  "assets.resolve": {
    visibility: "public",
    readOnly: true,
    params: { asset_id: text },
    handler(ctx: Context<ParamsOf<ConfigContract, "assets.resolve">>): Promise<ReplyOf<ConfigContract, "assets.resolve">> {
      return assets.assetSummary(this.system(ctx), ctx.params.asset_id);
    },
  },
  "monitors.resolve": {
    visibility: "public",
    readOnly: true,
    params: { monitor_ids: { type: "array", max: 10000, items: text } },
    handler(ctx: Context<ParamsOf<ConfigContract, "monitors.resolve">>): Promise<ReplyOf<ConfigContract, "monitors.resolve">> {
      return monitors.resolveMonitors(this.system(ctx), ctx.params.monitor_ids);
    },
  },
};
