/** Assets (ops 11-16): machines of a function; plant and site come from the function. */
import { requireWrite } from "../../lib/access";
import { diff, type AuditChange } from "../../lib/audit";
import { DomainError, isUniqueViolation } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { paged, type ConfigPort } from "./port";
import type { AssetAttributes, AssetEvent, AssetFilter, AssetListItem, ResolvedAsset } from "./contract";
import { findFunction } from "./functions";
import { MSG } from "./messages";
import * as repo from "./assets.repo";
import type { AssetFilterValues, AssetRow } from "./assets.repo";
import type { FunctionRow } from "./functions.repo";
import { compact, parseYesNo, scopeKey, yesNo } from "./rules";
import { isForeignKeyViolation } from "./sql";

export interface AssetWrite {
  asset_name: string;
  function_id: string;
  plant_id?: string | null;
  site_id?: string | null;
  asset_category: string;
  is_critical?: string | null;
  attributes?: AssetAttributes | null;
}

/** A uuid no row has: a filter naming a malformed id matches nothing. */
const NOTHING = "00000000-0000-0000-0000-000000000000";

const eventOf = (a: AssetRow): AssetEvent => ({
  asset_id: a.asset_id,
  asset_name: a.asset_name,
  asset_category: a.asset_category,
  is_critical: yesNo(a.is_critical),
  attributes: { ...a.attributes },
  function_id: a.function_id,
  plant_id: a.plant_id,
  site_id: a.site_id,
});

/** What the audit trail records of an asset (its writable fields). */
const audited = (a: Pick<AssetRow, "asset_name" | "asset_category" | "is_critical" | "attributes" | "function_id">) => ({
  asset_name: a.asset_name,
  asset_category: a.asset_category,
  is_critical: yesNo(a.is_critical),
  attributes: a.attributes,
  function_id: a.function_id,
});

const auditChange = (action: AuditChange["action"], asset_id: string, fn: Pick<FunctionRow, "site_id" | "plant_id">, changes: AuditChange["changes"]): AuditChange => ({
  action,
  entity_type: "asset",
  entity_id: asset_id,
  site_id: fn.site_id,
  plant_id: fn.plant_id,
  changes,
});

/** An asset with its function, plant and site, without regard to the caller (internal resolve). */
export async function resolveAssetRow(c: ConfigPort, asset_id: string): Promise<AssetRow | null> {
  if (!isId(asset_id)) return null;
  return c.cached(`asset:${asset_id}`, () => repo.assetById(c.db, asset_id));
}

/** An asset, if the caller may see it. */
export async function findAsset(c: ConfigPort, asset_id: string): Promise<AssetRow | null> {
  const row = await resolveAssetRow(c, asset_id);
  const [site, plant] = c.scopeIds;
  if (!row || (site !== null && row.site_id !== site) || (plant !== null && row.plant_id !== plant)) return null;
  return row;
}

/** The parent function of a create or update; a plant or site in the body must be the function's. */
async function parentOf(c: ConfigPort, p: AssetWrite): Promise<FunctionRow> {
  const fn = await findFunction(c, p.function_id);
  if (!fn) throw new DomainError(400, MSG.invalidAssetData);
  if ((p.plant_id != null && p.plant_id !== fn.plant_id) || (p.site_id != null && p.site_id !== fn.site_id)) {
    throw new DomainError(400, MSG.invalidAssetData);
  }
  return fn;
}

// null reads as left out (docs/architecture.md, Decisions), like undefined: the validator lets it through optional fields.
function criticality(value: string | null | undefined, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  const parsed = parseYesNo(value);
  if (parsed === undefined) throw new DomainError(400, MSG.invalidAssetData);
  return parsed;
}

/** Op 11. */
export async function createAsset(c: ConfigPort, p: AssetWrite): Promise<{ id: string }> {
  requireWrite(c.user, "asset", MSG.unauthorizedOperation);
  const isCritical = criticality(p.is_critical, false);
  const fn = await parentOf(c, p);
  const id = newId();
  const values = {
    asset_id: id,
    asset_name: p.asset_name,
    function_id: fn.function_id,
    asset_category: p.asset_category,
    is_critical: isCritical,
    attributes: compact(p.attributes ?? {}),
  };
  try {
    await c.audited(auditChange("create", id, fn, diff(null, audited(values))), (db) => repo.insertAsset(db, values, Date.now()));
  } catch (err) {
    if (isUniqueViolation(err, "assets_name_key")) throw new DomainError(400, MSG.assetExists(p.asset_name));
    if (isForeignKeyViolation(err)) throw new DomainError(400, MSG.invalidAssetData);
    throw err;
  }
  const created = await resolveAssetRow(c, id);
  if (created) await c.changed("asset", "created", eventOf(created));
  return { id };
}

