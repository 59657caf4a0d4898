/** Third-party pipelines: integrations that send through the ingestion API (create, delete, update, fetch). */
import { MSG } from "./messages";
import { EXAMPLE, PIPELINE_ID, THIRD_PARTY_FIELDS } from "./openapi";
import * as pipelines from "./pipelines";
import type { Ctx, PipelinesActions } from "./pipelines.types";
import { idParams, text, thirdPartyCreateParams, thirdPartyUpdateParams } from "./schemas";

const invalidId = MSG.invalidPipelineId("<pipeline_id>");
const placeErrors: [number, string][] = [
  [400, MSG.invalidInput("<field>")],
  [400, MSG.invalidPlantId("<plant_id>")],
  [400, MSG.invalidFunctionId("<function_id>")],
  [400, MSG.monitorInAnotherGateway],
  [404, MSG.invalidRegistration],
];

export const thirdPartyActions: PipelinesActions = {
  "thirdparty.create": {
    http: {
      op: 46,
      routes: ["POST /_config/pipelines/thirdparty"],
      group: "thirdparty",
      summary: "Create a third-party pipeline",
      description: "Answers the pipeline's id and its ingest key, which is shown this once.",
      fields: THIRD_PARTY_FIELDS,
      answer: { schema: "$PipelineCreated", example: EXAMPLE.created },
      errors: [...placeErrors, [403, MSG.unauthorizedOperation], [500, MSG.pipelineCreateError]],
    },
    params: thirdPartyCreateParams,
    handler(ctx: Ctx<pipelines.PipelineInput>) {
      return pipelines.createPipeline(this.use(ctx), ctx.params, "thirdparty");
    },
  },

  "thirdparty.remove": {
    http: {
      op: 47,
      routes: ["DELETE /_config/pipelines/thirdparty/:pipeline_id"],
      group: "thirdparty",
      summary: "Delete a third-party pipeline",
      description: "Its readings stay until the site's retention period takes them.",
      fields: { pipeline_id: PIPELINE_ID.thirdparty },
      answer: { text: MSG.pipelineDeleted },
      errors: [[400, invalidId], [403, MSG.unauthorizedOperation], [500, MSG.pipelineDeleteError]],
    },
    params: idParams,
    handler(ctx: Ctx<{ pipeline_id: string }>) {
      return pipelines.removePipeline(this.use(ctx), ctx.params, "thirdparty");
    },
  },

  "thirdparty.update": {
    http: {
      op: 48,
      routes: ["PUT /_config/pipelines/thirdparty/:pipeline_id"],
      group: "thirdparty",
      summary: "Update a third-party pipeline",
      description: "tags are required; every other field left out keeps its value.",
      fields: { pipeline_id: PIPELINE_ID.thirdparty, ...THIRD_PARTY_FIELDS },
      answer: { text: MSG.pipelineUpdated },
      errors: [[400, invalidId], ...placeErrors, [403, MSG.unauthorizedOperation], [500, MSG.pipelineUpdateError]],
    },
    params: thirdPartyUpdateParams,
    handler(ctx: Ctx<pipelines.PipelineInput>) {
      return pipelines.updatePipeline(this.use(ctx), ctx.params, "thirdparty");
    },
  },

  "thirdparty.get": {
    http: {
      op: 49,
      routes: ["GET /_config/pipelines/thirdparty/:pipeline_id"],
      group: "thirdparty",
      summary: "Fetch a third-party pipeline",
      fields: {
        pipeline_id: PIPELINE_ID.thirdparty,
        mac_ids: {
          type: "string[]",
          required: false,
          description: "MAC addresses the caller expects: the pipeline's must be among them (repeated, comma-separated or a JSON list)",
          example: [EXAMPLE.mac],
        },
      },
      answer: { schema: "$Pipeline" },
      errors: [[400, invalidId], [500, MSG.pipelineFetchError]],
    },
    params: { ...idParams, mac_ids: [{ type: "array", max: 100, items: text, optional: true }, { ...text, optional: true }] },
    handler(ctx: Ctx<{ pipeline_id: string; mac_ids?: string | string[] }>) {
      return pipelines.getPipeline(this.use(ctx), ctx.params, "thirdparty");
    },
  },
};
