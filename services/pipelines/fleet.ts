/**
 * Pipelines of all kinds (ops 54-55): the list and count of a plant's or a function's pipelines,
 * within the caller's scope. Their start and stop actions are in actions.ts.
 */
import { scopeOf } from "../../lib/access";
import { config } from "../../lib/config";
import { badRequest } from "../../lib/errors";
import { isId } from "../../lib/ids";
import { lastActions } from "./actions.repo";
import { collectionCountsOf } from "./collection";
import { MSG } from "./messages";
import { scopeIds } from "./pipelines";
import * as pipelinesRepo from "./pipelines.repo";
import type { PipelinesPort } from "./port";
import { listItemView, statusesFor } from "./rules";

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
export async function listPipelines(port: PipelinesPort, params: ListInput) {
  const filter = filterOf(params);
  const rows = filter ? await pipelinesRepo.listPipelines(port.db, filter, scopeIds(scopeOf(port.user))) : [];
  const page = port.page(rows, params);
  const names = await namesOf(port, page);
  const actions = await lastActions(port.db, page.map((r) => r.pipeline_id));
  // A pipeline the service collects itself says how many readings it collected and rejected (docs/collectors.md).
  const counts = await collectionCountsOf(port.db, page);
  const latest = config().latestGatewayFirmware;
  return page.map((r) => ({ ...listItemView(r, names(r), actions.get(r.pipeline_id) ?? [], latest), ...counts.get(r.pipeline_id) }));
}

async function namesOf(port: PipelinesPort, rows: pipelinesRepo.PipelineRow[]) {
  const plants = new Map<string, string | null>();
  const functions = new Map<string, string | null>();
  await Promise.all([
    ...[...new Set(rows.map((r) => r.plant_id))].map(async (id) => plants.set(id, (await port.config.plant(id))?.plant_name ?? null)),
    ...[...new Set(rows.map((r) => r.function_id).filter((id): id is string => !!id))].map(async (id) =>
      functions.set(id, (await port.config.function(id))?.function_name ?? null),
    ),
  ]);
  return (r: pipelinesRepo.PipelineRow) => ({ plant_name: plants.get(r.plant_id) ?? null, function_name: r.function_id ? (functions.get(r.function_id) ?? null) : null });
}

/** Op 55 with the contract's status filter. */
export async function countPipelines(port: PipelinesPort, params: ListInput) {
  const filter = filterOf(params);
  let statuses: pipelinesRepo.ListFilter["statuses"];
  if (params.status !== undefined) {
    const s = statusesFor(params.status);
    if (!s) throw badRequest(MSG.invalidInput("status"), "status");
    statuses = s;
  }
  if (!filter) return 0;
  return pipelinesRepo.countPipelines(port.db, { ...filter, statuses }, scopeIds(scopeOf(port.user)));
}
