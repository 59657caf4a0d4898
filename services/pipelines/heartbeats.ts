/** A gateway's heartbeats: each component's latest, shown by the list. */
import { badRequest } from "../../lib/errors";
import { authenticate } from "./ingest";
import { MSG } from "./messages";
import { recordHeartbeat, type Component } from "./pipelines.repo";
import type { SystemPort } from "./port";
import { FUTURE_SLACK_MS } from "./rules";

export async function heartbeat(port: SystemPort, params: { pipeline_id: string; component: Component; ts: number }) {
  const pipeline = await authenticate(port, params.pipeline_id);
  if (params.ts > Date.now() + FUTURE_SLACK_MS) throw badRequest(MSG.heartbeatInFuture);
  await recordHeartbeat(port.db, pipeline.pipeline_id, params.component, params.ts);
  return MSG.heartbeatRecorded;
}
