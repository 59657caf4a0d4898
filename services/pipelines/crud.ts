/**
 * One pipeline of either kind (ops 46-53): create, update, delete and fetch. Each function is one
 * operation's story: permission, input rules, scope, the write, and the events that tell config
 * which monitors a pipeline feeds. Lists, counts and actions over many are in fleet.ts.
 */
import { inScope, requireWrite, scopeOf, type Principal, type Scope } from "../../lib/access";
import { auditedWrite, diff, REDACTED, stageAudit, type AuditChange } from "../../lib/audit";
import { SharedCache } from "../../lib/cache";
import { config } from "../../lib/config";
import { maskSettings } from "../../lib/secrets";
import { badRequest, DomainError, isDatabaseUnavailable, notFound } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { resolveFunction, resolveMonitors, resolvePlant } from "../config/contract";
import type { Ctx, PipelinesEnv } from "./context";
import { pipelinesEvents } from "./contract";
import { MSG } from "./messages";
import * as pipelinesRepo from "./pipelines.repo";
import * as registrationsRepo from "./registrations.repo";
import {
  firmwareOf,
  fetchView,
  hashIngestKey,
  monitorIdsOf,
  newIngestKey,
  registrationIsValid,
  slaveIds,
  type PipelineKind,
} from "./rules";
import { checkEdgeBody, checkThirdPartyBody } from "./schemas";
import { settingsAfterRotation, settingsToStore, settingsToUpdate } from "./settings";

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
export async function guarded<T>(env: PipelinesEnv, fault: { status: number; message: string }, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof DomainError) throw err;
    // Another service or the database unreachable for now: the gateway answers 503/504, which a client may retry.
    if (TRANSIENT.has((err as { type?: string }).type ?? "") || isDatabaseUnavailable(err)) throw err;
    env.logger.error(`${fault.message}:`, err);
    throw new DomainError(fault.status, fault.message);
  }
}

export const scopeIds = (scope: Scope): pipelinesRepo.ScopeIds =>
  scope.kind === "all" ? [null, null] : scope.kind === "site" ? [safeId(scope.site_id), null] : [safeId(scope.site_id), safeId(scope.plant_id)];
const NOTHING = "00000000-0000-0000-0000-000000000000";
const safeId = (id: string): string => (isId(id) ? id : NOTHING);

/** A pipeline of this kind that the caller may see, or the kind's `Invalid ... ID` (existence never leaks). */
export async function visiblePipeline(env: PipelinesEnv, user: Principal, kind: PipelineKind | undefined, id: string, invalid: (id: string) => string) {
  const row = isId(id) ? await pipelinesRepo.findPipeline(env.db, id, kind) : null;
  if (!row || !inScope(scopeOf(user), row)) throw badRequest(invalid(id));
  return row;
}

interface PlaceInput {
  plant_id?: string;
  function_id?: string;
  site_id?: string;
}

interface Place {
  site_id: string;
  plant_id: string;
  function_id: string | null;
}

/** Where a pipeline goes: its plant (given, or its function's), checked against the caller's scope. */
async function placeOf(ctx: Ctx, kind: PipelineKind, input: PlaceInput): Promise<Place> {
  const scope = scopeOf(ctx.meta.user);
  let place: Place | null = null;
  if (input.plant_id) {
    const plant = await resolvePlant(ctx, input.plant_id);
    if (!plant || !inScope(scope, plant) || (input.site_id && input.site_id !== plant.site_id)) {
      throw badRequest(MSG.invalidPlantId(input.plant_id));
    }
    place = { site_id: plant.site_id, plant_id: plant.plant_id, function_id: null };
  }
  if (input.function_id) {
    const fn = await resolveFunction(ctx, input.function_id);
    if (!fn || !inScope(scope, fn) || (place && fn.plant_id !== place.plant_id) || (input.site_id && input.site_id !== fn.site_id)) {
      throw badRequest(MSG.invalidFunctionId(input.function_id));
    }
    place = { site_id: fn.site_id, plant_id: fn.plant_id, function_id: fn.function_id };
  }
  if (!place) throw badRequest(TEXTS[kind].insufficientPlace);
  return place;
}

