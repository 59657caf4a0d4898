/** Pipelines of all kinds: a plant's or a function's list and count, and start/stop actions for their gateways (actions.ts). */
import { PAGE_FIELDS } from "../../lib/paging";
import * as actions from "./actions";
import * as fleet from "./fleet";
import { MSG } from "./messages";
import { EXAMPLE, FILTER_FIELDS } from "./openapi";
import type { Ctx, PipelinesActions } from "./pipelines.types";
import { PIPELINE_STATUSES } from "./rules";
import { countParams, listParams, text } from "./schemas";

/** Many pipelines at once: one id or a list. */
const ids = [{ type: "array", max: 1000, items: text, optional: true }, { ...text, optional: true }];

export const fleetActions: PipelinesActions = {
  list: {
    http: {
      op: 54,
      routes: ["GET /_config/pipelines/_list"],
      group: "pipelines",
      summary: "List pipelines",
      description: "Both kinds, oldest first, with their plant's and function's names, heartbeats and last actions.",
      fields: { ...FILTER_FIELDS, ...PAGE_FIELDS },
      answer: { schema: "$PipelineListItem[]" },
      errors: [[400, MSG.insufficientInputs], [400, MSG.excessInputs]],
    },
    params: listParams,
    handler(ctx: Ctx<fleet.ListInput>) {
      return fleet.listPipelines(this.use(ctx), ctx.params);
    },
  },

  count: {
    http: {
      op: 55,
      routes: ["GET /_config/pipelines/_count"],
      group: "pipelines",
      summary: "Count pipelines",
      fields: {
        ...FILTER_FIELDS,
        status: {
          enum: ["start", "stop", ...PIPELINE_STATUSES],
          description: "only pipelines in this status: start (starting or running), stop (stopping or stopped) or one exact status",
          example: "start",
        },
      },
      answer: { schema: "integer", example: 2 },
      errors: [[400, MSG.insufficientInputs], [400, MSG.excessInputs], [400, MSG.invalidInput("status")]],
    },
    params: countParams,
    handler(ctx: Ctx<fleet.ListInput>) {
      return fleet.countPipelines(this.use(ctx), ctx.params);
    },
  },

  action: {
    http: {
      op: 56,
      routes: ["POST /_config/pipelines/_action"],
      group: "pipelines",
      summary: "Start or stop pipelines",
      description:
        "Queues one action per pipeline (all of them or none; one still pending is superseded) and moves each to starting or stopping. " +
        "Its gateway fetches the action from the ingestion routes and acks it: the pipeline is then running or stopped. " +
        "Without an ack in time (60 s unless configured) the action fails and the pipeline is in error.",
      fields: {
        pipeline_id: { type: "string[]", required: true, description: "the pipelines (one id is taken too)", example: [EXAMPLE.pipeline_id] },
        id: { type: "string[]", required: false, description: "pipeline_id under the name a request form uses" },
        action: { description: "what the gateways are asked to do", example: "start" },
      },
      answer: { text: MSG.actionQueued },
      errors: [[400, MSG.invalidGatewayId("<pipeline_id>")], [403, MSG.unauthorizedOperation], [500, MSG.somethingWentWrong]],
    },
    params: {
      // "a request form uses the key id for this list" (spec op 56)
      // An empty list names no pipeline: the handler answers Insufficient inputs, as for a missing one.
      pipeline_id: ids,
      id: ids,
      action: { type: "enum", values: ["start", "stop"] },
    },
    handler(ctx: Ctx<actions.QueueInput>) {
      return actions.queueActions(this.use(ctx), ctx.params);
    },
  },
};
