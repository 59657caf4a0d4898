/**
 * One pipeline of either kind (ops 46-53): create, update, delete and fetch. Each function is one
 * operation's story: permission, input rules, scope, the write, and the events that tell config
 * which monitors a pipeline feeds (registrations.ts). Lists, counts and actions over many are in
 * fleet.ts and actions.ts; a key's rotation in keys.ts.
 */
import { inScope, requireWrite, scopeOf, type Scope } from "../../lib/access";
import { diff, type AuditChange } from "../../lib/audit";
import { config } from "../../lib/config";
import { maskSettings } from "../../lib/secrets";
import { badRequest, DomainError, isDatabaseUnavailable } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import type { PlantActivity, ResolvedPipeline } from "./contract";
import { placed } from "./announcements";
import { MSG } from "./messages";
import * as pipelinesRepo from "./pipelines.repo";
import type { PipelinesPort, SystemPort } from "./port";
import { announce, checkRegistration, registrationsOf, type Place } from "./registrations";
import { registeredMonitors, replaceRegistrations } from "./registrations.repo";
import { collectionCountsOf } from "./collection";
import { firmwareOf, fetchView, hashIngestKey, identityView, newIngestKey } from "./rules";
import { checkEdgeBody, checkThirdPartyBody } from "./schemas";
import { settingsToStore, settingsToUpdate } from "./settings";

/** The spec's texts differ by kind: "Pipeline" for third-party, "Gateway" for edge-server. */
const TEXTS = {
  thirdparty: {
    invalidId: MSG.invalidPipelineId,
    deleted: MSG.pipelineDeleted,
    updated: MSG.pipelineUpdated,
    createFault: { status: 500, message: MSG.pipelineCreateError },
    updateFault: { status: 500, message: MSG.pipelineUpdateError },
    deleteFault: { status: 500, message: MSG.pipelineDeleteError },
    fetchFault: { status: 500, message: MSG.pipelineFetchError },
    insufficientPlace: MSG.insufficientInputs,
  },
  edge: {
    invalidId: MSG.invalidGatewayId,
    deleted: MSG.gatewayDeleted,
    updated: MSG.gatewayUpdated,
    // The spec lists `Error creating gateway` with the edge create's 400s.
    createFault: { status: 400, message: MSG.gatewayCreateError },
    updateFault: { status: 500, message: MSG.internalError },
    deleteFault: { status: 500, message: MSG.internalError },
    fetchFault: { status: 500, message: MSG.internalError },
    insufficientPlace: MSG.insufficientInput("plant_id"),
  },
} as const;

const TRANSIENT = new Set(["SERVICE_NOT_FOUND", "SERVICE_NOT_AVAILABLE", "REQUEST_TIMEOUT", "REQUEST_REJECTED", "QUEUE_FULL"]);

/** Runs an operation; an unexpected fault answers the operation's documented message, never its details. */
export async function guarded<T>(port: SystemPort, fault: { status: number; message: string }, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof DomainError) throw err;
    // Another service or the database unreachable for now: the gateway answers 503/504, which a client may retry.
    if (TRANSIENT.has((err as { type?: string }).type ?? "") || isDatabaseUnavailable(err)) throw err;
    port.logger.error(`${fault.message}:`, err);
    throw new DomainError(fault.status, fault.message);
  }
}

export const scopeIds = (scope: Scope): pipelinesRepo.ScopeIds =>
  scope.kind === "all" ? [null, null] : scope.kind === "site" ? [safeId(scope.site_id), null] : [safeId(scope.site_id), safeId(scope.plant_id)];
const NOTHING = "00000000-0000-0000-0000-000000000000";
const safeId = (id: string): string => (isId(id) ? id : NOTHING);

/** A pipeline of this kind that the caller may see, or the kind's `Invalid ... ID` (existence never leaks). */
export async function visiblePipeline(port: PipelinesPort, kind: pipelinesRepo.PipelineKind | undefined, id: string, invalid: (id: string) => string) {
  const row = isId(id) ? await pipelinesRepo.findPipeline(port.db, id, kind) : null;
  if (!row || !inScope(scopeOf(port.user), row)) throw badRequest(invalid(id));
  return row;
}

interface PlaceInput {
  plant_id?: string;
  function_id?: string;
  site_id?: string;
}

