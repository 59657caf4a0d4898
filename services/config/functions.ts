/** Functions (ops 23-27): a plant's functions, which hold its assets and monitors. */
import { requireWrite } from "../../lib/access";
import { diff, type AuditChange } from "../../lib/audit";
import { DomainError, isUniqueViolation } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { paged, type ConfigPort, type Page } from "./port";
import type { FunctionEvent, ResolvedFunction } from "./contract";
import { MSG } from "./messages";
import { findPlant } from "./plants";
import * as repo from "./functions.repo";
import type { FunctionRow } from "./functions.repo";
import { functionDeleteRefusal } from "./rules";
import { isForeignKeyViolation } from "./sql";

const eventOf = (f: Pick<FunctionRow, "function_id" | "function_name" | "plant_id" | "site_id">): FunctionEvent => ({
  function_id: f.function_id,
  function_name: f.function_name,
  plant_id: f.plant_id,
  site_id: f.site_id,
});

const auditChange = (
  action: AuditChange["action"],
  f: { function_id: string; plant_id: string; site_id: string },
  changes: AuditChange["changes"],
): AuditChange => ({ action, entity_type: "function", entity_id: f.function_id, site_id: f.site_id, plant_id: f.plant_id, changes });

/** A function with its plant and site, by id, without regard to the caller (internal resolve). */
export async function resolveFunction(c: ConfigPort, function_id: string): Promise<FunctionRow | null> {
  if (!isId(function_id)) return null;
  return c.cached(`function:${function_id}`, () => repo.functionById(c.db, function_id));
}

/** A function, if the caller may see it. */
export async function findFunction(c: ConfigPort, function_id: string): Promise<FunctionRow | null> {
  const row = await resolveFunction(c, function_id);
  const [site, plant] = c.scopeIds;
  if (!row || (site !== null && row.site_id !== site) || (plant !== null && row.plant_id !== plant)) return null;
  return row;
}

/** Op 23: site_id, when given, must be the plant's site. */
export async function createFunction(
  c: ConfigPort,
  p: { function_name: string; plant_id: string; site_id?: string | null },
): Promise<{ id: string }> {
  requireWrite(c.user, "function", MSG.unauthorizedOperation);
  const plant = await findPlant(c, p.plant_id);
  if (!plant || (p.site_id != null && p.site_id !== plant.site_id)) {
    throw new DomainError(400, MSG.invalidPlantId(p.plant_id));
  }
  const id = newId();
  try {
    const values = { function_id: id, function_name: p.function_name, plant_id: plant.plant_id };
    await c.audited(auditChange("create", { ...values, site_id: plant.site_id }, diff(null, { function_name: values.function_name, plant_id: values.plant_id })), (db) =>
      repo.insertFunction(db, values, Date.now()),
    );
  } catch (err) {
    if (isUniqueViolation(err, "functions_name_key")) throw new DomainError(400, MSG.functionExists(p.function_name));
    if (isForeignKeyViolation(err)) {
      throw new DomainError(400, MSG.invalidPlantId(p.plant_id));
    }
    throw err;
  }
  await c.changed("function", "created", eventOf({ function_id: id, function_name: p.function_name, ...plant }));
  return { id };
}

/** Op 24: refused while monitors and/or assets are attached; the foreign keys settle a race. */
export async function removeFunction(c: ConfigPort, function_id: string): Promise<string> {
  requireWrite(c.user, "function", MSG.unauthorizedOperation);
  const fn = await findFunction(c, function_id);
  if (!fn) throw new DomainError(400, MSG.invalidFunctionId(function_id));
  const before = await repo.functionAttachments(c.db, fn.function_id);
  const refusal = functionDeleteRefusal(before.monitors, before.assets);
  if (refusal) throw new DomainError(400, refusal);
  try {
    await c.audited(auditChange("delete", fn, diff({ function_name: fn.function_name, plant_id: fn.plant_id }, null)), (db) =>
      repo.deleteFunction(db, fn.function_id),
    );
  } catch (err) {
    if (isForeignKeyViolation(err)) {
      const now = await repo.functionAttachments(c.db, fn.function_id);
      throw new DomainError(400, functionDeleteRefusal(now.monitors, now.assets) ?? MSG.functionHasAssets);
    }
    throw err;
  }
  await c.changed("function", "deleted", eventOf(fn));
  return MSG.functionDeleted;
}

/**
 * Op 25: renames; the plant_id of the body (and a site_id, as create takes) must be the
 * function's own: functions do not move (docs/architecture.md, Decisions).
 */
export async function updateFunction(
  c: ConfigPort,
  p: { function_id: string; function_name: string; plant_id: string; site_id?: string | null },
): Promise<string> {
  requireWrite(c.user, "function", MSG.unauthorizedOperation);
  const fn = await findFunction(c, p.function_id);
  if (!fn) throw new DomainError(404, MSG.invalidFunction);
  if (p.plant_id !== fn.plant_id || (p.site_id != null && p.site_id !== fn.site_id)) {
    throw new DomainError(400, MSG.invalidPlantId(p.plant_id));
  }
  try {
    await c.audited(auditChange("update", fn, diff({ function_name: fn.function_name }, { function_name: p.function_name })), (db) =>
      repo.renameFunction(db, fn.function_id, p.function_name),
    );
  } catch (err) {
    if (isUniqueViolation(err, "functions_name_key")) throw new DomainError(400, MSG.functionExists(p.function_name));
    throw err;
  }
  await c.changed("function", "updated", eventOf({ ...fn, function_name: p.function_name }));
  return MSG.functionUpdated;
}

/** Op 26. */
export async function getFunction(c: ConfigPort, function_id: string) {
  const fn = await findFunction(c, function_id);
  if (!fn) throw new DomainError(404, MSG.functionNotFound);
  return {
    function_id: fn.function_id,
    function_name: fn.function_name,
    plant_name: fn.plant_name,
    site_name: fn.site_name,
  };
}

/** Op 27: monitor_count counts the monitors on the function's assets too. */
export async function listFunctions(c: ConfigPort, p: { plant_id: string } & Page) {
  const plant = await findPlant(c, p.plant_id);
  if (!plant) throw new DomainError(400, MSG.invalidPlantId(p.plant_id));
  const rows = await c.cached(`functions:${plant.plant_id}`, async () => {
    const found = await repo.functionsOfPlant(c.db, plant.plant_id);
    return found.map((f) => ({
      function_id: f.function_id,
      function_name: f.function_name,
      plant_name: plant.plant_name,
      site_name: plant.site_name,
      monitor_count: f.monitor_count,
    }));
  });
  return paged(c, rows, p);
}

/** Internal `config.functions.resolve`. */
export async function functionSummary(c: ConfigPort, function_id: string): Promise<ResolvedFunction | null> {
  const fn = await resolveFunction(c, function_id);
  return fn
    ? {
        function_id: fn.function_id,
        function_name: fn.function_name,
        plant_id: fn.plant_id,
        plant_name: fn.plant_name,
        site_id: fn.site_id,
        site_name: fn.site_name,
        timezone: fn.timezone,
      }
    : null;
}
