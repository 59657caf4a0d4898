/**
 * The SQL of the config service's largest reads, the asset list (op 15) and the monitor count
 * (op 22), with the mapping of a listed asset. Kept apart from the entity modules and free of
 * the framework so that the benchmark's bare baseline (bench/baseline.ts) runs the very same
 * statements.
 */
import { scopeSql, yesNo } from "./rules";

/**
 * The WHERE clause of ops 15 and 16 on `assets a` joined to `plants p`. Parameters: $1 site and
 * $2 plant of the caller's scope, $3 function, $4 category, $5 criticality (each null: any).
 */
export const ASSET_FILTER = `${scopeSql(1)} AND ($3::uuid IS NULL OR a.function_id = $3::uuid)
             AND ($4::text IS NULL OR lower(a.asset_category) = lower($4::text))
             AND ($5::boolean IS NULL OR a.is_critical = $5::boolean)`;

/**
 * Op 15: one statement whatever the number of assets. monitor_count comes from one pass over
 * the monitors (of the function, when the list is of one), grouped by asset and joined: a
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

export interface AssetListRow {
  asset_id: string;
  asset_name: string;
  is_critical: boolean;
  asset_category: string;
  function_name: string;
  plant_name: string;
  site_name: string;
  monitor_count: number;
}

/** An item of op 15's answer. */
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

/**
 * The WHERE clause of ops 21 and 22 on `monitors m` joined to `plants p`. Parameters: $1 site
 * and $2 plant of the caller's scope, $3 asset, $4 function, $5 pipeline, $6 registered or not,
 * $7 data type and $8 the monitor type that stands for it while unregistered (each null: any).
 * data_type matches the registered pipeline's data type or, for a monitor no pipeline has
 * registered yet, its monitor_type.
 */
export const MONITOR_FILTER = `${scopeSql(1)}
      AND ($3::uuid IS NULL OR m.asset_id = $3::uuid)
      AND ($4::uuid IS NULL OR m.function_id = $4::uuid)
      AND ($5::text IS NULL OR m.pipeline_id = $5::text)
      AND ($6::boolean IS NULL OR (m.pipeline_id IS NOT NULL) = $6::boolean)
      AND ($7::text IS NULL OR CASE WHEN m.data_type IS NOT NULL THEN lower(m.data_type) = $7::text
                                    ELSE m.monitor_type = $8::text END)`;

/** Op 22. */
export const MONITOR_COUNT_SQL = `SELECT count(*)::int AS n FROM monitors m JOIN functions f ON f.function_id = m.function_id
         JOIN plants p ON p.plant_id = f.plant_id WHERE ${MONITOR_FILTER}`;
