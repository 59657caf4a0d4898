/** The latest tag values of a monitor, and of an asset's monitors with their threshold colours. */
import type { Context } from "moleculer";
import type { RequestMeta } from "../../lib/contract";
import { DomainError } from "../../lib/errors";
import { PAGE_FIELDS, PAGE_PARAMS, pageOf } from "../../lib/paging";
import { parseIsoDate } from "../../lib/time";
import { MAX_TEXT } from "../../lib/validation";
import { listMonitorIds, resolveMonitors, visibleAsset } from "../config/contract";
import type { CmActions } from "./cm.types";
import { MSG } from "./messages";
import { ASSET_ID_FIELD, EXAMPLES, MONITOR_ID_FIELD } from "./openapi";
import * as repo from "./repo";
import { monitorColorsView, monitorValuesView } from "./views";

const text = { type: "string", max: MAX_TEXT } as const;

interface ListParams {
  asset_id: string;
  from?: string;
  to?: string;
  limit?: number;
  offset?: number;
}

/** `from` and `to` as epoch ms, each where given. */
function windowOf(params: Pick<ListParams, "from" | "to">): { from?: number; to?: number } {
  const window: { from?: number; to?: number } = {};
  for (const key of ["from", "to"] as const) {
    const raw = params[key];
    if (raw === undefined) continue;
    const ts = parseIsoDate(raw);
    if (ts === undefined) throw new DomainError(400, MSG.invalidInput(key));
    window[key] = ts;
  }
  return window;
}

export const monitorsActions: CmActions = {
  "monitors.get": {
    http: {
      op: 71,
      routes: ["GET /_cm/monitors/:monitor_id"],
      group: "cm",
      summary: "Latest tag values of a monitor",
      description: "The latest value of each of the monitor's tags, by tag name, and the time of the newest one.",
      fields: { monitor_id: MONITOR_ID_FIELD },
      answer: { schema: "$MonitorValues", example: EXAMPLES.values },
      errors: [[400, MSG.invalidMonitorId]],
    },
    params: { monitor_id: text },
    async handler(ctx: Context<{ monitor_id: string }, RequestMeta>) {
      const monitor = await this.monitorOrFail(ctx, ctx.params.monitor_id);
      return monitorValuesView(monitor, await repo.latestOfMonitors(this.db, [monitor.monitor_id]));
    },
  },

  /** `from`/`to` bound the latest values shown: one outside the window reads null, grey. */
  "monitors.list": {
    http: {
      op: 72,
      routes: ["GET /_cm/monitors/_list"],
      group: "cm",
      summary: "Latest values of an asset's monitors",
      description:
        "Per monitor of the asset: the latest value of each tag, by tag name, with its colour against the tag's thresholds. " +
        "A latest value outside from..to reads null (grey).",
      fields: {
        asset_id: ASSET_ID_FIELD,
        from: { description: "earliest time of a value shown, ISO 8601", example: "2026-01-01T00:00:00+05:30" },
        to: { description: "latest time of a value shown, ISO 8601", example: "2026-01-02T00:00:00+05:30" },
        ...PAGE_FIELDS,
      },
      answer: { schema: "$MonitorColors[]", example: EXAMPLES.colors },
      errors: [[400, MSG.invalidAssetId], [400, MSG.invalidInput("from")], [400, MSG.invalidInput("to")], [400, MSG.excessInputs]],
    },
    params: {
      asset_id: text,
      from: { ...text, optional: true },
      to: { ...text, optional: true },
      ...PAGE_PARAMS,
      $$messages: { unknown: MSG.excessInputs },
    },
    async handler(ctx: Context<ListParams, RequestMeta>) {
      const window = windowOf(ctx.params);
      const asset = await visibleAsset(ctx, ctx.meta.user, ctx.params.asset_id);
      if (!asset) throw new DomainError(400, MSG.invalidAssetId);
      const monitors = pageOf(ctx, [...(await resolveMonitors(ctx, await listMonitorIds(ctx, { asset_id: asset.asset_id }))).values()], ctx.params);
      const latest = await repo.latestOfMonitors(this.db, monitors.map((m) => m.monitor_id));
      return monitors.map((m) => monitorColorsView(m, latest, window));
    },
  },
};
