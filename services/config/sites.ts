/** Sites (ops 28-32): the top of the hierarchy. Only a SaaS admin creates or deletes one. */
import { requireWrite } from "../../lib/access";
import { diff, type AuditChange } from "../../lib/audit";
import { config } from "../../lib/config";
import { DomainError, isDatabaseUnavailable, isUniqueViolation } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { paged, type ConfigPort, type Page } from "./port";
import { DEFAULT_RETENTION_DAYS, type ResolvedSite, type SiteEvent } from "./contract";
import { MSG } from "./messages";
import * as repo from "./sites.repo";
import type { SiteRow } from "./sites.repo";
import { isCoordinate, isTimeZone } from "./rules";
import { isForeignKeyViolation } from "./sql";

export interface EdgeFirmwareInput {
  current_version?: string;
  previous_version?: string;
}

export interface SiteCreate {
  site_name: string;
  location: string;
  timezone: string;
  edge_firmware: EdgeFirmwareInput;
  latitude?: string | null;
  longitude?: string | null;
  retention_period?: number;
}

export interface SiteUpdate {
  site_id: string;
  location: string;
  retention_period: number;
  site_name?: string;
  timezone?: string;
  edge_firmware?: EdgeFirmwareInput;
  latitude?: string | null;
  longitude?: string | null;
}

/** The spec's site object; lists add edge_firmware.latest_version. */
export function siteView(row: SiteRow, withLatest = false) {
  return {
    site_id: row.site_id,
    site_name: row.site_name,
    location: row.location,
    latitude: row.latitude ?? "",
    longitude: row.longitude ?? "",
    timezone: row.timezone,
    retention_period: Number(row.retention_period),
    edge_firmware: {
      current_version: row.edge_current_version ?? "",
      previous_version: row.edge_previous_version ?? "",
      ...(withLatest ? { latest_version: config().latestEdgeFirmware } : {}),
    },
  };
}

const siteEvent = (row: SiteRow): SiteEvent => siteView(row);

const auditChange = (action: AuditChange["action"], site_id: string, changes: AuditChange["changes"]): AuditChange => ({
  action,
  entity_type: "site",
  entity_id: site_id,
  site_id,
  plant_id: null,
  changes,
});

// null reads as "no coordinate", like "": the validator lets null through optional fields.
function checkPlace(p: { latitude?: string | null; longitude?: string | null; timezone?: string }): void {
  if (p.latitude != null && !isCoordinate(p.latitude, 90)) throw new DomainError(400, MSG.invalidInput("latitude"));
  if (p.longitude != null && !isCoordinate(p.longitude, 180)) throw new DomainError(400, MSG.invalidInput("longitude"));
  if (p.timezone !== undefined && !isTimeZone(p.timezone)) throw new DomainError(400, MSG.invalidInput("timezone"));
}

/** A site by id, if the caller may see it. Cached by id; the scope is applied to the cached row. */
export async function findSite(c: ConfigPort, site_id: string): Promise<SiteRow | null> {
  if (!isId(site_id)) return null;
  const row = await c.cached(`site:${site_id}`, () => repo.siteById(c.db, site_id));
  const [scopeSite] = c.scopeIds;
  return row && (scopeSite === null || row.site_id === scopeSite) ? row : null;
}

/** Op 28. */
export async function createSite(c: ConfigPort, p: SiteCreate): Promise<{ id: string }> {
  requireWrite(c.user, "whole-site", MSG.unauthorizedOperation);
  if (!p.latitude && !p.longitude) throw new DomainError(400, MSG.siteLatLong);
  checkPlace(p);
  const id = newId();
  let row: SiteRow;
  try {
    row = await c.audited(
      (created: SiteRow) => auditChange("create", id, diff(null, siteView(created))),
      (db) =>
        repo.insertSite(
          db,
          {
            site_id: id,
            site_name: p.site_name,
            location: p.location,
            latitude: p.latitude || null,
            longitude: p.longitude || null,
            timezone: p.timezone,
            retention_period: p.retention_period ?? DEFAULT_RETENTION_DAYS,
            edge_current_version: p.edge_firmware.current_version ?? null,
            edge_previous_version: p.edge_firmware.previous_version ?? null,
          },
          Date.now(),
        ),
    );
  } catch (err) {
    if (isUniqueViolation(err, "sites_name_key")) throw new DomainError(400, MSG.siteExists(p.site_name));
    // The database away (a restart, a failover) is no fault of the site: 503, and a retry succeeds.
    if (isDatabaseUnavailable(err)) throw err;
    throw new DomainError(400, MSG.siteCreateError);
  }
  await c.changed("site", "created", siteEvent(row));
  return { id };
}

