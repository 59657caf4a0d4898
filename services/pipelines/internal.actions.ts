/** Actions for other services and operators, not routed: what config and alerting ask, and the periodic jobs run now. */
import type { Context } from "moleculer";
import type { PipelinesActions } from "./context";
import { runRetention, sweepOverdueActions } from "./jobs";
import * as repo from "./repo";
import { text } from "./schemas";

export const internalActions: PipelinesActions = {
  /** Config's plant-delete refusal: the plant's pipelines and their events. */
  countForPlant: {
    visibility: "public",
    params: { plant_id: text },
    handler(ctx: Context<{ plant_id: string }>) {
      return repo.plantActivity(this.db, ctx.params.plant_id.toLowerCase()).catch(() => ({ pipelines: 0, events: 0 }));
    },
  },

  /** A gateway's names, place and registered monitors (alerting names watchers' gateways with it), or null. */
  resolve: {
    visibility: "public",
    cache: { keys: ["pipeline_id"], ttl: 30 },
    params: { pipeline_id: text },
    handler(ctx: Context<{ pipeline_id: string }>) {
      return repo.resolvePipeline(this.db, ctx.params.pipeline_id);
    },
  },

  /** The pipeline a monitor is registered to, or null: the authority behind config's copy. */
  registrationOf: {
    visibility: "public",
    params: { monitor_id: text },
    handler(ctx: Context<{ monitor_id: string }>) {
      return repo.registrationOf(this.db, ctx.params.monitor_id).catch(() => null);
    },
  },

  /** Runs the retention job now (operators, tests); `force: false` runs it only when a day has passed since the last run. */
  "retention.run": {
    visibility: "public",
    params: { force: { type: "boolean", optional: true, default: true } },
    handler(ctx: Context<{ force: boolean }>) {
      return runRetention(this.env, ctx, ctx.params.force);
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
