/**
 * Monitors (ops 17-22): measuring points of a function, optionally on one of its assets, with
 * their tags. The licence caps how many exist; the pipelines service registers them (events).
 */
import { requireWrite } from "../../lib/access";
import { diff, type AuditChange } from "../../lib/audit";
import { config } from "../../lib/config";
import { DomainError, isUniqueViolation } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { findAsset } from "./assets";
import { paged, type ConfigPort } from "./port";
import type { MonitorRegisteredEvent, MonitorUnregisteredEvent } from "../pipelines/contract";
import type { MonitorEvent, MonitorFilter, MonitorListItem, MonitorTag, ResolvedMonitor } from "./contract";
import { findFunction } from "./functions";
import { MSG } from "./messages";
import { pipelinePlace } from "./pipeline-places";
import * as repo from "./monitors.repo";
import type { MonitorFilterValues, MonitorRow } from "./monitors.repo";
import {
  MONITOR_TYPE_FOR,
  normalizeTags,
  parseDataType,
  parseYesNo,
  scopeKey,
  type TagInput,
} from "./rules";
import { isForeignKeyViolation } from "./sql";

export interface MonitorCreate {
  monitor_name: string;
  monitor_type: string;
  function_id?: string | null;
  asset_id?: string | null;
  tags?: TagInput[];
  specs?: Record<string, unknown>;
  attributes?: Record<string, unknown>;
}

export interface MonitorUpdate {
  monitor_id: string;
  monitor_name: string;
  monitor_type: string;
  tags: TagInput[];
  specs: Record<string, unknown>;
  attributes: Record<string, unknown>;
}

const NOTHING = "00000000-0000-0000-0000-000000000000";

const eventOf = (m: MonitorRow): MonitorEvent => ({
  monitor_id: m.monitor_id,
  monitor_name: m.monitor_name,
  monitor_type: m.monitor_type,
  asset_id: m.asset_id,
  function_id: m.function_id,
  plant_id: m.plant_id,
  site_id: m.site_id,
  tags: m.tags,
  specs: m.specs,
  attributes: m.attributes,
  created_at: Number(m.created_at),
});

/** What the audit trail records of a monitor (its writable fields and where it hangs). */
const audited = (m: Pick<MonitorRow, "monitor_name" | "monitor_type" | "function_id" | "asset_id" | "tags" | "specs" | "attributes">) => ({
  monitor_name: m.monitor_name,
  monitor_type: m.monitor_type,
  function_id: m.function_id,
  asset_id: m.asset_id,
  tags: m.tags,
  specs: m.specs,
  attributes: m.attributes,
});

const auditChange = (
  action: AuditChange["action"],
  monitor_id: string,
  place: { site_id: string; plant_id: string },
  changes: AuditChange["changes"],
): AuditChange => ({ action, entity_type: "monitor", entity_id: monitor_id, site_id: place.site_id, plant_id: place.plant_id, changes });

function tagsOrThrow(tags: TagInput[]): MonitorTag[] {
  const normalized = normalizeTags(tags);
  if ("invalid" in normalized) throw new DomainError(400, MSG.invalidInput(normalized.invalid));
  return normalized;
}

/** A monitor with its parents, without regard to the caller. */
export async function resolveMonitorRow(c: ConfigPort, monitor_id: string): Promise<MonitorRow | null> {
  if (!isId(monitor_id)) return null;
  return c.cached(`monitor:${monitor_id}`, async () => (await repo.monitorsByIds(c.db, [monitor_id]))[0] ?? null);
}

/** A monitor, if the caller may see it. */
export async function findMonitor(c: ConfigPort, monitor_id: string): Promise<MonitorRow | null> {
  const row = await resolveMonitorRow(c, monitor_id);
  const [site, plant] = c.scopeIds;
  if (!row || (site !== null && row.site_id !== site) || (plant !== null && row.plant_id !== plant)) return null;
  return row;
}

/** The function (and asset) a new monitor hangs on, and its place: an asset's monitor is on the asset's function. */
async function parentOf(c: ConfigPort, p: MonitorCreate): Promise<{ function_id: string; asset_id: string | null; site_id: string; plant_id: string }> {
  if (p.asset_id != null) {
    const asset = await findAsset(c, p.asset_id);
    if (!asset || (p.function_id != null && p.function_id !== asset.function_id)) {
      throw new DomainError(400, MSG.monitorCreateError);
    }
    return { function_id: asset.function_id, asset_id: asset.asset_id, site_id: asset.site_id, plant_id: asset.plant_id };
  }
  const fn = await findFunction(c, p.function_id ?? "");
  if (!fn) throw new DomainError(400, MSG.monitorCreateError);
  return { function_id: fn.function_id, asset_id: null, site_id: fn.site_id, plant_id: fn.plant_id };
}

