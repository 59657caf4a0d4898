/** The function operations: create, delete, update (rename), fetch, list. */
import type { Context } from "moleculer";
import { PAGE_FIELDS } from "../../lib/paging";
import type { ConfigActions } from "./config.types";
import * as functions from "./functions";
import { MSG } from "./messages";
import { hidden, ID_FIELDS } from "./openapi";
import { id, list, name, optId, page, readBack } from "./params";

const function_name = { description: "unique within its plant, case-insensitively", example: "Hydraulics" };
// No example: it is derived from the plant, and a value that is not its own is refused.
const site_id = { description: "the plant's site; optional, checked when given" };

export const functionActions: ConfigActions = {
  "functions.create": {
    http: {
      op: 23,
      routes: ["POST /_config/functions"],
      group: "functions",
      summary: "Create a function",
      fields: { function_name, plant_id: { ...ID_FIELDS.plant_id, description: "the plant the function is on" }, site_id },
      answer: { id: true },
      errors: [[400, MSG.invalidPlantId("<plant_id>")], [400, MSG.functionExists("<function_name>")], [403, MSG.unauthorizedOperation]],
    },
    params: { function_name: name, plant_id: id, site_id: optId },
    handler(ctx: Context<{ function_name: string; plant_id: string; site_id?: string }>) {
      return functions.createFunction(this.use(ctx), ctx.params);
    },
  },

  "functions.remove": {
    http: {
      op: 24,
      routes: ["DELETE /_config/functions/:function_id"],
      group: "functions",
      summary: "Delete a function",
      description: "A function with monitors or assets attached is kept.",
      fields: { function_id: ID_FIELDS.function_id },
      answer: { text: MSG.functionDeleted },
      errors: [
        [400, MSG.invalidFunctionId("<function_id>")],
        [400, MSG.functionHasMonitors],
        [400, MSG.functionHasAssets],
        [400, MSG.functionHasBoth],
        [403, MSG.unauthorizedOperation],
      ],
    },
    params: { function_id: id },
    handler(ctx: Context<{ function_id: string }>) {
      return functions.removeFunction(this.use(ctx), ctx.params.function_id);
    },
  },

  "functions.update": {
    http: {
      op: 25,
      routes: ["PUT /_config/functions/:function_id"],
      group: "functions",
      summary: "Update a function",
      description: "Renames the function. Functions do not move: plant_id (and site_id, when given) must be the function's own.",
      fields: {
        function_id: ID_FIELDS.function_id,
        function_name,
        plant_id: { ...ID_FIELDS.plant_id, description: "the function's plant (it cannot change)" },
        site_id,
        ...hidden("plant_name", "site_name", "monitor_count"),
      },
      answer: { text: MSG.functionUpdated },
      errors: [[404, MSG.invalidFunction], [400, MSG.invalidPlantId("<plant_id>")], [400, MSG.functionExists("<function_name>")], [403, MSG.unauthorizedOperation]],
    },
    params: { function_id: id, function_name: name, plant_id: id, site_id: optId, ...readBack("plant_name", "site_name", "monitor_count") },
    handler(ctx: Context<{ function_id: string; function_name: string; plant_id: string; site_id?: string }>) {
      return functions.updateFunction(this.use(ctx), ctx.params);
    },
  },

  "functions.get": {
    http: {
      op: 26,
      routes: ["GET /_config/functions/:function_id"],
      group: "functions",
      summary: "Fetch a function",
      fields: { function_id: ID_FIELDS.function_id },
      answer: { schema: "$Function" },
      errors: [[404, MSG.functionNotFound], [405, MSG.methodNotAllowed]],
    },
    params: { function_id: id },
    handler(ctx: Context<{ function_id: string }>) {
      return functions.getFunction(this.use(ctx), ctx.params.function_id);
    },
  },

  "functions.list": {
    http: {
      op: 27,
      routes: ["GET /_config/functions/_list"],
      group: "functions",
      summary: "List the functions of a plant",
      description: "monitor_count counts the monitors on the function's assets too.",
      fields: { plant_id: ID_FIELDS.plant_id, ...PAGE_FIELDS },
      answer: { schema: "$FunctionListItem[]" },
      errors: [[400, MSG.invalidPlantId("<plant_id>")], [400, MSG.excessInputs], [400, MSG.invalidInput("<field>")]],
    },
    params: { plant_id: id, ...page, $$messages: list },
    handler(ctx: Context<{ plant_id: string; limit?: number; offset?: number }>) {
      return functions.listFunctions(this.use(ctx), ctx.params);
    },
  },
};
