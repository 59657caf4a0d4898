/** Pipelines (edge gateways): start and stop them, see their queued actions and heartbeats; retention now. */
import { callAs } from "../call";
import { idList, requireId, table } from "../format";
import type { AdminCommand, ReplContext } from "../types";

interface PipelineFetch {
  pipeline_id: string;
  pipeline_name: string;
  plant_id: string;
  function_id?: string;
  status: string;
  data_source_subtype: string;
}

interface PipelineListItem extends PipelineFetch {
  heart_beats: Record<string, number | null> | null;
  last_actions: { action_id: string; action: string; status: string; issued_at: number; completed_at: number | null }[];
}

const when = (ms: number | null | undefined): string => (ms ? new Date(ms).toISOString() : "-");

function pipelineAction(action: "start" | "stop"): AdminCommand {
  return {
    command: `pipeline-${action} <pipelineIds...>`,
    description: `Queue a ${action} action for one or more pipelines (ids separated by spaces or commas).`,
    async run(ctx, args) {
      const ids = idList(args.pipelineIds, "pipelineIds");
      return callAs<string>(ctx, "pipelines.action", { pipeline_id: ids, action });
    },
  };
}

export const pipelineStart = pipelineAction("start");
export const pipelineStop = pipelineAction("stop");

/** A pipeline by id, whichever kind it is (edge-server or third-party). */
async function fetchPipeline(ctx: ReplContext, pipeline_id: string): Promise<PipelineFetch> {
  try {
    return await callAs<PipelineFetch>(ctx, "pipelines.edge.get", { pipeline_id });
  } catch (err) {
    if ((err as { code?: number }).code !== 400 && (err as { code?: number }).code !== 404) throw err;
    return callAs<PipelineFetch>(ctx, "pipelines.thirdparty.get", { pipeline_id });
  }
}

export const pipelineShow: AdminCommand = {
  command: "pipeline-show <pipelineId>",
  description: "Show a pipeline's status, its last actions and its components' heartbeats.",
  async run(ctx, args) {
    const id = requireId(args.pipelineId, "pipelineId");
    const fetched = await fetchPipeline(ctx, id);
    // Actions and heartbeats are in the list view (op 54), listed by the pipeline's plant.
    const listed = await callAs<PipelineListItem[]>(ctx, "pipelines.list", { plant_id: fetched.plant_id });
    const p = listed.find((x) => x.pipeline_id === id);
    const head = `${fetched.pipeline_name} (${id}): ${fetched.status}, ${fetched.data_source_subtype}`;
    if (!p) return head;
    const beats = Object.entries(p.heart_beats ?? {}).map(([component, ts]) => [component, when(ts)]);
    const actions = (p.last_actions ?? []).map((a) => [a.action_id, a.action, a.status, when(a.issued_at), when(a.completed_at)]);
    return [
      head,
      "",
      "heartbeats",
      beats.length ? table(["component", "last"], beats) : "none",
      "",
      "actions",
      actions.length ? table(["action_id", "action", "status", "issued_at", "completed_at"], actions) : "none",
    ].join("\n");
  },
};

export const retentionNow: AdminCommand = {
  command: "retention-now",
  description: "Run the readings retention job now (deletes readings older than each site's retention_period).",
  async run(ctx) {
    const res = await callAs<{ ran?: boolean; deleted?: number }>(ctx, "pipelines.retention.run", { force: true });
    if (res.ran === false) return "retention not run: another replica is running it";
    return `retention done: ${res.deleted ?? 0} readings deleted`;
  },
};