/** Where a pipeline goes: its plant (given, or its function's), checked against the caller's scope. */
async function placeOf(port: PipelinesPort, kind: pipelinesRepo.PipelineKind, input: PlaceInput): Promise<Place> {
  const scope = scopeOf(port.user);
  let place: Place | null = null;
  if (input.plant_id) {
    const plant = await port.config.plant(input.plant_id);
    if (!plant || !inScope(scope, plant) || (input.site_id && input.site_id !== plant.site_id)) {
      throw badRequest(MSG.invalidPlantId(input.plant_id));
    }
    place = { site_id: plant.site_id, plant_id: plant.plant_id, function_id: null };
  }
  if (input.function_id) {
    const fn = await port.config.function(input.function_id);
    if (!fn || !inScope(scope, fn) || (place && fn.plant_id !== place.plant_id) || (input.site_id && input.site_id !== fn.site_id)) {
      throw badRequest(MSG.invalidFunctionId(input.function_id));
    }
    place = { site_id: fn.site_id, plant_id: fn.plant_id, function_id: fn.function_id };
  }
  if (!place) throw badRequest(TEXTS[kind].insufficientPlace);
  return place;
}

/**
 * Every replica drops what it cached of the pipeline (keys, tag mapping), and the cacher forgets
 * `resolve`'s answers before the write is answered, so that other services (config's monitor
 * filter, alerting) do not see a changed or deleted pipeline as it was.
 */
export async function changed(port: SystemPort, pipeline_id: string): Promise<void> {
  await port.resolveStale();
  port.forget(pipeline_id);
}

export interface PipelineInput extends PlaceInput {
  pipeline_id?: string;
  pipeline_name?: string;
  data_type?: string;
  data_source?: string;
  data_source_subtype?: string;
  settings?: Record<string, unknown>;
  tags: Record<string, unknown>[];
  registration?: Record<string, unknown>[];
  function_enabled_in_registration?: boolean;
  gateway_firmware?: unknown;
  firmware_update?: number;
  data_directory?: string;
}

function checkBody(kind: pipelinesRepo.PipelineKind, body: Required<Pick<PipelineInput, "data_type" | "data_source_subtype">> & PipelineInput): void {
  const problem =
    kind === "edge"
      ? checkEdgeBody({ ...body, settings: body.settings ?? {} })
      : checkThirdPartyBody({ ...body, settings: body.settings });
  if (problem) throw badRequest(problem.message, problem.field);
}

/** What the audit trail records of a pipeline: its body (settings' passwords as "***", lib/audit.ts), not its id or runtime state. */
function audited(p: pipelinesRepo.PipelineWrite): Omit<pipelinesRepo.PipelineWrite, "pipeline_id"> {
  const { pipeline_id: _id, ...body } = pipelinesRepo.writtenOf(p);
  return body;
}

export const pipelineChange = (
  action: AuditChange["action"],
  p: Pick<pipelinesRepo.PipelineWrite, "pipeline_id" | "site_id" | "plant_id">,
  changes: AuditChange["changes"],
): AuditChange => ({
  action,
  entity_type: "pipeline",
  entity_id: p.pipeline_id,
  site_id: p.site_id,
  plant_id: p.plant_id,
  changes,
});

/**
 * Writes the pipeline and its registrations, and its audit entry, in one transaction; the spec's
 * messages for a taken MAC or monitor. `before`: the pipeline as it was (null: a create). An
 * update's settings are made from the row as it is then, locked (`settingsOf`): a secret kept as
 * "***" is the one stored at that moment, not one a rotation cleared meanwhile.
 */
