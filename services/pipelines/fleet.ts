/**
 * Pipelines of all kinds (ops 54-56): the list and count of a plant's or a function's pipelines,
 * within the caller's scope, and the start and stop actions queued for their gateways.
 */
import { requireWrite, scopeOf } from "../../lib/access";
import { stageAudit } from "../../lib/audit";
import { config } from "../../lib/config";
import { SharedCache } from "../../lib/cache";
import { badRequest } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { pageOf } from "../../lib/paging";
import { resolveFunction, resolvePlant } from "../config/contract";
import type { Ctx, PipelinesEnv } from "./context";
import { guarded, pipelineChange, scopeIds, visiblePipeline } from "./crud";
import { MSG } from "./messages";
import * as actionsRepo from "./actions.repo";
import * as pipelinesRepo from "./pipelines.repo";
import { listItemView, statusesFor, statusWhileQueued, type ActionName, type PipelineRow } from "./rules";

export interface ListInput {
  plant_id?: string;
  function_id?: string;
  status?: string;
  limit?: number;
  offset?: number;
}

function filterOf(p: ListInput): pipelinesRepo.ListFilter | null {
  // An empty value (`?function_id=&plant_id=…`) is a filter not given.
  const plant_id = p.plant_id || null;
  const function_id = p.function_id || null;
  if (!plant_id && !function_id) throw badRequest(MSG.insufficientInputs);
  if ((plant_id && !isId(plant_id)) || (function_id && !isId(function_id))) return null;
  return { plant_id, function_id };
}

/** Op 54, with the names from config and the last actions of each pipeline. */
export async function listPipelines(env: PipelinesEnv, ctx: Ctx<ListInput>) {
  const filter = filterOf(ctx.params);
  const rows = filter ? await pipelinesRepo.listPipelines(env.db, filter, scopeIds(scopeOf(ctx.meta.user))) : [];
  const page = pageOf(ctx, rows, ctx.params);
  const names = await namesOf(ctx, page);
  const actions = await actionsRepo.lastActions(env.db, page.map((r) => r.pipeline_id));
  const latest = config().latestGatewayFirmware;
  return page.map((r) => listItemView(r, names(r), actions.get(r.pipeline_id) ?? [], latest));
}

async function namesOf(ctx: Ctx, rows: PipelineRow[]) {
  const plants = new Map<string, string | null>();
  const functions = new Map<string, string | null>();
  await Promise.all([
    ...[...new Set(rows.map((r) => r.plant_id))].map(async (id) => plants.set(id, (await resolvePlant(ctx, id))?.plant_name ?? null)),
    ...[...new Set(rows.map((r) => r.function_id).filter((id): id is string => !!id))].map(async (id) =>
      functions.set(id, (await resolveFunction(ctx, id))?.function_name ?? null),
    ),
  ]);
  return (r: PipelineRow) => ({ plant_name: plants.get(r.plant_id) ?? null, function_name: r.function_id ? (functions.get(r.function_id) ?? null) : null });
}

/** Op 55 with the contract's status filter. */
export async function countPipelines(env: PipelinesEnv, ctx: Ctx<ListInput>) {
  const filter = filterOf(ctx.params);
  let statuses: pipelinesRepo.ListFilter["statuses"];
  if (ctx.params.status !== undefined) {
    const s = statusesFor(ctx.params.status);
    if (!s) throw badRequest(MSG.invalidInput("status"), "status");
    statuses = s;
  }
  if (!filter) return 0;
  return pipelinesRepo.countPipelines(env.db, { ...filter, statuses }, scopeIds(scopeOf(ctx.meta.user)));
}

/** Op 56: one action per named pipeline, all or none; the gateways pick them up from the ingestion API. */
export async function queueActions(env: PipelinesEnv, ctx: Ctx<{ pipeline_id?: string | string[]; id?: string | string[]; action: ActionName }>) {
  requireWrite(ctx.meta.user, "pipeline", MSG.unauthorizedOperation);
  const raw = ctx.params.pipeline_id ?? ctx.params.id;
  if (raw === undefined) throw badRequest(MSG.insufficientInputs);
  const ids = [...new Set(Array.isArray(raw) ? raw : [raw])];
  if (ids.length === 0) throw badRequest(MSG.insufficientInputs);
  const pipelines = new Map<string, PipelineRow>();
  for (const id of ids) {
    const row = await visiblePipeline(env, ctx.meta.user, undefined, id, MSG.invalidGatewayId);
    pipelines.set(row.pipeline_id.toLowerCase(), row);
  }
  return guarded(env, { status: 500, message: MSG.somethingWentWrong }, async () => {
    const now = Date.now();
    // Sorted: pipelines are locked in this order, so two requests naming the same ones cannot deadlock.
    const keys = [...new Set(ids.map((id) => id.toLowerCase()))].sort();
    const status = statusWhileQueued(ctx.params.action);
    await env.db.transaction(async (tx) => {
      for (const id of keys) await actionsRepo.queueAction(tx, id, newId(), ctx.params.action, status, now);
      const changed = keys.flatMap((id) => {
        const p = pipelines.get(id);
        return p ? [pipelineChange(ctx.params.action, p, { status: [p.status, status] })] : [];
      });
      await stageAudit(env.streams, tx, ctx, changed);
    });
    // The status changed: `resolve`'s cached answers (alerting's no_data asks it) are stale.
    await new SharedCache(ctx.broker).clean("pipelines.resolve:**");
    return MSG.actionQueued;
  });
}
