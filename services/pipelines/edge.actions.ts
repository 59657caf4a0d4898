/** Edge-server pipelines: the gateways on site (create, delete, update, fetch). */
import { MSG } from "./messages";
import { EDGE_FIELDS, EXAMPLE, PIPELINE_ID } from "./openapi";
import * as pipelines from "./pipelines";
import type { Ctx, PipelinesActions } from "./pipelines.types";
import { edgeCreateParams, edgeUpdateParams, idParams } from "./schemas";

const invalidId = MSG.invalidGatewayId("<pipeline_id>");
/** What the body's rules answer, on create and update alike. */
const bodyErrors: [number, string][] = [
  [400, MSG.macInUse("<pipeline_id>")],
  [400, MSG.monitorInAnotherGateway],
  [400, MSG.invalidInputKey],
  [400, MSG.insufficientInput("<key>")],
  [400, MSG.invalidInput("<field>")],
  [400, MSG.sqlOnlyProduction],
  [400, MSG.invalidPlantId("<plant_id>")],
  [400, MSG.invalidFunctionId("<function_id>")],
  [404, MSG.invalidRegistration],
  [403, MSG.unauthorizedOperation],
];

export const edgeActions: PipelinesActions = {
  "edge.create": {
    http: {
      op: 50,
      routes: ["POST /_config/pipelines/edge-server"],
      group: "edge",
      summary: "Create an edge-server pipeline (gateway)",
      description: "Answers the gateway's id and its ingest key, which is shown this once. SQL gateways take Production data only.",
      fields: EDGE_FIELDS,
      answer: { schema: "$PipelineCreated", example: EXAMPLE.created },
      // The spec lists `Error creating gateway` with the create's 400s.
      errors: [...bodyErrors, [400, MSG.gatewayCreateError]],
    },
    params: edgeCreateParams,
    handler(ctx: Ctx<pipelines.PipelineInput>) {
      return pipelines.createPipeline(this.use(ctx), ctx.params, "edge");
    },
  },

  "edge.remove": {
    http: {
      op: 51,
      routes: ["DELETE /_config/pipelines/edge-server/:pipeline_id"],
      group: "edge",
      summary: "Delete an edge-server pipeline",
      description: "Its readings stay until the site's retention period takes them.",
      fields: { pipeline_id: PIPELINE_ID.edge },
      answer: { text: MSG.gatewayDeleted },
      errors: [[400, invalidId], [403, MSG.unauthorizedOperation], [500, MSG.internalError]],
    },
    params: idParams,
    handler(ctx: Ctx<{ pipeline_id: string }>) {
      return pipelines.removePipeline(this.use(ctx), ctx.params, "edge");
    },
  },

  "edge.update": {
    http: {
      op: 52,
      routes: ["PUT /_config/pipelines/edge-server/:pipeline_id"],
      group: "edge",
      summary: "Update an edge-server pipeline",
      description: "pipeline_name, settings and tags are required and checked as on create; every other field left out keeps its value.",
      fields: { pipeline_id: PIPELINE_ID.edge, ...EDGE_FIELDS, gateway_firmware: { ...EDGE_FIELDS.gateway_firmware, required: false } },
      answer: { text: MSG.gatewayUpdated },
      errors: [[400, invalidId], ...bodyErrors, [500, MSG.internalError]],
    },
    params: edgeUpdateParams,
    handler(ctx: Ctx<pipelines.PipelineInput>) {
      return pipelines.updatePipeline(this.use(ctx), ctx.params, "edge");
    },
  },

  "edge.get": {
    http: {
      op: 53,
      routes: ["GET /_config/pipelines/edge-server/:pipeline_id"],
      group: "edge",
      summary: "Fetch an edge-server pipeline",
      description: "The third-party fetch's shape, with the gateway's firmware.",
      fields: { pipeline_id: PIPELINE_ID.edge },
      answer: { schema: "$Pipeline" },
      errors: [[400, invalidId], [500, MSG.internalError]],
    },
    params: idParams,
    handler(ctx: Ctx<{ pipeline_id: string }>) {
      return pipelines.getPipeline(this.use(ctx), ctx.params, "edge");
    },
  },
};