async function save(
  port: PipelinesPort,
  write: pipelinesRepo.PipelineWrite,
  slaves: Map<string, string | null>,
  create: Buffer | null,
  before: pipelinesRepo.PipelineWrite | null,
  settingsOf?: (stored: Record<string, unknown>) => Record<string, unknown>,
): Promise<void> {
  if (write.kind === "edge") {
    const other = await pipelinesRepo.pipelineWithMac(port.db, write.mac_address, create ? null : write.pipeline_id);
    if (other) throw badRequest(MSG.macInUse(other));
  }
  try {
    await port.db.transaction(async (tx) => {
      if (!create && settingsOf) write.settings = settingsOf((await pipelinesRepo.lockSettings(tx, write.pipeline_id)) ?? {});
      if (create) await pipelinesRepo.insertPipeline(tx, write, create, Date.now());
      else await pipelinesRepo.updatePipeline(tx, write);
      if (!(await replaceRegistrations(tx, write.pipeline_id, slaves))) throw badRequest(MSG.monitorInAnotherGateway);
      await port.audit(tx, pipelineChange(create ? "create" : "update", write, diff(before && audited(before), audited(write))));
    });
  } catch (err) {
    if (pipelinesRepo.isMacTaken(err)) {
      const other = await pipelinesRepo.pipelineWithMac(port.db, write.mac_address, create ? null : write.pipeline_id);
      throw badRequest(MSG.macInUse(other ?? ""));
    }
    throw err;
  }
}

/** Ops 46 and 50. The ingest key is answered here once; only its hash is kept. */
export async function createPipeline(port: PipelinesPort, params: PipelineInput, kind: pipelinesRepo.PipelineKind) {
  requireWrite(port.user, "pipeline", MSG.unauthorizedOperation);
  return guarded(port, TEXTS[kind].createFault, async () => {
    const p = params as PipelineInput & { pipeline_name: string; data_type: string; data_source: string; data_source_subtype: string };
    checkBody(kind, p);
    const place = await placeOf(port, kind, p);
    const registration = p.registration ?? [];
    const functionEnabled = p.function_enabled_in_registration ?? false;
    await checkRegistration(port, place, functionEnabled, p.tags, registration);
    const settings = p.settings ?? {};
    const write: pipelinesRepo.PipelineWrite = {
      pipeline_id: newId(),
      kind,
      pipeline_name: p.pipeline_name,
      ...place,
      data_type: p.data_type,
      data_source: p.data_source,
      data_source_subtype: p.data_source_subtype,
      settings: settingsToStore(port, settings),
      tags: p.tags,
      registration,
      function_enabled_in_registration: functionEnabled,
      gateway_firmware: firmwareOf(p.gateway_firmware),
      firmware_update: p.firmware_update ?? 0,
      data_directory: p.data_directory ?? "",
      mac_address: String(settings.mac_address ?? ""),
    };
    const slaves = registrationsOf(p.tags, registration);
    const ingest_key = newIngestKey();
    await save(port, write, slaves, hashIngestKey(ingest_key), null);
    await placed(port, "created", write);
    announce(port, write, [], slaves);
    return { id: write.pipeline_id, ingest_key };
  });
}

/** Ops 48 and 52: what the body leaves out stays as it was; settings and tags are checked as on create. */
export async function updatePipeline(port: PipelinesPort, p: PipelineInput, kind: pipelinesRepo.PipelineKind) {
  requireWrite(port.user, "pipeline", MSG.unauthorizedOperation);
  const texts = TEXTS[kind];
  const current = await visiblePipeline(port, kind, p.pipeline_id ?? "", texts.invalidId);
  return guarded(port, texts.updateFault, async () => {
    const merged = {
      ...p,
      data_type: p.data_type ?? current.data_type,
      data_source_subtype: p.data_source_subtype ?? current.data_source_subtype,
      // Checked as the body says them: "***" where a secret is kept (also when settings are left out).
      settings: p.settings ?? maskSettings(current.settings),
    };
    checkBody(kind, merged);
    const moved = p.plant_id !== undefined || p.function_id !== undefined;
    const place: Place = moved ? await placeOf(port, kind, p) : { site_id: current.site_id, plant_id: current.plant_id, function_id: current.function_id };
    const registration = p.registration ?? current.registration;
    const functionEnabled = p.function_enabled_in_registration ?? current.function_enabled_in_registration;
    await checkRegistration(port, place, functionEnabled, p.tags, registration);
    const write: pipelinesRepo.PipelineWrite = {
      pipeline_id: current.pipeline_id,
      kind,
      pipeline_name: p.pipeline_name ?? current.pipeline_name,
      ...place,
      data_type: merged.data_type,
      data_source: p.data_source ?? current.data_source,
      data_source_subtype: merged.data_source_subtype,
      // A secret sent as "***" keeps the stored one, sealed as it was (docs/security.md), unless the connection's
      // destination or identity changes: made in save() from the row locked (settingsToUpdate).
      settings: merged.settings,
      tags: p.tags,
      registration,
      function_enabled_in_registration: functionEnabled,
      gateway_firmware: p.gateway_firmware === undefined ? current.gateway_firmware : firmwareOf(p.gateway_firmware),
      firmware_update: p.firmware_update ?? current.firmware_update,
      data_directory: p.data_directory ?? current.data_directory,
      mac_address: String(merged.settings.mac_address ?? current.mac_address),
    };
    const before = await registeredMonitors(port.db, current.pipeline_id);
    const slaves = registrationsOf(p.tags, registration);
    await save(port, write, slaves, null, current, (stored) => settingsToUpdate(port, merged.settings, stored));
    await changed(port, current.pipeline_id);
    await placed(port, "updated", write);
    announce(port, write, before, slaves);
    return texts.updated;
  });
}

