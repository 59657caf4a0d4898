/**
 * Actions for other services and operators, not routed: what config and alerting ask, and the
 * action sweep run now (`retention.run` comes with the daily job: pipelines.service.ts).
 */
import type { Context } from "moleculer";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import { sweepOverdueActions } from "./actions";
import type { PipelinesContract } from "./contract";
import { plantActivity, resolvePipeline } from "./pipelines";
import type { PipelinesActions } from "./pipelines.types";
import { registrationOf } from "./registrations";
import { text } from "./schemas";

export const internalActions: PipelinesActions = {
  /** Config's plant-delete refusal: the plant's pipelines and their events. */
  countForPlant: {
    visibility: "public",
    readOnly: true,
    params: { plant_id: text },
    handler(ctx: Context<ParamsOf<PipelinesContract, "countForPlant">>): Promise<ReplyOf<PipelinesContract, "countForPlant">> {
      return plantActivity(this.system(ctx), ctx.params.plant_id);
    },
  },

  /** A gateway's names, place and registered monitors (alerting names watchers' gateways with it), or null. */
  resolve: {
    visibility: "public",
    readOnly: true,
    cache: { keys: ["pipeline_id"], ttl: 30 },
    params: { pipeline_id: text },
    handler(ctx: Context<ParamsOf<PipelinesContract, "resolve">>): Promise<ReplyOf<PipelinesContract, "resolve">> {
      return resolvePipeline(this.system(ctx), ctx.params.pipeline_id);
    },
  },

  /** The pipeline a monitor is registered to, or null: the authority behind config's copy. */
  registrationOf: {
    visibility: "public",
    readOnly: true,
    params: { monitor_id: text },
    handler(ctx: Context<{ monitor_id: string }>) {
      return registrationOf(this.system(ctx), ctx.params.monitor_id);
    },
  },

  /** Fails overdue actions now (operators, tests); the periodic sweep does the same. */
  "actions.sweep": {
    visibility: "public",
    params: {},
    handler(ctx: Context) {
      return sweepOverdueActions(this.system(ctx));
    },
  },
};
