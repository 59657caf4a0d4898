/**
 * A pipeline's registrations: the monitors it feeds (its registration items and the monitors its
 * tags name), checked against config's monitors, and announced to config and alerting, which
 * keep a copy (`pipelines.monitor.registered|unregistered`).
 */
import { notFound } from "../../lib/errors";
import { MSG } from "./messages";
import type { PipelineWrite } from "./pipelines.repo";
import type { PipelinesPort, SystemPort } from "./port";
import * as registrationsRepo from "./registrations.repo";
import { monitorIdsOf, registrationIsValid, slaveIds } from "./rules";

/** Where a pipeline is: its site, plant and function. */
export interface Place {
  site_id: string;
  plant_id: string;
  function_id: string | null;
}

/** The monitors a pipeline feeds with their slave ids (registration) or none (mapped by tags). */
export function registrationsOf(tags: Record<string, unknown>[], registration: Record<string, unknown>[]): Map<string, string | null> {
  const slaves = slaveIds(registration);
  return new Map(monitorIdsOf(tags, registration).map((id) => [id.toLowerCase(), slaves.get(id) ?? null]));
}

/** 404 `Invalid registration` unless every monitor the pipeline names exists where the pipeline is. */
export async function checkRegistration(
  port: PipelinesPort,
  place: Place,
  functionEnabled: boolean,
  tags: Record<string, unknown>[],
  registration: Record<string, unknown>[],
) {
  const monitors = await port.config.monitors(monitorIdsOf(tags, registration));
  const valid = registrationIsValid(
    { plant_id: place.plant_id, function_id: place.function_id, function_enabled_in_registration: functionEnabled },
    tags,
    registration,
    monitors,
  );
  if (!valid) throw notFound(MSG.invalidRegistration);
  return monitors;
}

/** Tells config (and anyone listening) which monitors the pipeline feeds now, and which it stopped feeding. */
export function announce(port: SystemPort, p: PipelineWrite, before: string[], after: Map<string, string | null>): void {
  for (const monitor_id of before) {
    if (!after.has(monitor_id)) void port.emit("pipelines.monitor.unregistered", { monitor_id, pipeline_id: p.pipeline_id });
  }
  for (const [monitor_id, slave] of after) {
    const n = slave === null ? NaN : Number(slave);
    void port.emit("pipelines.monitor.registered", {
      monitor_id,
      pipeline_id: p.pipeline_id,
      data_source: p.data_source,
      data_source_subtype: p.data_source_subtype,
      slave_id: Number.isInteger(n) ? n : null,
      data_type: p.data_type,
    });
  }
}

/** The pipeline a monitor is registered to, or null (none when the database does not answer): the authority behind config's copy. */
export function registrationOf(port: SystemPort, monitor_id: string): Promise<registrationsRepo.Registration | null> {
  return registrationsRepo.registrationOf(port.db, monitor_id).catch(() => null);
}
