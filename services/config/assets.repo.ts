/** The assets' SQL (table `assets`, joined to its function, plant and site), the list's statement included. */
import type { ResolvedAsset } from "./contract";
import { scopeSql, yesNo } from "./rules";
import { count, first, rows, type Queryable, type ScopeIds } from "./sql";

/** An asset with its parents' names as stored: `config.assets.resolve`'s answer before is_critical reads Yes/No. */
export type AssetRow = Omit<ResolvedAsset, "is_critical"> & { is_critical: boolean; plant_name: string; site_name: string };

export type AssetValues = Pick<AssetRow, "asset_id" | "asset_name" | "asset_category" | "is_critical" | "attributes">;

export const assetById = (db: Queryable, asset_id: string): Promise<AssetRow | null> =>
  first(
    db,
    `SELECT a.asset_id, a.asset_name, a.asset_category, a.is_critical, a.attributes, a.function_id,
            f.function_name, p.plant_id, p.plant_name, s.site_id, s.site_name
       FROM assets a JOIN functions f ON f.function_id = a.function_id
       JOIN plants p ON p.plant_id = f.plant_id JOIN sites s ON s.site_id = p.site_id
      WHERE a.asset_id = $1`,
    [asset_id],
  );

/** A taken name fails on `assets_name_key`, a function deleted meanwhile on the foreign key. */
export async function insertAsset(db: Queryable, a: AssetValues & { function_id: string }, created_at: number): Promise<void> {
  await db.query(
    `INSERT INTO assets (asset_id, asset_name, function_id, asset_category, is_critical, attributes, created_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7)`,
    [a.asset_id, a.asset_name, a.function_id, a.asset_category, a.is_critical, JSON.stringify(a.attributes), created_at],
  );
}

export async function updateAsset(db: Queryable, a: AssetValues): Promise<void> {
  await db.query(`UPDATE assets SET asset_name = $2, asset_category = $3, is_critical = $4, attributes = $5 WHERE asset_id = $1`, [
    a.asset_id,
    a.asset_name,
    a.asset_category,
    a.is_critical,
    JSON.stringify(a.attributes),
  ]);
}

export const monitorsOnAsset = (db: Queryable, asset_id: string): Promise<number> =>
  count(db, `SELECT count(*)::int AS n FROM monitors WHERE asset_id = $1`, [asset_id]);

/** A monitor attached meanwhile fails it on its foreign key. */
export async function deleteAsset(db: Queryable, asset_id: string): Promise<void> {
  await db.query(`DELETE FROM assets WHERE asset_id = $1`, [asset_id]);
}

/** The filter of the asset list and count; null: any. */
export interface AssetFilterValues {
  scope: ScopeIds;
  function_id: string | null;
  /** compared case-insensitively */
  asset_category: string | null;
  is_critical: boolean | null;
}

const assetFilterParams = (f: AssetFilterValues): unknown[] => [...f.scope, f.function_id, f.asset_category, f.is_critical];

/**
 * The WHERE clause of the asset list and count on `assets a` joined to `plants p`. Parameters:
 * $1 site and $2 plant of the caller's scope, $3 function, $4 category, $5 criticality (each null: any).
 */
export const ASSET_FILTER = `${scopeSql(1)} AND ($3::uuid IS NULL OR a.function_id = $3::uuid)
             AND ($4::text IS NULL OR lower(a.asset_category) = lower($4::text))
             AND ($5::boolean IS NULL OR a.is_critical = $5::boolean)`;

/**
 * The asset list: one statement whatever the number of assets. monitor_count comes from one pass
 * over the monitors (of the function, when the list is of one), grouped by asset and joined: a
 * correlated count per asset took 2.5 times as long for 2,000 assets with 10 monitors each.
 */
export const ASSET_LIST_SQL = `SELECT a.asset_id, a.asset_name, a.is_critical, a.asset_category, f.function_name, p.plant_name, s.site_name,
              coalesce(mc.n, 0)::int AS monitor_count
         FROM assets a JOIN functions f ON f.function_id = a.function_id
         JOIN plants p ON p.plant_id = f.plant_id JOIN sites s ON s.site_id = p.site_id
         LEFT JOIN (SELECT m.asset_id, count(*) AS n FROM monitors m
                     WHERE m.asset_id IS NOT NULL AND ($3::uuid IS NULL OR m.function_id = $3::uuid)
                     GROUP BY m.asset_id) mc ON mc.asset_id = a.asset_id
        WHERE ${ASSET_FILTER}
        ORDER BY a.created_at, a.asset_name`;

export type AssetListRow = Pick<AssetRow, "asset_id" | "asset_name" | "is_critical" | "asset_category" | "function_name" | "plant_name" | "site_name"> & {
  monitor_count: number;
};

/** An item of the asset list as the spec shows it. */
export const assetListItem = (a: AssetListRow) => ({
  asset_id: a.asset_id,
  asset_name: a.asset_name,
  is_critical: yesNo(a.is_critical),
  asset_category: a.asset_category,
  function_name: a.function_name,
  plant_name: a.plant_name,
  site_name: a.site_name,
  monitor_count: a.monitor_count,
});

export const listAssets = async (db: Queryable, f: AssetFilterValues) =>
  (await rows<AssetListRow>(db, ASSET_LIST_SQL, assetFilterParams(f))).map(assetListItem);

export const countAssets = (db: Queryable, f: AssetFilterValues): Promise<number> =>
  count(
    db,
    `SELECT count(*)::int AS n FROM assets a JOIN functions f ON f.function_id = a.function_id
       JOIN plants p ON p.plant_id = f.plant_id WHERE ${ASSET_FILTER}`,
    assetFilterParams(f),
  );
