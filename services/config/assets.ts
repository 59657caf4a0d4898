/** Assets (ops 11-16): machines of a function; plant and site come from the function. */
import { mayWrite } from "../../lib/access";
import { DomainError, isUniqueViolation } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { isForeignKeyViolation, paged, requireWrite, type ConfigContext, type Page } from "./context";
import type { AssetEvent } from "./events";
import { findFunction, type FunctionRow } from "./functions";
import { MSG } from "./messages";
import { ASSET_FILTER, ASSET_LIST_SQL, assetListItem, type AssetListRow } from "./queries";
import { compact, parseYesNo, scopeKey, yesNo } from "./rules";

/** The attributes the spec names (Asset.attributes); all optional, each of its type. */
export interface AssetAttributes {
  machine_type?: string;
  rotating_speed?: number;
  manufacturer?: string;
  machine_model?: string;
  serial_no?: string;
  phases?: string;
  kw?: number;
  frequency?: number;
  volts?: number;
  amp?: number;
}

export interface AssetWrite {
  asset_name: string;
  function_id: string;
  plant_id?: string | null;
  site_id?: string | null;
  asset_category: string;
  is_critical?: string | null;
  attributes?: AssetAttributes | null;
}

export interface AssetRow {
  asset_id: string;
  asset_name: string;
  asset_category: string;
  is_critical: boolean;
  attributes: AssetAttributes;
  function_id: string;
  function_name: string;
  plant_id: string;
  plant_name: string;
  site_id: string;
  site_name: string;
}

export interface AssetFilter extends Page {
  function_id?: string;
  asset_category?: string;
  is_critical?: string;
}

const ASSET_SELECT = `SELECT a.asset_id, a.asset_name, a.asset_category, a.is_critical, a.attributes, a.function_id,
                             f.function_name, p.plant_id, p.plant_name, s.site_id, s.site_name
                        FROM assets a JOIN functions f ON f.function_id = a.function_id
                        JOIN plants p ON p.plant_id = f.plant_id JOIN sites s ON s.site_id = p.site_id`;

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

/** An asset with its function, plant and site, without regard to the caller (internal resolve). */
export async function resolveAssetRow(c: ConfigContext, asset_id: string): Promise<AssetRow | null> {
  if (!isId(asset_id)) return null;
  return c.cached(`asset:${asset_id}`, async () => {
    const rows: AssetRow[] = await c.db.query(`${ASSET_SELECT} WHERE a.asset_id = $1`, [asset_id]);
    return rows[0] ?? null;
  });
}

/** An asset, if the caller may see it. */
export async function findAsset(c: ConfigContext, asset_id: string): Promise<AssetRow | null> {
  const row = await resolveAssetRow(c, asset_id);
  const [site, plant] = c.scopeIds;
  if (!row || (site !== null && row.site_id !== site) || (plant !== null && row.plant_id !== plant)) return null;
  return row;
}

/** The parent function of a create or update; a plant or site in the body must be the function's. */
async function parentOf(c: ConfigContext, p: AssetWrite): Promise<FunctionRow> {
  const fn = await findFunction(c, p.function_id);
  if (!fn) throw new DomainError(400, MSG.invalidAssetData);
  if ((p.plant_id != null && p.plant_id !== fn.plant_id) || (p.site_id != null && p.site_id !== fn.site_id)) {
    throw new DomainError(400, MSG.invalidAssetData);
  }
  return fn;
}

// null reads as left out (README, Decisions), like undefined: the validator lets it through optional fields.
function criticality(value: string | null | undefined, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  const parsed = parseYesNo(value);
  if (parsed === undefined) throw new DomainError(400, MSG.invalidAssetData);
  return parsed;
}

