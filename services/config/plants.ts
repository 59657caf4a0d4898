/** Plants (ops 33-37): a site's plants; users of a plant are bound to it, so a plant never changes site. */
import { requireWrite } from "../../lib/access";
import { diff, type AuditChange } from "../../lib/audit";
import { DomainError, isUniqueViolation } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { paged, type ConfigPort, type Page } from "./port";
import type { ResolvedPlant } from "./contract";
import { MSG } from "./messages";
import { plantsActivity } from "./pipeline-places";
import * as repo from "./plants.repo";
import type { PlantRow } from "./plants.repo";
import { plantDeleteRefusal } from "./rules";
import { findSite } from "./sites";
import { isForeignKeyViolation } from "./sql";

const auditChange = (action: AuditChange["action"], plant: { plant_id: string; site_id: string }, changes: AuditChange["changes"]): AuditChange => ({
  action,
  entity_type: "plant",
  entity_id: plant.plant_id,
  site_id: plant.site_id,
  plant_id: plant.plant_id,
  changes,
});

/** A plant by id with its site's name, if the caller may see it. */
export async function findPlant(c: ConfigPort, plant_id: string): Promise<PlantRow | null> {
  if (!isId(plant_id)) return null;
  const row = await c.cached(`plant:${plant_id}`, () => repo.plantById(c.db, plant_id));
  const [site, plant] = c.scopeIds;
  if (!row || (site !== null && row.site_id !== site) || (plant !== null && row.plant_id !== plant)) return null;
  return row;
}

/** Op 33. */
export async function createPlant(c: ConfigPort, p: { plant_name: string; site_id: string }): Promise<{ id: string }> {
  requireWrite(c.user, "plant", MSG.unauthorizedOperation);
  const site = await findSite(c, p.site_id);
  if (!site) throw new DomainError(400, MSG.invalidSiteId(p.site_id));
  const id = newId();
  try {
    const values = { plant_id: id, plant_name: p.plant_name, site_id: site.site_id };
    await c.audited(auditChange("create", values, diff(null, { plant_name: values.plant_name, site_id: values.site_id })), (db) =>
      repo.insertPlant(db, values, Date.now()),
    );
  } catch (err) {
    if (isUniqueViolation(err, "plants_name_key")) throw new DomainError(400, MSG.plantExists(p.plant_name));
    // The site was deleted between the read and the insert.
    if (isForeignKeyViolation(err)) throw new DomainError(400, MSG.invalidSiteId(p.site_id));
    throw err;
  }
  await c.changed("plant", "created", { plant_id: id, plant_name: p.plant_name, site_id: site.site_id });
  return { id };
}

/** Op 34: refused while events, pipelines (both known from the pipelines service's events), assets or functions exist. */
export async function removePlant(c: ConfigPort, plant_id: string): Promise<string> {
  requireWrite(c.user, "plant", MSG.unauthorizedOperation);
  const plant = await findPlant(c, plant_id);
  if (!plant) throw new DomainError(400, MSG.invalidPlantId(plant_id));
  const [activity] = await plantsActivity(c, [plant.plant_id]);
  const counts = await repo.plantContents(c.db, plant.plant_id);
  const refusal = plantDeleteRefusal({ ...activity!, ...counts });
  if (refusal) throw new DomainError(400, refusal);
  try {
    await c.audited(auditChange("delete", plant, diff({ plant_name: plant.plant_name, site_id: plant.site_id }, null)), (db) =>
      repo.deletePlant(db, plant.plant_id),
    );
  } catch (err) {
    if (isForeignKeyViolation(err)) throw new DomainError(400, MSG.plantHasFunctions);
    throw err;
  }
  await c.changed("plant", "deleted", { plant_id: plant.plant_id, plant_name: plant.plant_name, site_id: plant.site_id });
  return MSG.plantDeleted;
}

/** Op 35: renames; the site_id of the body must be the plant's own (plants do not move). */
export async function updatePlant(
  c: ConfigPort,
  p: { plant_id: string; plant_name: string; site_id: string },
): Promise<string> {
  requireWrite(c.user, "plant", MSG.unauthorizedOperation);
  const plant = await findPlant(c, p.plant_id);
  if (!plant) throw new DomainError(400, MSG.invalidPlantId(p.plant_id));
  if (p.site_id !== plant.site_id) throw new DomainError(400, MSG.invalidSiteId(p.site_id));
  try {
    await c.audited(auditChange("update", plant, diff({ plant_name: plant.plant_name }, { plant_name: p.plant_name })), (db) =>
      repo.renamePlant(db, plant.plant_id, p.plant_name),
    );
  } catch (err) {
    if (isUniqueViolation(err, "plants_name_key")) throw new DomainError(400, MSG.plantExists(p.plant_name));
    throw err;
  }
  await c.changed("plant", "updated", { plant_id: plant.plant_id, plant_name: p.plant_name, site_id: plant.site_id });
  return MSG.plantUpdated;
}

/** Op 36. */
export async function getPlant(c: ConfigPort, plant_id: string): Promise<PlantRow> {
  const plant = await findPlant(c, plant_id);
  if (!plant) throw new DomainError(400, MSG.invalidPlantId(plant_id));
  return plant;
}

/** Op 37: function_count from this service's plants, pipeline_count from its copy of the pipelines' places (not cached). */
export async function listPlants(c: ConfigPort, p: { site_id: string } & Page) {
  const site = await findSite(c, p.site_id);
  if (!site) throw new DomainError(400, MSG.invalidSiteId(p.site_id));
  const [, scopePlant] = c.scopeIds;
  const rows = await c.cached(`plants:${site.site_id}:${scopePlant ?? "*"}`, () => repo.plantsOfSite(c.db, site.site_id, c.scopeIds));
  const page = paged(c, rows, p);
  const activity = await plantsActivity(c, page.map((r) => r.plant_id));
  return page.map((r, i) => ({
    plant_id: r.plant_id,
    plant_name: r.plant_name,
    site_id: r.site_id,
    site_name: r.site_name,
    function_count: r.function_count,
    pipeline_count: activity[i].pipelines,
  }));
}

/** Internal `config.plants.resolve`: a plant with its site, or null. */
export async function resolvePlant(c: ConfigPort, plant_id: string): Promise<ResolvedPlant | null> {
  if (!isId(plant_id)) return null;
  return c.cached(`plant.resolve:${plant_id}`, () => repo.plantSummary(c.db, plant_id));
}