/** Op 17. Under a licence cap the count and the insert happen under one lock (repo.insertMonitor). */
export async function createMonitor(c: ConfigPort, p: MonitorCreate): Promise<{ id: string }> {
  requireWrite(c.user, "monitor", MSG.unauthorizedOperation);
  // null reads as left out (docs/architecture.md, Decisions).
  if (p.function_id == null && p.asset_id == null) throw new DomainError(400, MSG.insufficientInputs);
  const parent = await parentOf(c, p);
  const tags = tagsOrThrow(p.tags ?? []);
  const id = newId();
  let inserted: boolean;
  try {
    const values = {
      monitor_id: id,
      monitor_name: p.monitor_name,
      monitor_type: p.monitor_type,
      function_id: parent.function_id,
      asset_id: parent.asset_id,
      tags,
      specs: p.specs ?? {},
      attributes: p.attributes ?? {},
    };
    inserted = await c.audited(
      (made: boolean) => (made ? auditChange("create", id, parent, diff(null, audited(values))) : null),
      (db) => repo.insertMonitor(db, values, Date.now(), config().monitorLicenseLimit),
    );
  } catch (err) {
    if (isUniqueViolation(err, "monitors_name_key")) throw new DomainError(400, MSG.monitorExists(p.monitor_name));
    if (isForeignKeyViolation(err)) throw new DomainError(400, MSG.monitorCreateError);
    throw err;
  }
  if (!inserted) throw new DomainError(400, MSG.monitorLimit);
  const created = await resolveMonitorRow(c, id);
  if (created) await c.changed("monitor", "created", eventOf(created));
  return { id };
}

/** Op 18: refused while registered; the delete itself re-checks, so a registration meanwhile wins. */
export async function removeMonitor(c: ConfigPort, monitor_id: string): Promise<string> {
  requireWrite(c.user, "monitor", MSG.unauthorizedOperation);
  const monitor = await findMonitor(c, monitor_id);
  if (!monitor) throw new DomainError(400, MSG.invalidMonitorId(monitor_id));
  if (monitor.pipeline_id !== null) throw new DomainError(400, MSG.monitorRegistered);
  const deleted = await c.audited(
    (found: boolean) => (found ? auditChange("delete", monitor.monitor_id, monitor, diff(audited(monitor), null)) : null),
    (db) => repo.deleteUnregisteredMonitor(db, monitor.monitor_id),
  );
  if (!deleted) throw new DomainError(400, MSG.monitorRegistered);
  await c.changed("monitor", "deleted", eventOf(monitor));
  return MSG.monitorDeleted;
}

/** Op 19: every field is required and replaces the stored one. */
export async function updateMonitor(c: ConfigPort, p: MonitorUpdate): Promise<string> {
  requireWrite(c.user, "monitor", MSG.unauthorizedOperation);
  const monitor = await findMonitor(c, p.monitor_id);
  if (!monitor) throw new DomainError(400, MSG.invalidMonitorId(p.monitor_id));
  const tags = tagsOrThrow(p.tags);
  const { monitor_name, monitor_type, specs, attributes } = p;
  try {
    const changes = diff(audited(monitor), audited({ ...monitor, monitor_name, monitor_type, tags, specs, attributes }));
    await c.audited(auditChange("update", monitor.monitor_id, monitor, changes), (db) =>
      repo.updateMonitor(db, { monitor_id: monitor.monitor_id, monitor_name, monitor_type, tags, specs, attributes }),
    );
  } catch (err) {
    if (isUniqueViolation(err, "monitors_name_key")) throw new DomainError(400, MSG.monitorExists(p.monitor_name));
    throw err;
  }
  await c.changed("monitor", "updated", eventOf({ ...monitor, monitor_name, monitor_type, tags, specs, attributes }));
  return MSG.monitorUpdated;
}

/** The pipeline a monitor is registered to, as op 20 shows it; an empty object while unregistered. */
function gatewayOf(m: MonitorRow) {
  if (m.pipeline_id === null) return {};
  return {
    pipeline_id: m.pipeline_id,
    data_source: m.data_source ?? "",
    data_source_subtype: m.data_source_subtype ?? "",
    slave_id: m.slave_id,
  };
}

/** Op 20. */
export async function getMonitor(c: ConfigPort, monitor_id: string) {
  const m = await findMonitor(c, monitor_id);
  if (!m) throw new DomainError(400, MSG.invalidMonitorId(monitor_id));
  return {
    function_id: m.function_id,
    monitor_name: m.monitor_name,
    monitor_id: m.monitor_id,
    monitor_type: m.monitor_type,
    created_at: Number(m.created_at),
    gateway: gatewayOf(m),
    tags: m.tags,
    specs: m.specs,
    attributes: m.attributes,
  };
}

const idOrNothing = (id: string | undefined): string | null => (id === undefined ? null : isId(id) ? id : NOTHING);

