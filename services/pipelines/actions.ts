/**
 * The start/stop actions of pipelines (op 56): queued by a user for their gateways, all or none;
 * polled and acked by each gateway with its ingest key; failed when no ack comes in time.
 */
import { requireWrite } from "../../lib/access";
import { config } from "../../lib/config";
import { badRequest, DomainError, notFound } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import * as actionsRepo from "./actions.repo";
import { authenticate } from "./ingest";
import { MSG } from "./messages";
import { guarded, pipelineChange, visiblePipeline } from "./pipelines";
import { setStatus, type PipelineRow } from "./pipelines.repo";
import type { PipelineStatus } from "./contract";
import type { PipelinesPort, SystemPort } from "./port";
import { actionView, statusAfterAck, statusWhileQueued } from "./rules";
import { stopAtOnce } from "./sparkplug";

export interface QueueInput {
  pipeline_id?: string | string[];
  id?: string | string[];
  action: actionsRepo.ActionName;
}

/** Op 56: one action per named pipeline, all or none; the gateways pick them up from the ingestion API. */
export async function queueActions(port: PipelinesPort, params: QueueInput) {
  requireWrite(port.user, "pipeline", MSG.unauthorizedOperation);
  const raw = params.pipeline_id ?? params.id;
  if (raw === undefined) throw badRequest(MSG.insufficientInputs);
  const ids = [...new Set(Array.isArray(raw) ? raw : [raw])];
  if (ids.length === 0) throw badRequest(MSG.insufficientInputs);
  const pipelines = new Map<string, PipelineRow>();
  for (const id of ids) {
    const row = await visiblePipeline(port, undefined, id, MSG.invalidGatewayId);
    pipelines.set(row.pipeline_id.toLowerCase(), row);
  }
  return guarded(port, { status: 500, message: MSG.somethingWentWrong }, async () => {
    const now = Date.now();
    // Sorted: pipelines are locked in this order, so two requests naming the same ones cannot deadlock.
    const keys = [...new Set(ids.map((id) => id.toLowerCase()))].sort();
    const status = statusWhileQueued(params.action);
    await port.db.transaction(async (tx) => {
      const after = new Map<string, PipelineStatus>();
      for (const id of keys) {
        const action_id = newId();
        await actionsRepo.queueAction(tx, id, action_id, params.action, status, now);
        // A Sparkplug node not connected has nothing to release: its stop completes now (docs/sparkplug.md#stopping).
        if (params.action === "stop" && (await stopAtOnce(tx, id, action_id, now))) after.set(id, statusAfterAck("stop", "completed"));
      }
      const changes = keys.flatMap((id) => {
        const p = pipelines.get(id);
        return p ? [pipelineChange(params.action, p, { status: [p.status, after.get(id) ?? status] })] : [];
      });
      await port.audit(tx, changes);
    });
    // The status changed: `resolve`'s cached answers (alerting's no_data asks it) are stale.
    await port.resolveStale();
    return MSG.actionQueued;
  });
}

/** The gateway's pending actions, oldest first. */
export async function pendingActions(port: SystemPort, params: { pipeline_id: string }) {
  const pipeline = await authenticate(port, params.pipeline_id);
  return (await actionsRepo.pendingActions(port.db, pipeline.pipeline_id)).map(actionView);
}

/** The gateway's ack: the action completes (or fails) and the pipeline takes the status it leads to. */
export async function ackAction(port: SystemPort, params: { pipeline_id: string; action_id: string; status: "completed" | "failed" }) {
  const pipeline = await authenticate(port, params.pipeline_id);
  const { action_id, status } = params;
  if (!isId(action_id)) throw notFound(MSG.invalidActionId(action_id));
  const done = await port.db.transaction(async (tx) => {
    const action = await actionsRepo.completeAction(tx, pipeline.pipeline_id, action_id, status, Date.now());
    if (action) await setStatus(tx, pipeline.pipeline_id, statusAfterAck(action.action, status));
    return action;
  });
  if (!done) {
    if (await actionsRepo.actionExists(port.db, pipeline.pipeline_id, action_id)) throw new DomainError(409, MSG.actionNotPending);
    throw notFound(MSG.invalidActionId(action_id));
  }
  // The status changed (running, stopped or error): `resolve`'s cached answers (alerting's no_data asks it) are stale.
  await port.resolveStale();
  return MSG.actionAcknowledged;
}

/**
 * Fails every overdue action and puts its pipeline in error; safe with any number of replicas
 * (a status-guarded UPDATE: each overdue action fails once).
 */
export async function sweepOverdueActions(port: SystemPort): Promise<string[]> {
  const failed = await actionsRepo.failOverdueActions(port.db, config().pipelineActionTimeoutMs, Date.now());
  if (failed.length) port.logger.warn(`pipeline actions timed out; pipelines in error: ${failed.join(", ")}`);
  return failed;
}
