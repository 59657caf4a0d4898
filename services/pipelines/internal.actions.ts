/**
 * Actions for other services and operators, not routed: what config and alerting ask, and the
 * action sweep run now (`retention.run` comes with the daily job: pipelines.service.ts).
 */
import type { Context } from "moleculer";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import type { PipelinesActions } from "./context";
import type { PipelinesContract } from "./contract";
import { sweepOverdueActions } from "./jobs";
import * as pipelinesRepo from "./pipelines.repo";
import * as registrationsRepo from "./registrations.repo";
import { text } from "./schemas";

export const internalActions: PipelinesActions = {
  /** Config's plant-delete refusal: the plant's pipelines and their events. */
  countForPlant: {
    visibility: "public",
    readOnly: true,
    params: { plant_id: text },
    handler(ctx: Context<ParamsOf<PipelinesContract, "countForPlant">>): Promise<ReplyOf<PipelinesContract, "countForPlant">> {
      return pipelinesRepo.plantActivity(this.db, ctx.params.plant_id.toLowerCase()).catch(() => ({ pipelines: 0, events: 0 }));
    },
  },

  /** A gateway's names, place and registered monitors (alerting names watchers' gateways with it), or null. */
  resolve: {
    visibility: "public",
    readOnly: true,
    cache: { keys: ["pipeline_id"], ttl: 30 },
    params: { pipeline_id: text },
    handler(ctx: Context<ParamsOf<PipelinesContract, "resolve">>): Promise<ReplyOf<PipelinesContract, "resolve">> {
      return pipelinesRepo.resolvePipeline(this.db, ctx.params.pipeline_id);
    },
  },

  /** The pipeline a monitor is registered to, or null: the authority behind config's copy. */
  registrationOf: {
    visibility: "public",
    readOnly: true,
    params: { monitor_id: text },
    handler(ctx: Context<{ monitor_id: string }>) {
      return registrationsRepo.registrationOf(this.db, ctx.params.monitor_id).catch(() => null);
    },
  },

  /** Fails overdue actions now (operators, tests); the periodic sweep does the same. */
  "actions.sweep": {
    visibility: "public",
    params: {},
    handler() {
      return sweepOverdueActions(this.env);
    },
  },
};
