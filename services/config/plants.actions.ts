/** The plant operations: create, delete, update (rename), fetch, list. */
import type { Context } from "moleculer";
import { PAGE_FIELDS } from "../../lib/paging";
import type { ConfigActions } from "./config.types";
import { MSG } from "./messages";
import { hidden, ID_FIELDS } from "./openapi";
import { id, list, name, page, readBack } from "./params";
import * as plants from "./plants";

const plant_name = { description: "unique within its site, case-insensitively", example: "Press Shop" };

export const plantActions: ConfigActions = {
  "plants.create": {
    http: {
      op: 33,
      routes: ["POST /_config/plants"],
      group: "plants",
      summary: "Create a plant",
      fields: { plant_name, site_id: { ...ID_FIELDS.site_id, description: "the site the plant is on" } },
      answer: { id: true },
      errors: [[400, MSG.invalidSiteId("<site_id>")], [400, MSG.plantExists("<plant_name>")], [403, MSG.unauthorizedOperation]],
    },
    params: { plant_name: name, site_id: id },
    handler(ctx: Context<{ plant_name: string; site_id: string }>) {
      return plants.createPlant(this.use(ctx), ctx.params);
    },
  },

  "plants.remove": {
    http: {
      op: 34,
      routes: ["DELETE /_config/plants/:plant_id"],
      group: "plants",
      summary: "Delete a plant",
      description: "A plant with events, pipelines, assets or functions is kept; the first of these it has is the answer.",
      fields: { plant_id: ID_FIELDS.plant_id },
      answer: { text: MSG.plantDeleted },
      errors: [
        [400, MSG.invalidPlantId("<plant_id>")],
        [400, MSG.plantHasEvents],
        [400, MSG.plantHasPipelines],
        [400, MSG.plantHasAssets],
        [400, MSG.plantHasFunctions],
        [403, MSG.unauthorizedOperation],
      ],
    },
    params: { plant_id: id },
    handler(ctx: Context<{ plant_id: string }>) {
      return plants.removePlant(this.use(ctx), ctx.params.plant_id);
    },
  },

  "plants.update": {
    http: {
      op: 35,
      routes: ["PUT /_config/plants/:plant_id"],
      group: "plants",
      summary: "Update a plant",
      description: "Renames the plant. Plants do not move: site_id must be the plant's own.",
      fields: {
        plant_id: ID_FIELDS.plant_id,
        plant_name,
        site_id: { ...ID_FIELDS.site_id, description: "the plant's site (it cannot change)" },
        ...hidden("site_name", "function_count", "pipeline_count"),
      },
      answer: { text: MSG.plantUpdated },
      errors: [[400, MSG.invalidPlantId("<plant_id>")], [400, MSG.invalidSiteId("<site_id>")], [400, MSG.plantExists("<plant_name>")], [403, MSG.unauthorizedOperation]],
    },
    params: { plant_id: id, plant_name: name, site_id: id, ...readBack("site_name", "function_count", "pipeline_count") },
    handler(ctx: Context<{ plant_id: string; plant_name: string; site_id: string }>) {
      return plants.updatePlant(this.use(ctx), ctx.params);
    },
  },

  "plants.get": {
    http: {
      op: 36,
      routes: ["GET /_config/plants/:plant_id"],
      group: "plants",
      summary: "Fetch a plant",
      fields: { plant_id: ID_FIELDS.plant_id },
      answer: { schema: "$Plant" },
      errors: [[400, MSG.invalidPlantId("<plant_id>")], [405, MSG.methodNotAllowed]],
    },
    params: { plant_id: id },
    handler(ctx: Context<{ plant_id: string }>) {
      return plants.getPlant(this.use(ctx), ctx.params.plant_id);
    },
  },

  "plants.list": {
    http: {
      op: 37,
      routes: ["GET /_config/plants/_list"],
      group: "plants",
      summary: "List the plants of a site",
      description: "The site's plants the caller may see, with their function and pipeline counts.",
      fields: { site_id: ID_FIELDS.site_id, ...PAGE_FIELDS },
      answer: { schema: "$PlantListItem[]" },
      errors: [[400, MSG.invalidSiteId("<site_id>")], [400, MSG.excessInputs], [400, MSG.invalidInput("<field>")]],
    },
    params: { site_id: id, ...page, $$messages: list },
    handler(ctx: Context<{ site_id: string; limit?: number; offset?: number }>) {
      return plants.listPlants(this.use(ctx), ctx.params);
    },
  },
};