/** The monitors a pipeline feeds with their slave ids (registration) or none (mapped by tags). */
function registrationsOf(tags: Record<string, unknown>[], registration: Record<string, unknown>[]): Map<string, string | null> {
  const slaves = slaveIds(registration);
  return new Map(monitorIdsOf(tags, registration).map((id) => [id.toLowerCase(), slaves.get(id) ?? null]));
}

async function checkRegistration(ctx: Ctx, place: Place, functionEnabled: boolean, tags: Record<string, unknown>[], registration: Record<string, unknown>[]) {
  const monitors = await resolveMonitors(ctx, monitorIdsOf(tags, registration));
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
function announce(ctx: Ctx, p: pipelinesRepo.PipelineWrite, before: string[], after: Map<string, string | null>): void {
  for (const monitor_id of before) {
    if (!after.has(monitor_id)) {
      void pipelinesEvents.emit(ctx, "pipelines.monitor.unregistered", { monitor_id, pipeline_id: p.pipeline_id });
    }
  }
  for (const [monitor_id, slave] of after) {
    const n = slave === null ? NaN : Number(slave);
    void pipelinesEvents.emit(ctx, "pipelines.monitor.registered", {
      monitor_id,
      pipeline_id: p.pipeline_id,
      data_source: p.data_source,
      data_source_subtype: p.data_source_subtype,
      slave_id: Number.isInteger(n) ? n : null,
      data_type: p.data_type,
    });
  }
}

/**
 * Every replica drops what it cached of the pipeline (keys, tag mapping), and the cacher forgets
 * `resolve`'s answers before the write is answered, so that other services (config's monitor
 * filter, alerting) do not see a changed or deleted pipeline as it was.
 */
async function changed(ctx: Ctx, pipeline_id: string): Promise<void> {
  await new SharedCache(ctx.broker).clean("pipelines.resolve:**");
  void pipelinesEvents.broadcast(ctx, "pipelines.changed", { pipeline_id }, "pipelines");
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

function checkBody(kind: PipelineKind, body: Required<Pick<PipelineInput, "data_type" | "data_source_subtype">> & PipelineInput): void {
  const problem =
    kind === "edge"
      ? checkEdgeBody({ ...body, settings: body.settings ?? {} })
      : checkThirdPartyBody({ ...body, settings: body.settings });
  if (problem) throw badRequest(problem.message, problem.field);
}

/** What the audit trail records of a pipeline: its body (settings' passwords as "***", lib/audit.ts), not its runtime state. */
const audited = (p: pipelinesRepo.PipelineWrite) => ({
  kind: p.kind,
  pipeline_name: p.pipeline_name,
  site_id: p.site_id,
  plant_id: p.plant_id,
  function_id: p.function_id,
  data_type: p.data_type,
  data_source: p.data_source,
  data_source_subtype: p.data_source_subtype,
  settings: p.settings,
  tags: p.tags,
  registration: p.registration,
  function_enabled_in_registration: p.function_enabled_in_registration,
  gateway_firmware: p.gateway_firmware,
  firmware_update: p.firmware_update,
  data_directory: p.data_directory,
  mac_address: p.mac_address,
});

export const pipelineChange = (action: AuditChange["action"], p: Pick<pipelinesRepo.PipelineWrite, "pipeline_id" | "site_id" | "plant_id">, changes: AuditChange["changes"]): AuditChange => ({
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
  env: PipelinesEnv,
  ctx: Ctx,
  write: pipelinesRepo.PipelineWrite,
  slaves: Map<string, string | null>,
  create: Buffer | null,
  before: pipelinesRepo.PipelineWrite | null,
  settingsOf?: (stored: Record<string, unknown>) => Record<string, unknown>,
): Promise<void> {
  if (write.kind === "edge") {
    const other = await pipelinesRepo.pipelineWithMac(env.db, write.mac_address, create ? null : write.pipeline_id);
    if (other) throw badRequest(MSG.macInUse(other));
  }
  try {
    await env.db.transaction(async (tx) => {
      if (!create && settingsOf) write.settings = settingsOf((await pipelinesRepo.lockSettings(tx, write.pipeline_id)) ?? {});
      if (create) await pipelinesRepo.insertPipeline(tx, write, create, Date.now());
      else await pipelinesRepo.updatePipeline(tx, write);
      if (!(await registrationsRepo.replaceRegistrations(tx, write.pipeline_id, slaves))) throw badRequest(MSG.monitorInAnotherGateway);
      await stageAudit(env.streams, tx, ctx, pipelineChange(create ? "create" : "update", write, diff(before && audited(before), audited(write))));
    });
  } catch (err) {
    if (pipelinesRepo.isMacTaken(err)) {
      const other = await pipelinesRepo.pipelineWithMac(env.db, write.mac_address, create ? null : write.pipeline_id);
      throw badRequest(MSG.macInUse(other ?? ""));
    }
    throw err;
  }
}

/** Ops 46 and 50. The ingest key is answered here once; only its hash is kept. */
export async function createPipeline(env: PipelinesEnv, ctx: Ctx<PipelineInput>, kind: PipelineKind) {
  requireWrite(ctx.meta.user, "pipeline", MSG.unauthorizedOperation);
  return guarded(env, TEXTS[kind].createFault, async () => {
    const p = ctx.params as PipelineInput & { pipeline_name: string; data_type: string; data_source: string; data_source_subtype: string };
    checkBody(kind, p);
    const place = await placeOf(ctx, kind, p);
    const registration = p.registration ?? [];
    const functionEnabled = p.function_enabled_in_registration ?? false;
    await checkRegistration(ctx, place, functionEnabled, p.tags, registration);
    const settings = p.settings ?? {};
    const write: pipelinesRepo.PipelineWrite = {
      pipeline_id: newId(),
      kind,
      pipeline_name: p.pipeline_name,
      ...place,
      data_type: p.data_type,
      data_source: p.data_source,
      data_source_subtype: p.data_source_subtype,
      settings: settingsToStore(env, settings),
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
    await save(env, ctx, write, slaves, hashIngestKey(ingest_key), null);
    announce(ctx, write, [], slaves);
    return { id: write.pipeline_id, ingest_key };
  });
}

/** Ops 48 and 52: what the body leaves out stays as it was; settings and tags are checked as on create. */
export async function updatePipeline(env: PipelinesEnv, ctx: Ctx<PipelineInput>, kind: PipelineKind) {
  requireWrite(ctx.meta.user, "pipeline", MSG.unauthorizedOperation);
  const p = ctx.params;
  const texts = TEXTS[kind];
  const current = await visiblePipeline(env, ctx.meta.user, kind, p.pipeline_id ?? "", texts.invalidId);
  return guarded(env, texts.updateFault, async () => {
    const merged = {
      ...p,
      data_type: p.data_type ?? current.data_type,
      data_source_subtype: p.data_source_subtype ?? current.data_source_subtype,
      // Checked as the body says them: "***" where a secret is kept (also when settings are left out).
      settings: p.settings ?? maskSettings(current.settings),
    };
    checkBody(kind, merged);
    const moved = p.plant_id !== undefined || p.function_id !== undefined;
    const place: Place = moved ? await placeOf(ctx, kind, p) : { site_id: current.site_id, plant_id: current.plant_id, function_id: current.function_id };
    const registration = p.registration ?? current.registration;
    const functionEnabled = p.function_enabled_in_registration ?? current.function_enabled_in_registration;
    await checkRegistration(ctx, place, functionEnabled, p.tags, registration);
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
    const before = await registrationsRepo.registeredMonitors(env.db, current.pipeline_id);
    const slaves = registrationsOf(p.tags, registration);
    await save(env, ctx, write, slaves, null, current, (stored) => settingsToUpdate(env, merged.settings, stored));
    await changed(ctx, current.pipeline_id);
    announce(ctx, write, before, slaves);
    return texts.updated;
  });
}

/**
 * `POST /_config/pipelines/<pipeline_id>/_rotate_key` (docs/security.md, "Ingest key rotation"), for either kind, by whoever
 * may update the pipeline: a new ingest key, shown once; the one it replaces keeps working for
 * INGEST_KEY_GRACE_S, so the gateway can be given the new one without losing readings. Only one
 * replaced key is kept: a second rotation within the grace ends the first one's at once.
 *
 * The new key reads the gateway's configuration, secrets opened: a plant-admin's rotation clears
 * the secrets, which it may not read, except those its body enters anew (`{"settings":
 * {"user_password": "..."}}`); the site's administrators' keeps them (settingsAfterRotation).
 */
export async function rotateIngestKey(env: PipelinesEnv, ctx: Ctx<{ pipeline_id: string; settings?: Record<string, unknown> }>): Promise<{ ingest_key: string }> {
  requireWrite(ctx.meta.user, "pipeline", MSG.unauthorizedOperation);
  const current = await visiblePipeline(env, ctx.meta.user, undefined, ctx.params.pipeline_id, MSG.invalidPipelineId);
  // Checked before the write too, so that a wrong name answers 400 whatever happens meanwhile.
  const keep = ctx.meta.user.user_type === "saas-admin" || ctx.meta.user.user_type === "site-admin";
  settingsAfterRotation(env, current.settings, ctx.params.settings, keep);
  return guarded(env, { status: 500, message: MSG.internalError }, async () => {
    const ingest_key = newIngestKey();
    const until = Date.now() + config().ingestKeyGraceS * 1000;
    const rotated = await env.db.transaction(async (tx) => {
      const stored = await pipelinesRepo.lockSettings(tx, current.pipeline_id);
      if (!stored) return false;
      const settings = settingsAfterRotation(env, stored, ctx.params.settings, keep);
      if (!(await pipelinesRepo.rotateKey(tx, current.pipeline_id, hashIngestKey(ingest_key), until, settings))) return false;
      const changes: AuditChange["changes"] = {
        ingest_key: [REDACTED, REDACTED],
        previous_key_until: [null, new Date(until).toISOString()],
        ...diff({ settings: stored }, { settings }),
      };
      await stageAudit(env.streams, tx, ctx, pipelineChange("rotate_key", current, changes));
      return true;
    });
    if (!rotated) throw badRequest(MSG.invalidPipelineId(ctx.params.pipeline_id));
    // Every replica drops the keys it cached of the pipeline: the old one is read again, with its end.
    await changed(ctx, current.pipeline_id);
    return { ingest_key };
  });
}

/** Ops 47 and 51. The pipeline's readings stay until the site's retention takes them. */
export async function removePipeline(env: PipelinesEnv, ctx: Ctx<{ pipeline_id: string }>, kind: PipelineKind) {
  requireWrite(ctx.meta.user, "pipeline", MSG.unauthorizedOperation);
  const texts = TEXTS[kind];
  const current = await visiblePipeline(env, ctx.meta.user, kind, ctx.params.pipeline_id, texts.invalidId);
  return guarded(env, texts.deleteFault, async () => {
    const before = await registrationsRepo.registeredMonitors(env.db, current.pipeline_id);
    await auditedWrite(env.db, env.streams, ctx, pipelineChange("delete", current, diff(audited(current), null)), (q) => pipelinesRepo.deletePipeline(q, current.pipeline_id));
    await changed(ctx, current.pipeline_id);
    announce(ctx, { ...current, settings: current.settings }, before, new Map());
    return texts.deleted;
  });
}

/**
 * `mac_ids` as a query can carry a list: repeated (`mac_ids=a&mac_ids=b`), comma-separated, or as
 * JSON text (`mac_ids=["a","b"]`). Empty names none: as if not given.
 */
export function macIdsOf(value: string | string[] | undefined): string[] {
  const items = Array.isArray(value) ? value : value === undefined ? [] : jsonList(value) ?? value.split(",");
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
export async function getPipeline(env: PipelinesEnv, ctx: Ctx<{ pipeline_id: string; mac_ids?: string | string[] }>, kind: PipelineKind) {
  const texts = TEXTS[kind];
  const row = await visiblePipeline(env, ctx.meta.user, kind, ctx.params.pipeline_id, texts.invalidId);
  const macs = macIdsOf(ctx.params.mac_ids);
  if (macs.length && !macs.includes(row.mac_address.toLowerCase())) throw badRequest(texts.invalidId(ctx.params.pipeline_id));
  return guarded(env, texts.fetchFault, async () => fetchView(row, config().latestGatewayFirmware));
}

