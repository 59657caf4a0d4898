/**
 * A user's site and plant: what place each user type has, where a user written by an operation
 * belongs, and the names a read shows, checked and named through the config service's resolve
 * actions (cached), which the port carries.
 */
import { inScope, scopeOf, type Principal, type UserType } from "../../lib/access";
import { badRequest } from "../../lib/errors";
import { isId } from "../../lib/ids";
import type { ResolvedPlant, ResolvedSite } from "../config/contract";
import { MSG } from "./messages";
import type { AuthPort } from "./port";
import type { Place, UserRow } from "./users.repo";

export interface PlaceNames {
  site_name: string | null;
  plant_name: string | null;
}

export type PlaceKind = "all" | "site" | "plant";

export function placeKindOf(type: UserType): PlaceKind {
  if (type === "saas-admin" || type === "support-analyst") return "all";
  return type === "site-admin" ? "site" : "plant";
}

/** The place a row stands for, whatever was stored in the columns its type does not use. */
export function placeOf(row: Pick<UserRow, "user_type" | "site_id" | "plant_id">): Place {
  const kind = placeKindOf(row.user_type);
  return { site_id: kind === "all" ? null : row.site_id, plant_id: kind === "plant" ? row.plant_id : null };
}

/** An empty string for a site or plant is as good as none: forms send "" for a field left blank. */
export const given = (value: string | undefined): string | undefined => (value === undefined || value === "" ? undefined : value);

/**
 * Where a user of `type` belongs, from the request (or, on update, the user's current place
 * when the request leaves it out). A site or plant outside the caller's scope answers as
 * one that does not exist.
 */
export async function placeFor(port: AuthPort, caller: Principal, type: UserType, request: Partial<Place>, current?: UserRow): Promise<Place> {
  const kind = placeKindOf(type);
  if (kind === "all") return { site_id: null, plant_id: null };
  const scope = scopeOf(caller);
  const kept = current && placeKindOf(current.user_type) === kind ? placeOf(current) : undefined;
  if (kind === "site") {
    const siteId = request.site_id ?? kept?.site_id;
    if (!siteId) throw badRequest(MSG.insufficientInputs);
    const site = isId(siteId) ? await port.resolveSite(siteId) : null;
    if (!site || !inScope(scope, { site_id: site.site_id })) throw badRequest(MSG.invalidSiteId(siteId));
    return { site_id: site.site_id, plant_id: null };
  }
  const plantId = request.plant_id ?? kept?.plant_id;
  if (!plantId) throw badRequest(MSG.insufficientInputs);
  const plant = isId(plantId) ? await port.resolvePlant(plantId) : null;
  if (!plant || !inScope(scope, { site_id: plant.site_id, plant_id: plant.plant_id })) {
    throw badRequest(MSG.invalidPlantId(plantId));
  }
  // A user's site follows from its plant; a site that says otherwise is a mistake of the caller.
  if (request.site_id && request.site_id.toLowerCase() !== plant.site_id) throw badRequest(MSG.invalidSiteId(request.site_id));
  return { site_id: plant.site_id, plant_id: plant.plant_id };
}

/** Site and plant names of users, looked up once per site and plant. */
export async function namesFor(port: AuthPort, rows: UserRow[]): Promise<(row: UserRow) => PlaceNames> {
  const siteIds = new Set<string>();
  const plantIds = new Set<string>();
  for (const row of rows) {
    const kind = placeKindOf(row.user_type);
    if (kind === "site" && row.site_id) siteIds.add(row.site_id);
    if (kind === "plant" && row.plant_id) plantIds.add(row.plant_id);
  }
  const [sites, plants] = await Promise.all([
    Promise.all([...siteIds].map((id) => port.resolveSite(id))),
    Promise.all([...plantIds].map((id) => port.resolvePlant(id))),
  ]);
  const siteNames = new Map(sites.filter((s): s is ResolvedSite => !!s).map((s) => [s.site_id, s.site_name]));
  const plantRefs = new Map(plants.filter((p): p is ResolvedPlant => !!p).map((p) => [p.plant_id, p]));
  return (row: UserRow): PlaceNames => {
    const kind = placeKindOf(row.user_type);
    if (kind === "site") return { site_name: siteNames.get(row.site_id ?? "") ?? null, plant_name: null };
    if (kind === "plant") {
      const plant = plantRefs.get(row.plant_id ?? "");
      return { site_name: plant?.site_name ?? null, plant_name: plant?.plant_name ?? null };
    }
    return { site_name: null, plant_name: null };
  };
}