/** Ops 47 and 51. The pipeline's readings stay until the site's retention takes them. */
export async function removePipeline(port: PipelinesPort, params: { pipeline_id: string }, kind: pipelinesRepo.PipelineKind) {
  requireWrite(port.user, "pipeline", MSG.unauthorizedOperation);
  const texts = TEXTS[kind];
  const current = await visiblePipeline(port, kind, params.pipeline_id, texts.invalidId);
  return guarded(port, texts.deleteFault, async () => {
    const before = await registeredMonitors(port.db, current.pipeline_id);
    await port.auditedWrite(pipelineChange("delete", current, diff(audited(current), null)), (q) => pipelinesRepo.deletePipeline(q, current.pipeline_id));
    await changed(port, current.pipeline_id);
    await placed(port, "deleted", current);
    announce(port, current, before, new Map());
    return texts.deleted;
  });
}

/**
 * `mac_ids` as a query can carry a list: repeated (`mac_ids=a&mac_ids=b`), comma-separated, or as
 * JSON text (`mac_ids=["a","b"]`). Empty names none: as if not given.
 */
export function macIdsOf(value: string | string[] | undefined): string[] {
  const items = Array.isArray(value) ? value : value === undefined ? [] : (jsonList(value) ?? value.split(","));
  return items.map((m) => m.trim().replace(/^"|"$/g, "").toLowerCase()).filter(Boolean);
}

function jsonList(text: string): string[] | undefined {
  if (!text.trim().startsWith("[")) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.map(String) : undefined;
  } catch {
    return undefined;
  }
}

/** Op 49 and the edge fetch. `mac_ids`, when it names any, must name the pipeline's MAC address. */
export async function getPipeline(port: PipelinesPort, params: { pipeline_id: string; mac_ids?: string | string[] }, kind: pipelinesRepo.PipelineKind) {
  const texts = TEXTS[kind];
  const row = await visiblePipeline(port, kind, params.pipeline_id, texts.invalidId);
  const macs = macIdsOf(params.mac_ids);
  if (macs.length && !macs.includes(row.mac_address.toLowerCase())) throw badRequest(texts.invalidId(params.pipeline_id));
  return guarded(port, texts.fetchFault, async () => ({
    ...fetchView(row, config().latestGatewayFirmware),
    // A pipeline the service collects itself says how many readings it collected and rejected (docs/collectors.md).
    ...(await collectionCountsOf(port.db, [row])).get(row.pipeline_id),
  }));
}

/** Config's plant-delete refusal: the plant's pipelines and their events (none when the database does not answer). */
export function plantActivity(port: SystemPort, plant_id: string): Promise<PlantActivity> {
  return pipelinesRepo.plantActivity(port.db, plant_id.toLowerCase()).catch(() => ({ pipelines: 0, events: 0 }));
}

/** `pipelines.resolve`: what other services need to name and place a gateway, or null. */
export async function resolvePipeline(port: SystemPort, pipeline_id: string): Promise<ResolvedPipeline | null> {
  if (!/^[0-9a-f-]{36}$/i.test(pipeline_id)) return null;
  const row = await pipelinesRepo.findPipeline(port.db, pipeline_id.toLowerCase());
  if (!row) return null;
  return {
    ...identityView(row),
    function_id: row.function_id,
    plant_id: row.plant_id,
    site_id: row.site_id,
    status: row.status,
    monitor_ids: await registeredMonitors(port.db, row.pipeline_id),
  };
}
