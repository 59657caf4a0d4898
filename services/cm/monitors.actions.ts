/** The latest tag values of a monitor, and of an asset's monitors with their threshold colours (monitors.ts). */
import type { Context } from "moleculer";
import type { RequestMeta } from "../../lib/contract";
import { PAGE_FIELDS, PAGE_PARAMS } from "../../lib/paging";
import { MAX_TEXT } from "../../lib/validation";
import type { CmActions } from "./cm.types";
import { MSG } from "./messages";
import * as monitors from "./monitors";
import type { MonitorsListParams } from "./monitors";
import { ASSET_ID_FIELD, EXAMPLES, MONITOR_ID_FIELD } from "./openapi";

const text = { type: "string", max: MAX_TEXT } as const;

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
    handler(ctx: Context<{ monitor_id: string }, RequestMeta>) {
      return monitors.getMonitor(this.use(ctx), ctx.params.monitor_id);
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
    handler(ctx: Context<MonitorsListParams, RequestMeta>) {
      return monitors.listMonitors(this.use(ctx), ctx.params);
    },
  },
};