/** Op 12: refused while monitors are attached; the foreign key settles a monitor created meanwhile. */
export async function removeAsset(c: ConfigPort, asset_id: string): Promise<string> {
  requireWrite(c.user, "asset", MSG.unauthorizedOperation);
  const asset = await findAsset(c, asset_id);
  if (!asset) throw new DomainError(400, MSG.invalidAssetId(asset_id));
  if ((await repo.monitorsOnAsset(c.db, asset.asset_id)) > 0) throw new DomainError(400, MSG.assetHasMonitors);
  try {
    await c.audited(auditChange("delete", asset.asset_id, asset, diff(audited(asset), null)), (db) => repo.deleteAsset(db, asset.asset_id));
  } catch (err) {
    if (isForeignKeyViolation(err)) throw new DomainError(400, MSG.assetHasMonitors);
    throw err;
  }
  await c.changed("asset", "deleted", eventOf(asset));
  return MSG.assetDeleted;
}

/**
 * Op 13: the body is the create body with is_critical required. The function_id must be the
 * asset's own (its monitors are bound to that function); absent attributes are kept.
 */
export async function updateAsset(c: ConfigPort, p: AssetWrite & { asset_id: string; is_critical: string }): Promise<string> {
  requireWrite(c.user, "asset", MSG.unauthorizedOperation);
  const asset = await findAsset(c, p.asset_id);
  if (!asset) throw new DomainError(400, MSG.invalidAssetId(p.asset_id));
  const isCritical = criticality(p.is_critical, asset.is_critical);
  const fn = await parentOf(c, p);
  if (fn.function_id !== asset.function_id) throw new DomainError(400, MSG.invalidAssetData);
  const attributes = p.attributes === undefined ? asset.attributes : compact(p.attributes ?? {});
  const values = { asset_id: asset.asset_id, asset_name: p.asset_name, asset_category: p.asset_category, is_critical: isCritical, attributes };
  const changes = diff(audited(asset), audited({ ...values, function_id: asset.function_id }));
  try {
    await c.audited(auditChange("update", asset.asset_id, asset, changes), (db) => repo.updateAsset(db, values));
  } catch (err) {
    if (isUniqueViolation(err, "assets_name_key")) throw new DomainError(400, MSG.assetExists(p.asset_name));
    throw err;
  }
  await c.changed(
    "asset",
    "updated",
    eventOf({ ...asset, asset_name: p.asset_name, asset_category: p.asset_category, is_critical: isCritical, attributes }),
  );
  return MSG.assetUpdated;
}

/** Op 14. */
export async function getAsset(c: ConfigPort, asset_id: string) {
  const a = await findAsset(c, asset_id);
  if (!a) throw new DomainError(400, MSG.invalidAssetId(asset_id));
  return {
    asset_id: a.asset_id,
    asset_name: a.asset_name,
    function_name: a.function_name,
    plant_name: a.plant_name,
    site_name: a.site_name,
    attributes: a.attributes,
    asset_category: a.asset_category,
    is_critical: yesNo(a.is_critical),
  };
}

/**
 * The filter of ops 15 and 16. A function_id of the wrong shape matches nothing; asset_category
 * `All` means every category (the spec shows it as a value).
 */
function filterOf(c: ConfigPort, f: AssetFilter): AssetFilterValues {
  let critical: boolean | undefined;
  if (f.is_critical !== undefined) {
    critical = parseYesNo(f.is_critical);
    if (critical === undefined) throw new DomainError(400, MSG.invalidInput("is_critical"));
  }
  return {
    scope: c.scopeIds,
    function_id: f.function_id === undefined ? null : isId(f.function_id) ? f.function_id : NOTHING,
    asset_category: f.asset_category !== undefined && f.asset_category.toLowerCase() !== "all" ? f.asset_category : null,
    is_critical: critical ?? null,
  };
}

const filterKey = (c: ConfigPort, f: AssetFilter): string =>
  `${scopeKey(c.scope)}:${f.function_id ?? ""}:${f.asset_category ?? ""}:${f.is_critical?.toLowerCase() ?? ""}`;

/** Op 15: one query whatever the number of assets (repo.ASSET_LIST_SQL). */
export async function listAssets(c: ConfigPort, f: AssetFilter): Promise<AssetListItem[]> {
  const filter = filterOf(c, f);
  const rows = await c.cachedList(`assets:${filterKey(c, f)}`, () => repo.listAssets(c.db, filter));
  return paged(c, rows, f);
}

/** Op 16. */
export async function countAssets(c: ConfigPort, f: AssetFilter): Promise<number> {
  const filter = filterOf(c, f);
  return c.cached(`assets.count:${filterKey(c, f)}`, () => repo.countAssets(c.db, filter));
}

/** Internal `config.assets.resolve`. */
export async function assetSummary(c: ConfigPort, asset_id: string): Promise<ResolvedAsset | null> {
  const a = await resolveAssetRow(c, asset_id);
  return a
    ? {
        asset_id: a.asset_id,
        asset_name: a.asset_name,
        asset_category: a.asset_category,
        is_critical: yesNo(a.is_critical),
        attributes: a.attributes,
        function_id: a.function_id,
        function_name: a.function_name,
        plant_id: a.plant_id,
        site_id: a.site_id,
      }
    : null;
}