/** The filter of ops 21 and 22 (repo.MONITOR_FILTER). */
function filterOf(c: ConfigPort, f: MonitorFilter): MonitorFilterValues {
  let registered: boolean | undefined;
  if (f.is_registered !== undefined) {
    registered = parseYesNo(f.is_registered);
    if (registered === undefined) throw new DomainError(400, MSG.invalidIsRegistered);
  }
  let dataType: string | null = null;
  let monitorType: string | null = null;
  if (f.data_type !== undefined) {
    const parsed = parseDataType(f.data_type);
    if (parsed === undefined) throw new DomainError(400, MSG.invalidDataType);
    if (parsed !== "all") {
      dataType = parsed;
      monitorType = MONITOR_TYPE_FOR[parsed];
    }
  }
  if (f.pipeline_id !== undefined && !isId(f.pipeline_id)) throw new DomainError(400, MSG.invalidPipelineId(f.pipeline_id));
  return {
    scope: c.scopeIds,
    asset_id: idOrNothing(f.asset_id),
    function_id: idOrNothing(f.function_id),
    pipeline_id: f.pipeline_id?.toLowerCase() ?? null,
    registered: registered ?? null,
    data_type: dataType,
    monitor_type: monitorType,
  };
}

const filterKey = (c: ConfigPort, f: MonitorFilter): string =>
  [scopeKey(c.scope), f.asset_id?.toLowerCase(), f.function_id?.toLowerCase(), f.pipeline_id?.toLowerCase(), f.is_registered?.toLowerCase(), f.data_type?.toLowerCase()]
    .map((v) => v ?? "")
    .join(":");

/** Op 21. A pipeline_id of no pipeline (pipeline-places.ts), or of one outside the caller's scope, is invalid. */
export async function listMonitors(c: ConfigPort, f: MonitorFilter): Promise<MonitorListItem[]> {
  const filter = filterOf(c, f);
  if (f.pipeline_id !== undefined) {
    const place = await pipelinePlace(c, f.pipeline_id);
    const [site, plant] = c.scopeIds;
    if (place === null || (place && ((site !== null && place.site_id !== site) || (plant !== null && place.plant_id !== plant)))) {
      throw new DomainError(400, MSG.invalidPipelineId(f.pipeline_id));
    }
  }
  const rows = await c.cachedList(`monitors:${filterKey(c, f)}`, async () => {
    const found = await repo.listMonitors(c.db, filter);
    return found.map((m) => ({
      monitor_id: m.monitor_id,
      monitor_name: m.monitor_name,
      monitor_type: m.monitor_type,
      created_at: Number(m.created_at),
      device_registered: m.registered,
    }));
  });
  return paged(c, rows, f);
}

/** Op 22. */
export async function countMonitors(c: ConfigPort, f: Pick<MonitorFilter, "asset_id" | "function_id">): Promise<number> {
  const filter = filterOf(c, f);
  return c.cached(`monitors.count:${filterKey(c, f)}`, () => repo.countMonitors(c.db, filter));
}

/** Internal `config.monitors.resolve`: what alerting, cm and ems need of monitors, those that exist. */
export async function resolveMonitors(c: ConfigPort, monitor_ids: string[]): Promise<ResolvedMonitor[]> {
  const ids = [...new Set(monitor_ids.filter(isId))].sort();
  if (ids.length === 0) return [];
  const rows = await c.cached(`monitors.resolve:${ids.join(",")}`, () => repo.monitorsByIds(c.db, ids));
  return rows.map((m) => ({
    monitor_id: m.monitor_id,
    monitor_name: m.monitor_name,
    monitor_type: m.monitor_type,
    function_id: m.function_id,
    function_name: m.function_name,
    asset_id: m.asset_id,
    asset_name: m.asset_name,
    plant_id: m.plant_id,
    plant_name: m.plant_name,
    site_id: m.site_id,
    site_name: m.site_name,
    timezone: m.timezone,
    specs: m.specs,
    attributes: m.attributes,
    asset_attributes: m.asset_attributes ?? {},
    tags: m.tags,
  }));
}

/**
 * slave_id is an integer on the monitor (spec: Monitor.gateway). The pipelines send a number or
 * null; a registration from elsewhere (an older sender, a tool) may send it as text.
 */
function slaveId(value: unknown): number | null {
  if (value === null || value === undefined || value === "") return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

/** `pipelines.monitor.registered`: idempotent, the latest registration wins. */
export async function registerMonitor(c: ConfigPort, e: MonitorRegisteredEvent): Promise<boolean> {
  if (!isId(e.monitor_id) || typeof e.pipeline_id !== "string" || e.pipeline_id === "") return false;
  return repo.registerMonitor(c.db, {
    monitor_id: e.monitor_id,
    pipeline_id: e.pipeline_id,
    data_source: e.data_source ?? null,
    data_source_subtype: e.data_source_subtype ?? null,
    slave_id: slaveId(e.slave_id),
    data_type: e.data_type ?? null,
  });
}

/** `pipelines.monitor.unregistered`: clears only the named pipeline's registration, so a late event cannot undo a newer one. */
export async function unregisterMonitor(c: ConfigPort, e: MonitorUnregisteredEvent): Promise<boolean> {
  if (!isId(e.monitor_id) || typeof e.pipeline_id !== "string") return false;
  return repo.unregisterMonitor(c.db, e.monitor_id, e.pipeline_id);
}
