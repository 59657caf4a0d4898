/**
 * config's copy of where the pipelines are and whether they received events, kept from the
 * pipelines service's events (docs/architecture.md, "Events"), so that config never calls that
 * service: a plant's pipelines (op 37's pipeline_count, op 34's refusals) and a pipeline's place
 * (op 21's pipeline_id filter). While no pipelines service is deployed, no plant has pipelines
 * and a pipeline_id filter is not checked, as when config asked that service.
 */
import { isAnnouncedRange } from "../../lib/announcements";
import { isId } from "../../lib/ids";
import type { PipelineEvent, PipelineReceivedEvent, PipelinesAnnounced } from "../pipelines/contract";
import * as repo from "./pipeline-places.repo";
import type { PipelinePlace, PlantActivity } from "./pipeline-places.repo";
import type { ConfigPort } from "./port";

const NONE: PlantActivity = { pipelines: 0, events: 0 };

/** Pipelines and events of each plant, in the order given. */
export async function plantsActivity(c: ConfigPort, plant_ids: string[]): Promise<PlantActivity[]> {
  if (!c.pipelinesDeployed() || plant_ids.length === 0) return plant_ids.map(() => NONE);
  const found = await repo.activityOfPlants(c.db, plant_ids);
  return plant_ids.map((id) => found.get(id) ?? NONE);
}

/** Where a pipeline is: null when there is no such pipeline, undefined while no pipelines service is deployed. */
export async function pipelinePlace(c: ConfigPort, pipeline_id: string): Promise<PipelinePlace | null | undefined> {
  if (!c.pipelinesDeployed()) return undefined;
  return isId(pipeline_id) ? repo.placeOf(c.db, pipeline_id.toLowerCase()) : null;
}

const isPlacement = (e: PipelineEvent): boolean => isId(e.pipeline_id) && isId(e.site_id) && isId(e.plant_id) && Number.isSafeInteger(e.at);
const lower = (e: PipelineEvent): PipelineEvent => ({ ...e, pipeline_id: e.pipeline_id.toLowerCase(), site_id: e.site_id.toLowerCase(), plant_id: e.plant_id.toLowerCase() });

/** `pipelines.pipeline.created|updated|deleted|received`, by the event's name. */
export async function pipelineChanged(c: ConfigPort, event: string, e: PipelineEvent | PipelineReceivedEvent): Promise<void> {
  if (event === "pipelines.pipeline.received") {
    if (isId(e.pipeline_id)) await repo.receivedEvents(c.db, e.pipeline_id.toLowerCase());
    return;
  }
  if (!("at" in e) || !isPlacement(e)) return;
  if (event === "pipelines.pipeline.deleted") await repo.remove(c.db, lower(e));
  else if (event === "pipelines.pipeline.created" || event === "pipelines.pipeline.updated") await repo.place(c.db, lower(e));
}

/** `pipelines.pipelines.announced`: one part of the list of every pipeline. */
export async function pipelinesAnnounced(c: ConfigPort, a: PipelinesAnnounced): Promise<void> {
  if (!isAnnouncedRange(a, isId) || !Array.isArray(a.pipelines)) return;
  const pipelines = a.pipelines
    .filter((p) => isPlacement({ ...p, at: a.at }))
    .map((p) => ({ ...lower({ ...p, at: a.at }), events: p.events === true }));
  await repo.announced(c.db, a.at, a.after?.toLowerCase() ?? null, a.through?.toLowerCase() ?? null, pipelines);
}
