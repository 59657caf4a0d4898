/**
 * Internal actions: what other services need to know of the hierarchy (names, parents, time
 * zones, retention, tags). Not reachable over HTTP, cached, not scoped: they answer for the whole
 * deployment, null (or nothing) for what does not exist.
 */
import type { Context } from "moleculer";
import * as assets from "./assets";
import type { ConfigActions } from "./config.service";
import * as functions from "./functions";
import * as monitors from "./monitors";
import { text } from "./params";
import * as plants from "./plants";
import * as sites from "./sites";

export const internalActions: ConfigActions = {
  "sites.resolve": {
    visibility: "public",
    params: { site_id: text },
    handler(ctx: Context<{ site_id: string }>) {
      return sites.resolveSite(this.system(ctx), ctx.params.site_id);
    },
  },
  "plants.resolve": {
    visibility: "public",
    params: { plant_id: text },
    handler(ctx: Context<{ plant_id: string }>) {
      return plants.resolvePlant(this.system(ctx), ctx.params.plant_id);
    },
  },
  "functions.resolve": {
    visibility: "public",
    params: { function_id: text },
    handler(ctx: Context<{ function_id: string }>) {
      return functions.functionSummary(this.system(ctx), ctx.params.function_id);
    },
  },
  "assets.resolve": {
    visibility: "public",
    params: { asset_id: text },
    handler(ctx: Context<{ asset_id: string }>) {
      return assets.assetSummary(this.system(ctx), ctx.params.asset_id);
    },
  },
  "monitors.resolve": {
    visibility: "public",
    params: { monitor_ids: { type: "array", max: 10000, items: text } },
    handler(ctx: Context<{ monitor_ids: string[] }>) {
      return monitors.resolveMonitors(this.system(ctx), ctx.params.monitor_ids);
    },
  },
};