/** Op 11. */
export async function createAsset(c: ConfigContext, p: AssetWrite): Promise<{ id: string }> {
  requireWrite(mayWrite(c.user, "asset"));
  const isCritical = criticality(p.is_critical, false);
  const fn = await parentOf(c, p);
  const id = newId();
  try {
    await c.db.query(
      `INSERT INTO assets (asset_id, asset_name, function_id, asset_category, is_critical, attributes, created_at)
       VALUES ($1,$2,$3,$4,$5,$6,$7)`,
      [id, p.asset_name, fn.function_id, p.asset_category, isCritical, JSON.stringify(compact(p.attributes ?? {})), Date.now()],
    );
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
export async function removeAsset(c: ConfigContext, asset_id: string): Promise<string> {
  requireWrite(mayWrite(c.user, "asset"));
  const asset = await findAsset(c, asset_id);
  if (!asset) throw new DomainError(400, MSG.invalidAssetId(asset_id));
  const [{ n }]: { n: number }[] = await c.db.query(`SELECT count(*)::int AS n FROM monitors WHERE asset_id = $1`, [asset.asset_id]);
  if (n > 0) throw new DomainError(400, MSG.assetHasMonitors);
  try {
    await c.db.query(`DELETE FROM assets WHERE asset_id = $1`, [asset.asset_id]);
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
export async function updateAsset(c: ConfigContext, p: AssetWrite & { asset_id: string; is_critical: string }): Promise<string> {
  requireWrite(mayWrite(c.user, "asset"));
  const asset = await findAsset(c, p.asset_id);
  if (!asset) throw new DomainError(400, MSG.invalidAssetId(p.asset_id));
  const isCritical = criticality(p.is_critical, asset.is_critical);
  const fn = await parentOf(c, p);
  if (fn.function_id !== asset.function_id) throw new DomainError(400, MSG.invalidAssetData);
  const attributes = p.attributes === undefined ? asset.attributes : compact(p.attributes ?? {});
  try {
    await c.db.query(
      `UPDATE assets SET asset_name = $2, asset_category = $3, is_critical = $4, attributes = $5 WHERE asset_id = $1`,
      [asset.asset_id, p.asset_name, p.asset_category, isCritical, JSON.stringify(attributes)],
    );
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
export async function getAsset(c: ConfigContext, asset_id: string) {
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
 * The filter of ops 15 and 16 as parameters of ASSET_FILTER (queries.ts). A function_id of the
 * wrong shape matches nothing; asset_category `All` means every category (the spec shows it as a value).
 */
function filterParams(c: ConfigContext, f: AssetFilter): unknown[] {
  let critical: boolean | undefined;
  if (f.is_critical !== undefined) {
    critical = parseYesNo(f.is_critical);
    if (critical === undefined) throw new DomainError(400, "Invalid input: is_critical");
  }
  const category = f.asset_category !== undefined && f.asset_category.toLowerCase() !== "all" ? f.asset_category : null;
  const fn = f.function_id === undefined ? null : isId(f.function_id) ? f.function_id : "00000000-0000-0000-0000-000000000000";
  return [...c.scopeIds, fn, category, critical ?? null];
}

const filterKey = (c: ConfigContext, f: AssetFilter): string =>
  `${scopeKey(c.scope)}:${f.function_id ?? ""}:${f.asset_category ?? ""}:${f.is_critical?.toLowerCase() ?? ""}`;

/** Op 15: one query whatever the number of assets (queries.ts). */
export async function listAssets(c: ConfigContext, f: AssetFilter) {
  const params = filterParams(c, f);
  const rows = await c.cachedList(`assets:${filterKey(c, f)}`, async () => {
    const found: AssetListRow[] = await c.db.query(ASSET_LIST_SQL, params);
    return found.map(assetListItem);
  });
  return paged(c, rows, f);
}

/** Op 16. */
export async function countAssets(c: ConfigContext, f: AssetFilter): Promise<number> {
  const params = filterParams(c, f);
  return c.cached(`assets.count:${filterKey(c, f)}`, async () => {
    const [{ n }]: { n: number }[] = await c.db.query(
      `SELECT count(*)::int AS n FROM assets a JOIN functions f ON f.function_id = a.function_id
         JOIN plants p ON p.plant_id = f.plant_id WHERE ${ASSET_FILTER}`,
      params,
    );
    return n;
  });
}

/** Internal `config.assets.resolve`. */
export async function assetSummary(c: ConfigContext, asset_id: string) {
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
