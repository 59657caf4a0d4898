/**
 * The watcher operations: create, delete, update, fetch, list and count. Each action carries its
 * route and docs (`http`), its params and a short handler; the rules are in watchers.ts, the
 * scope checks and writes in watchers.methods.ts, the SQL in watchers.repo.ts.
 */
import { requireWrite } from "../../lib/access";
import { DomainError } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { PAGE_FIELDS, PAGE_PARAMS, setTotal } from "../../lib/paging";
import { MAX_TEXT, compileParams } from "../../lib/validation";
import type { AlertingActions, Ctx } from "./alerting.types";
import { MSG } from "./messages";
import { EXAMPLE_WATCHER, FUNCTION_FIELD, WATCHER_FIELDS } from "./openapi";
import { listSuppressions } from "./suppressions.repo";
import * as repo from "./watchers.repo";
import { suppressionView } from "./suppressions";
import { EXAMPLE_WATCHER_DETAIL } from "./suppressions.openapi";
import { checkTriggers, CREATE_TEXTS, UPDATE_TEXTS, type CheckTexts } from "./triggers";
import { changedWatcherRow, isHiddenFlag, isSystemVariant, newWatcherRow, WATCHER_BODY, WATCHER_PARAMS, type WatcherBody } from "./watchers";
import { deleteWatcherAudited } from "./watchers.methods";

const text = { type: "string", max: MAX_TEXT } as const;
const hiddenFilter = { type: "number", integer: true, min: 0, max: 1, convert: true, optional: true } as const;
const lists = { unknown: MSG.excessInputs } as const;
const checkBody = compileParams(WATCHER_BODY);

/** The body as its schema and then the spec's own rules (whom to notify, and how) accept it. */
function watcherBodyOf(params: Record<string, unknown>, texts: CheckTexts, hidden: boolean): WatcherBody {
  const invalid = checkBody(params);
  if (invalid !== true) throw new DomainError(400, invalid.message, invalid.field);
  const body = params as unknown as WatcherBody;
  const rule = checkTriggers(body.triggers, texts, hidden);
  if (rule) throw new DomainError(400, rule);
  return body;
}

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
      const p = ctx.params;
      if (isSystemVariant(p)) {
        requireWrite(ctx.meta.user, "watcher", MSG.unauthorizedOperation);
        const gateway = await this.gatewayInScope(ctx, String(p.pipeline_id));
        // The spec makes this call right after a condition gateway is created, but the service
        // has made that gateway's system watcher already (its events): it is remade from the
        // gateway's monitors and its id answered, so the call reads the same whichever came first.
        const id = await this.syncSystemWatcher(ctx, gateway.pipeline_id, null, true);
        if (!id) throw new DomainError(400, MSG.invalidInput("pipeline_id"));
        return MSG.watcherCreated(id);
      }
      const hidden = isHiddenFlag(p.is_hidden);
      const body = watcherBodyOf(p, CREATE_TEXTS, hidden === 1);
      requireWrite(ctx.meta.user, "watcher", MSG.unauthorizedOperation);
      const fn = await this.checkPlacement(ctx, body);
      if (await repo.watcherOnGateway(this.db, body.gateway_id, hidden)) throw new DomainError(400, MSG.watcherExistsOnCreate);
      const row = newWatcherRow(newId(), body, fn.function_id, hidden, Date.now());
      await this.saveWatcher(row, true, MSG.watcherExistsOnCreate, { ctx, before: null });
      return MSG.watcherCreated(row.watcher_id);
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
      const w = await this.watcherInScope(ctx, ctx.params.watcher_id);
      requireWrite(ctx.meta.user, "watcher", MSG.unauthorizedOperation);
      await this.db.transaction((tx) => deleteWatcherAudited(this, tx, ctx, w));
      return MSG.watcherDeleted(w.watcher_id);
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
      const p = ctx.params;
      const current = await this.watcherInScope(ctx, String(p.watcher_id));
      requireWrite(ctx.meta.user, "watcher", MSG.unauthorizedOperation);
      if (isSystemVariant(p)) {
        const gateway = await this.gatewayInScope(ctx, String(p.pipeline_id));
        if (current.is_hidden !== 1 || current.gateway_id !== gateway.pipeline_id) throw new DomainError(400, MSG.invalidWatcherId);
        const monitorId = typeof p.monitor_id === "string" ? p.monitor_id : null;
        const row = await this.systemWatcher(ctx, gateway, monitorId, current);
        await this.saveWatcher(row, false, MSG.watcherExistsOnUpdate, { ctx, before: current });
        return MSG.watcherUpdated(row.watcher_id);
      }
      const body = watcherBodyOf(p, UPDATE_TEXTS, Number(current.is_hidden) === 1);
      const fn = await this.checkPlacement(ctx, body);
      const other = await repo.watcherOnGateway(this.db, body.gateway_id, Number(current.is_hidden));
      if (other && other.watcher_id !== current.watcher_id) throw new DomainError(400, MSG.watcherExistsOnUpdate);
      const row = changedWatcherRow(current, body, fn.function_id, Date.now());
      await this.saveWatcher(row, false, MSG.watcherExistsOnUpdate, { ctx, before: current });
      return MSG.watcherUpdated(row.watcher_id);
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
      const w = await this.watcherInScope(ctx, ctx.params.watcher_id);
      const [view] = await this.views(ctx, [w]);
      // Only the fetch shows the windows; the list's watchers stay as they were.
      return { ...view, suppressions: (await listSuppressions(this.db, w.watcher_id)).map(suppressionView) };
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
      // Queries take config's spelling of the id: a caller's upper-case UUID names the same function.
      const { function_id } = await this.functionInScope(ctx, ctx.params.function_id, MSG.invalidFunctionId);
      const { rows, total } = await repo.listWatchers(this.db, { ...ctx.params, function_id, is_hidden: ctx.params.is_hidden ?? 0 });
      setTotal(ctx, total);
      return this.views(ctx, rows);
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
      const { function_id } = await this.functionInScope(ctx, ctx.params.function_id, MSG.invalidFunctionId);
      const { total } = await repo.listWatchers(this.db, { ...ctx.params, function_id, is_hidden: ctx.params.is_hidden ?? 0, limit: 0 });
      return total;
    },
  },
};
