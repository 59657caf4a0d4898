/**
 * The watcher operations: create, delete, update, fetch, list and count. Each action carries its
 * route and docs (`http`), its params and a handler of a line; the rules and writes are in
 * watchers.ts, the SQL in watchers.repo.ts.
 */
import { PAGE_FIELDS, PAGE_PARAMS } from "../../lib/paging";
import { MAX_TEXT } from "../../lib/validation";
import type { AlertingActions, Ctx } from "./alerting.types";
import { MSG } from "./messages";
import { EXAMPLE_WATCHER, FUNCTION_FIELD, WATCHER_FIELDS } from "./openapi";
import { EXAMPLE_WATCHER_DETAIL } from "./suppressions.openapi";
import * as watchers from "./watchers";
import { WATCHER_PARAMS } from "./watchers";

const text = { type: "string", max: MAX_TEXT } as const;
const hiddenFilter = { type: "number", integer: true, min: 0, max: 1, convert: true, optional: true } as const;
const lists = { unknown: MSG.excessInputs } as const;

const WATCHER_ID_FIELD = { watcher_id: { description: "the watcher's id", example: EXAMPLE_WATCHER.watcher_id } };
const HIDDEN_FILTER_FIELD = { is_hidden: { enum: [0, 1], description: "1: the system watchers (of condition gateways) instead of the others (default 0)", example: 0 } };
const SYSTEM_VARIANT = "Without a body, `?is_hidden=1&pipeline_id=<gateway_id>`";

export const WATCHER_ACTIONS: AlertingActions = {
  "watchers.create": {
    http: {
      op: 1,
      routes: ["POST /_alerting/watchers"],
      group: "watchers",
      summary: "Create a watcher",
      description:
        "A watcher holds the alert rules (triggers) over one gateway's readings; a gateway has at most one. " +
        `${SYSTEM_VARIANT} makes the condition gateway's system watcher from its monitors' thresholds (or remakes it) and answers its id.`,
      fields: { ...WATCHER_FIELDS, monitor_id: { hidden: true } },
      answer: { text: MSG.watcherCreated("<watcher_id>") },
      errors: [
        [400, MSG.watcherExistsOnCreate],
        [400, MSG.noMedium],
        [400, MSG.noUserOnCreate],
        [400, MSG.invalidFunctionId],
        [400, MSG.invalidInput("<field>")],
        [403, MSG.unauthorizedOperation],
      ],
    },
    params: WATCHER_PARAMS,
    async handler(ctx: Ctx) {
      return watchers.create(this.use(ctx), ctx.params);
    },
  },

  "watchers.remove": {
    http: {
      op: 2,
      routes: ["DELETE /_alerting/watchers/:watcher_id"],
      group: "watchers",
      summary: "Delete a watcher",
      description: "Its active alerts close now; its alerts stay listed.",
      fields: WATCHER_ID_FIELD,
      answer: { text: MSG.watcherDeleted("<watcher_id>") },
      errors: [[400, MSG.invalidWatcherId], [403, MSG.unauthorizedOperation]],
    },
    params: { watcher_id: text },
    async handler(ctx: Ctx<{ watcher_id: string }>) {
      return watchers.remove(this.use(ctx), ctx.params);
    },
  },

  "watchers.update": {
    http: {
      op: 3,
      routes: ["PUT /_alerting/watchers/:watcher_id"],
      group: "watchers",
      summary: "Update a watcher",
      description:
        "Replaces the watcher's body; a trigger whose rule changed starts afresh and its active alert closes. " +
        `${SYSTEM_VARIANT} remakes a system watcher from its gateway's monitors; with \`&monitor_id=<monitor_id>\` only that monitor's triggers.`,
      fields: {
        ...WATCHER_ID_FIELD,
        ...WATCHER_FIELDS,
        monitor_id: {
          in: "query",
          description: "with is_hidden=1, pipeline_id and no body: the condition monitor whose triggers are remade",
          example: "9b2f6c1e-4d3a-4f7b-8e21-5c6d7e8f9a01",
        },
      },
      answer: { text: MSG.watcherUpdated("<watcher_id>") },
      errors: [
        [400, MSG.watcherExistsOnUpdate],
        [400, MSG.noMedium],
        [400, MSG.noUserOnUpdate],
        [400, MSG.invalidWatcherId],
        [400, MSG.invalidFunctionId],
        [400, MSG.invalidInput("<field>")],
        [403, MSG.unauthorizedOperation],
      ],
    },
    params: { ...WATCHER_PARAMS, watcher_id: text },
    async handler(ctx: Ctx) {
      return watchers.update(this.use(ctx), ctx.params);
    },
  },

  "watchers.get": {
    http: {
      op: 4,
      routes: ["GET /_alerting/watchers/:watcher_id"],
      group: "watchers",
      summary: "Fetch a watcher",
      fields: WATCHER_ID_FIELD,
      description: "The watcher as listed, plus its maintenance windows (`suppressions`).",
      answer: { schema: "$WatcherDetail", example: EXAMPLE_WATCHER_DETAIL },
      errors: [[400, MSG.invalidWatcherId]],
    },
    params: { watcher_id: text },
    async handler(ctx: Ctx<{ watcher_id: string }>) {
      return watchers.get(this.use(ctx), ctx.params);
    },
  },

  /** `is_hidden=1` lists the system watchers, which the plain list leaves out. */
  "watchers.list": {
    http: {
      op: 5,
      routes: ["GET /_alerting/watchers/_list"],
      group: "watchers",
      summary: "List the watchers of a function",
      description: "Oldest first.",
      fields: { function_id: FUNCTION_FIELD, ...HIDDEN_FILTER_FIELD, ...PAGE_FIELDS },
      answer: { schema: "$Watcher[]", example: [EXAMPLE_WATCHER] },
      errors: [[400, MSG.invalidFunctionId], [400, MSG.excessInputs]],
    },
    params: { function_id: text, is_hidden: hiddenFilter, ...PAGE_PARAMS, $$messages: lists },
    async handler(ctx: Ctx<{ function_id: string; is_hidden?: number; limit?: number; offset?: number }>) {
      return watchers.list(this.use(ctx), ctx.params);
    },
  },

  "watchers.count": {
    http: {
      op: 6,
      routes: ["GET /_alerting/watchers/_count"],
      group: "watchers",
      summary: "Count the watchers of a function",
      fields: { function_id: FUNCTION_FIELD, ...HIDDEN_FILTER_FIELD },
      answer: { schema: "integer", example: 3 },
      errors: [[400, MSG.invalidFunctionId], [400, MSG.excessInputs]],
    },
    params: { function_id: text, is_hidden: hiddenFilter, $$messages: lists },
    async handler(ctx: Ctx<{ function_id: string; is_hidden?: number }>) {
      return watchers.count(this.use(ctx), ctx.params);
    },
  },
};