/** Op 29: refused while plants exist; the foreign key settles a plant created meanwhile. */
export async function removeSite(c: ConfigPort, site_id: string): Promise<string> {
  requireWrite(c.user, "whole-site", MSG.unauthorizedOperation);
  const site = await findSite(c, site_id);
  if (!site) throw new DomainError(400, MSG.invalidSiteId(site_id));
  if ((await repo.plantsOnSite(c.db, site_id)) > 0) throw new DomainError(400, MSG.siteHasPlants);
  try {
    const deleted = await c.audited(
      (found: boolean) => (found ? auditChange("delete", site.site_id, diff(siteView(site), null)) : null),
      (db) => repo.deleteSite(db, site.site_id),
    );
    if (!deleted) throw new DomainError(400, MSG.invalidSiteId(site_id));
  } catch (err) {
    if (isForeignKeyViolation(err)) {
      throw new DomainError(400, MSG.siteHasPlants);
    }
    throw err;
  }
  await c.changed("site", "deleted", siteEvent(site));
  return MSG.siteDeleted;
}

/**
 * Op 30. A new edge_firmware.current_version without a previous_version moves the old current
 * one down, which is what a firmware upgrade means.
 */
export async function updateSite(c: ConfigPort, p: SiteUpdate): Promise<string> {
  requireWrite(c.user, "site", MSG.unauthorizedOperation);
  const site = await findSite(c, p.site_id);
  if (!site) throw new DomainError(400, MSG.invalidSite);
  checkPlace(p);
  const latitude = p.latitude !== undefined ? p.latitude || null : site.latitude;
  const longitude = p.longitude !== undefined ? p.longitude || null : site.longitude;
  if (!latitude && !longitude) throw new DomainError(400, MSG.siteLatLong);
  let current = site.edge_current_version;
  let previous = site.edge_previous_version;
  if (p.edge_firmware) {
    const next = p.edge_firmware.current_version;
    if (p.edge_firmware.previous_version !== undefined) previous = p.edge_firmware.previous_version;
    else if (next !== undefined && next !== current) previous = current;
    if (next !== undefined) current = next;
  }
  const name = p.site_name ?? site.site_name;
  let row: SiteRow | null;
  try {
    row = await c.audited(
      (updated: SiteRow | null) => (updated ? auditChange("update", site.site_id, diff(siteView(site), siteView(updated))) : null),
      (db) =>
        repo.updateSite(db, {
          site_id: site.site_id,
          site_name: name,
          location: p.location,
          latitude,
          longitude,
          timezone: p.timezone ?? site.timezone,
          retention_period: p.retention_period,
          edge_current_version: current,
          edge_previous_version: previous,
        }),
    );
  } catch (err) {
    if (isUniqueViolation(err, "sites_name_key")) throw new DomainError(400, MSG.siteExists(name));
    throw err;
  }
  if (!row) throw new DomainError(400, MSG.invalidSite);
  await c.changed("site", "updated", siteEvent(row));
  return MSG.siteUpdated;
}

/** Op 31. */
export async function getSite(c: ConfigPort, site_id: string) {
  const site = await findSite(c, site_id);
  if (!site) throw new DomainError(400, MSG.invalidSiteId(site_id));
  return siteView(site);
}

/** Op 32: every site for the SaaS roles, the own site for everyone else. */
export async function listSites(c: ConfigPort, page: Page) {
  const [site] = c.scopeIds;
  const rows = await c.cachedList(`sites:${site ?? "*"}`, async () => (await repo.listSites(c.db, site)).map((r) => siteView(r, true)));
  return paged(c, rows, page);
}

/** Internal `config.sites.resolve`: what other services need of a site, or null. */
export async function resolveSite(c: ConfigPort, site_id: string): Promise<ResolvedSite | null> {
  if (!isId(site_id)) return null;
  return c.cached(`site.resolve:${site_id}`, async () => {
    const row = await repo.siteSummary(c.db, site_id);
    return row ? { ...row, retention_period: Number(row.retention_period) } : null;
  });
}
