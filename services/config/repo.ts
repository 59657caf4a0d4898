/**
 * The config schema's SQL, all of it: raw parametrised statements through the TypeORM
 * DataSource's `query()` (no entities), each value a bound parameter. The rows come back as
 * PostgreSQL gives them (bigint as text); the domain modules shape them into the spec's objects.
 *
 * Free of the framework at run time (type imports only), so that the benchmark's bare baseline
 * (bench/baseline.ts, through queries.ts) runs the very statements the service runs.
 */
import type { DataSource, EntityManager } from "typeorm";
import type { ResolvedFunction } from "./contract";
import type { AssetAttributes, MonitorTag } from "./contract";
import { scopeSql, yesNo } from "./rules";

type Db = DataSource | EntityManager;

/** The caller's scope as [site, plant] SQL parameters, null meaning "any" (rules.scopeParams). */
export type ScopeIds = [string | null, string | null];

const rows = async <T>(db: Db, sql: string, params: unknown[] = []): Promise<T[]> => (await db.query(sql, params)) as T[];
const first = async <T>(db: Db, sql: string, params: unknown[]): Promise<T | null> => (await rows<T>(db, sql, params))[0] ?? null;
const count = async (db: Db, sql: string, params: unknown[]): Promise<number> => (await rows<{ n: number }>(db, sql, params))[0]!.n;
/** Runs `work` in the caller's transaction when `db` is one (an audited write's), else in a transaction of its own. */
const inTransaction = <T>(db: Db, work: (tx: EntityManager) => Promise<T>): Promise<T> =>
  "queryRunner" in db && db.queryRunner?.isTransactionActive ? work(db) : db.transaction(work);
/** TypeORM answers an UPDATE or DELETE with [rows, rowCount]: the rows its RETURNING clause named. */
const returned = async <T>(db: Db, sql: string, params: unknown[]): Promise<T[]> => ((await db.query(sql, params)) as [T[], number])[0];

// ---- sites ------------------------------------------------------------------------------------

export interface SiteRow {
  site_id: string;
  site_name: string;
  location: string;
  latitude: string | null;
  longitude: string | null;
  timezone: string;
  /** days, as text (bigint) */
  retention_period: string;
  edge_current_version: string | null;
  edge_previous_version: string | null;
}

export type SiteValues = Omit<SiteRow, "retention_period"> & { retention_period: number };

export const siteById = (db: Db, site_id: string): Promise<SiteRow | null> =>
  first(db, `SELECT * FROM sites WHERE site_id = $1`, [site_id]);

/** The stored row; a taken name fails on `sites_name_key`. */
export async function insertSite(db: Db, s: SiteValues, created_at: number): Promise<SiteRow> {
  const [row] = await rows<SiteRow>(
    db,
    `INSERT INTO sites (site_id, site_name, location, latitude, longitude, timezone, retention_period,
                        edge_current_version, edge_previous_version, created_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) RETURNING *`,
    [s.site_id, s.site_name, s.location, s.latitude, s.longitude, s.timezone, s.retention_period, s.edge_current_version, s.edge_previous_version, created_at],
  );
  return row!;
}

/** The row as stored, or null when the site is gone; a taken name fails on `sites_name_key`. */
export async function updateSite(db: Db, s: SiteValues): Promise<SiteRow | null> {
  const [row] = await returned<SiteRow>(
    db,
    `UPDATE sites SET site_name = $2, location = $3, latitude = $4, longitude = $5, timezone = $6,
            retention_period = $7, edge_current_version = $8, edge_previous_version = $9
      WHERE site_id = $1 RETURNING *`,
    [s.site_id, s.site_name, s.location, s.latitude, s.longitude, s.timezone, s.retention_period, s.edge_current_version, s.edge_previous_version],
  );
  return row ?? null;
}

export const plantsOnSite = (db: Db, site_id: string): Promise<number> =>
  count(db, `SELECT count(*)::int AS n FROM plants WHERE site_id = $1`, [site_id]);

/** False when there was no such site; a plant created meanwhile fails it on its foreign key. */
export const deleteSite = async (db: Db, site_id: string): Promise<boolean> =>
  (await returned(db, `DELETE FROM sites WHERE site_id = $1 RETURNING *`, [site_id])).length > 0;

/** Every site, or the one of a caller bound to a site. */
export const listSites = (db: Db, site_id: string | null): Promise<SiteRow[]> =>
  rows(db, `SELECT * FROM sites WHERE ($1::uuid IS NULL OR site_id = $1::uuid) ORDER BY created_at, site_name`, [site_id]);

export const siteSummary = (db: Db, site_id: string) =>
  first<{ site_id: string; site_name: string; timezone: string; retention_period: string }>(
    db,
    `SELECT site_id, site_name, timezone, retention_period FROM sites WHERE site_id = $1`,
    [site_id],
  );

// ---- plants -----------------------------------------------------------------------------------

export interface PlantRow {
  plant_id: string;
  plant_name: string;
  site_id: string;
  site_name: string;
}

export const plantById = (db: Db, plant_id: string): Promise<PlantRow | null> =>
  first(
    db,
    `SELECT p.plant_id, p.plant_name, p.site_id, s.site_name FROM plants p JOIN sites s ON s.site_id = p.site_id WHERE p.plant_id = $1`,
    [plant_id],
  );

/** A taken name fails on `plants_name_key`, a site deleted meanwhile on the foreign key. */
export async function insertPlant(db: Db, p: Omit<PlantRow, "site_name">, created_at: number): Promise<void> {
  await db.query(`INSERT INTO plants (plant_id, plant_name, site_id, created_at) VALUES ($1,$2,$3,$4)`, [p.plant_id, p.plant_name, p.site_id, created_at]);
}

export async function renamePlant(db: Db, plant_id: string, plant_name: string): Promise<void> {
  await db.query(`UPDATE plants SET plant_name = $2 WHERE plant_id = $1`, [plant_id, plant_name]);
}

/** What this schema holds on a plant (its events and pipelines are the pipelines service's). */
export const plantContents = async (db: Db, plant_id: string): Promise<{ assets: number; functions: number }> =>
  (await rows<{ assets: number; functions: number }>(
    db,
    `SELECT (SELECT count(*) FROM assets a JOIN functions f ON f.function_id = a.function_id WHERE f.plant_id = $1)::int AS assets,
            (SELECT count(*) FROM functions WHERE plant_id = $1)::int AS functions`,
    [plant_id],
  ))[0]!;

/** A function created meanwhile fails it on its foreign key. */
export async function deletePlant(db: Db, plant_id: string): Promise<void> {
  await db.query(`DELETE FROM plants WHERE plant_id = $1`, [plant_id]);
}

/** The plants of a site within the caller's scope, with their function counts. */
export const plantsOfSite = (db: Db, site_id: string, [scopeSite, scopePlant]: ScopeIds) =>
  rows<PlantRow & { function_count: number }>(
    db,
    `SELECT p.plant_id, p.plant_name, p.site_id, s.site_name,
            (SELECT count(*) FROM functions f WHERE f.plant_id = p.plant_id)::int AS function_count
       FROM plants p JOIN sites s ON s.site_id = p.site_id
      WHERE p.site_id = $1 AND ${scopeSql(2)}
      ORDER BY p.created_at, p.plant_name`,
    [site_id, scopeSite, scopePlant],
  );

export const plantSummary = (db: Db, plant_id: string) =>
  first<PlantRow & { timezone: string }>(
    db,
    `SELECT p.plant_id, p.plant_name, s.site_id, s.site_name, s.timezone
       FROM plants p JOIN sites s ON s.site_id = p.site_id WHERE p.plant_id = $1`,
    [plant_id],
  );

// ---- functions --------------------------------------------------------------------------------

/** A function with its names and its site's zone: what `config.functions.resolve` answers. */
export type FunctionRow = ResolvedFunction;

export const functionById = (db: Db, function_id: string): Promise<FunctionRow | null> =>
  first(
    db,
    `SELECT f.function_id, f.function_name, p.plant_id, p.plant_name, s.site_id, s.site_name, s.timezone
       FROM functions f JOIN plants p ON p.plant_id = f.plant_id JOIN sites s ON s.site_id = p.site_id
      WHERE f.function_id = $1`,
    [function_id],
  );

/** A taken name fails on `functions_name_key`, a plant deleted meanwhile on the foreign key. */
export async function insertFunction(db: Db, f: { function_id: string; function_name: string; plant_id: string }, created_at: number): Promise<void> {
  await db.query(`INSERT INTO functions (function_id, function_name, plant_id, created_at) VALUES ($1,$2,$3,$4)`, [
    f.function_id,
    f.function_name,
    f.plant_id,
    created_at,
  ]);
}

export async function renameFunction(db: Db, function_id: string, function_name: string): Promise<void> {
  await db.query(`UPDATE functions SET function_name = $2 WHERE function_id = $1`, [function_id, function_name]);
}

export const functionAttachments = async (db: Db, function_id: string): Promise<{ monitors: number; assets: number }> =>
  (await rows<{ monitors: number; assets: number }>(
    db,
    `SELECT (SELECT count(*) FROM monitors WHERE function_id = $1)::int AS monitors,
            (SELECT count(*) FROM assets WHERE function_id = $1)::int AS assets`,
    [function_id],
  ))[0]!;

/** A monitor or asset attached meanwhile fails it on its foreign key. */
export async function deleteFunction(db: Db, function_id: string): Promise<void> {
  await db.query(`DELETE FROM functions WHERE function_id = $1`, [function_id]);
}

/** monitor_count counts the monitors on the function's assets too. */
export const functionsOfPlant = (db: Db, plant_id: string) =>
  rows<{ function_id: string; function_name: string; monitor_count: number }>(
    db,
    `SELECT f.function_id, f.function_name,
            (SELECT count(*) FROM monitors m WHERE m.function_id = f.function_id)::int AS monitor_count
       FROM functions f WHERE f.plant_id = $1
      ORDER BY f.created_at, f.function_name`,
    [plant_id],
  );

// ---- assets -----------------------------------------------------------------------------------

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

export interface AssetValues {
  asset_id: string;
  asset_name: string;
  asset_category: string;
  is_critical: boolean;
  attributes: AssetAttributes;
}

export const assetById = (db: Db, asset_id: string): Promise<AssetRow | null> =>
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
export async function insertAsset(db: Db, a: AssetValues & { function_id: string }, created_at: number): Promise<void> {
  await db.query(
    `INSERT INTO assets (asset_id, asset_name, function_id, asset_category, is_critical, attributes, created_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7)`,
    [a.asset_id, a.asset_name, a.function_id, a.asset_category, a.is_critical, JSON.stringify(a.attributes), created_at],
  );
}

export async function updateAsset(db: Db, a: AssetValues): Promise<void> {
  await db.query(`UPDATE assets SET asset_name = $2, asset_category = $3, is_critical = $4, attributes = $5 WHERE asset_id = $1`, [
    a.asset_id,
    a.asset_name,
    a.asset_category,
    a.is_critical,
    JSON.stringify(a.attributes),
  ]);
}

export const monitorsOnAsset = (db: Db, asset_id: string): Promise<number> =>
  count(db, `SELECT count(*)::int AS n FROM monitors WHERE asset_id = $1`, [asset_id]);

/** A monitor attached meanwhile fails it on its foreign key. */
export async function deleteAsset(db: Db, asset_id: string): Promise<void> {
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

export const listAssets = async (db: Db, f: AssetFilterValues) =>
  (await rows<AssetListRow>(db, ASSET_LIST_SQL, assetFilterParams(f))).map(assetListItem);

export const countAssets = (db: Db, f: AssetFilterValues): Promise<number> =>
  count(
    db,
    `SELECT count(*)::int AS n FROM assets a JOIN functions f ON f.function_id = a.function_id
       JOIN plants p ON p.plant_id = f.plant_id WHERE ${ASSET_FILTER}`,
    assetFilterParams(f),
  );

// ---- monitors ---------------------------------------------------------------------------------

export interface MonitorRow {
  monitor_id: string;
  monitor_name: string;
  monitor_type: string;
  function_id: string;
  function_name: string;
  asset_id: string | null;
  asset_name: string | null;
  asset_attributes: Record<string, unknown> | null;
  plant_id: string;
  plant_name: string;
  site_id: string;
  site_name: string;
  timezone: string;
  tags: MonitorTag[];
  specs: Record<string, unknown>;
  attributes: Record<string, unknown>;
  /** epoch ms, as text (bigint) */
  created_at: string;
  pipeline_id: string | null;
  data_source: string | null;
  data_source_subtype: string | null;
  slave_id: number | null;
  data_type: string | null;
}

export interface MonitorValues {
  monitor_id: string;
  monitor_name: string;
  monitor_type: string;
  tags: MonitorTag[];
  specs: Record<string, unknown>;
  attributes: Record<string, unknown>;
}

/** Monitors with their parents, those that exist, in creation order. */
export const monitorsByIds = (db: Db, monitor_ids: string[]): Promise<MonitorRow[]> =>
  rows(
    db,
    `SELECT m.monitor_id, m.monitor_name, m.monitor_type, m.function_id, f.function_name,
            m.asset_id, a.asset_name, a.attributes AS asset_attributes,
            p.plant_id, p.plant_name, s.site_id, s.site_name, s.timezone,
            m.tags, m.specs, m.attributes, m.created_at,
            m.pipeline_id, m.data_source, m.data_source_subtype, m.slave_id, m.data_type
       FROM monitors m JOIN functions f ON f.function_id = m.function_id
       JOIN plants p ON p.plant_id = f.plant_id JOIN sites s ON s.site_id = p.site_id
       LEFT JOIN assets a ON a.asset_id = m.asset_id
      WHERE m.monitor_id = ANY($1::uuid[]) ORDER BY m.created_at, m.monitor_name`,
    [monitor_ids],
  );

/** Licence checks of parallel creates queue on this lock, so the count they read is the real one. */
const LICENCE_LOCK = "ims:config:monitor-licence";

/**
 * Inserts a monitor; under a licence cap the count and the insert happen under one
 * transaction-level lock. False, and nothing inserted, when the cap is reached. A taken name
 * fails on `monitors_name_key`, a parent deleted meanwhile on a foreign key.
 */
export function insertMonitor(
  db: Db,
  m: MonitorValues & { function_id: string; asset_id: string | null },
  created_at: number,
  cap: number | undefined,
): Promise<boolean> {
  return inTransaction(db, async (tx) => {
    if (cap !== undefined) {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [LICENCE_LOCK]);
      if ((await count(tx, `SELECT count(*)::int AS n FROM monitors`, [])) >= cap) return false;
    }
    await tx.query(
      `INSERT INTO monitors (monitor_id, monitor_name, monitor_type, function_id, asset_id, tags, specs, attributes, created_at)
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
      [
        m.monitor_id,
        m.monitor_name,
        m.monitor_type,
        m.function_id,
        m.asset_id,
        JSON.stringify(m.tags),
        JSON.stringify(m.specs),
        JSON.stringify(m.attributes),
        created_at,
      ],
    );
    return true;
  });
}

export async function updateMonitor(db: Db, m: MonitorValues): Promise<void> {
  await db.query(`UPDATE monitors SET monitor_name = $2, monitor_type = $3, tags = $4, specs = $5, attributes = $6 WHERE monitor_id = $1`, [
    m.monitor_id,
    m.monitor_name,
    m.monitor_type,
    JSON.stringify(m.tags),
    JSON.stringify(m.specs),
    JSON.stringify(m.attributes),
  ]);
}

/** False when the monitor is registered (or gone): the delete itself re-checks, so a registration meanwhile wins. */
export const deleteUnregisteredMonitor = async (db: Db, monitor_id: string): Promise<boolean> =>
  (await returned(db, `DELETE FROM monitors WHERE monitor_id = $1 AND pipeline_id IS NULL RETURNING monitor_id`, [monitor_id])).length > 0;

/** The filter of the monitor list and count; null: any. */
export interface MonitorFilterValues {
  scope: ScopeIds;
  asset_id: string | null;
  function_id: string | null;
  /** lower case */
  pipeline_id: string | null;
  registered: boolean | null;
  /** lower case: energy, condition or process */
  data_type: string | null;
  /** the monitor_type that stands for data_type while a monitor is unregistered */
  monitor_type: string | null;
}

const monitorFilterParams = (f: MonitorFilterValues): unknown[] => [
  ...f.scope,
  f.asset_id,
  f.function_id,
  f.pipeline_id,
  f.registered,
  f.data_type,
  f.monitor_type,
];

/**
 * The WHERE clause of the monitor list and count on `monitors m` joined to `plants p`. Parameters:
 * $1 site and $2 plant of the caller's scope, $3 asset, $4 function, $5 pipeline, $6 registered
 * or not, $7 data type and $8 the monitor type that stands for it while unregistered (each null:
 * any). data_type matches the registered pipeline's data type or, for a monitor no pipeline has
 * registered yet, its monitor_type.
 */
export const MONITOR_FILTER = `${scopeSql(1)}
      AND ($3::uuid IS NULL OR m.asset_id = $3::uuid)
      AND ($4::uuid IS NULL OR m.function_id = $4::uuid)
      AND ($5::text IS NULL OR m.pipeline_id = $5::text)
      AND ($6::boolean IS NULL OR (m.pipeline_id IS NOT NULL) = $6::boolean)
      AND ($7::text IS NULL OR CASE WHEN m.data_type IS NOT NULL THEN lower(m.data_type) = $7::text
                                    ELSE m.monitor_type = $8::text END)`;

export const MONITOR_COUNT_SQL = `SELECT count(*)::int AS n FROM monitors m JOIN functions f ON f.function_id = m.function_id
         JOIN plants p ON p.plant_id = f.plant_id WHERE ${MONITOR_FILTER}`;

export const listMonitors = (db: Db, f: MonitorFilterValues) =>
  rows<{ monitor_id: string; monitor_name: string; monitor_type: string; created_at: string; registered: boolean }>(
    db,
    `SELECT m.monitor_id, m.monitor_name, m.monitor_type, m.created_at, (m.pipeline_id IS NOT NULL) AS registered
       FROM monitors m JOIN functions f ON f.function_id = m.function_id JOIN plants p ON p.plant_id = f.plant_id
      WHERE ${MONITOR_FILTER}
      ORDER BY m.created_at, m.monitor_name`,
    monitorFilterParams(f),
  );

export const countMonitors = (db: Db, f: MonitorFilterValues): Promise<number> => count(db, MONITOR_COUNT_SQL, monitorFilterParams(f));

export interface Registration {
  monitor_id: string;
  pipeline_id: string;
  data_source: string | null;
  data_source_subtype: string | null;
  slave_id: number | null;
  data_type: string | null;
}

/** The latest registration wins; false when there is no such monitor. */
export const registerMonitor = async (db: Db, r: Registration): Promise<boolean> =>
  (
    await returned(
      db,
      `UPDATE monitors SET pipeline_id = $2, data_source = $3, data_source_subtype = $4, slave_id = $5, data_type = $6
        WHERE monitor_id = $1 RETURNING monitor_id`,
      [r.monitor_id, r.pipeline_id, r.data_source, r.data_source_subtype, r.slave_id, r.data_type],
    )
  ).length > 0;

/** Clears only the named pipeline's registration, so a late event cannot undo a newer one. */
export const unregisterMonitor = async (db: Db, monitor_id: string, pipeline_id: string): Promise<boolean> =>
  (
    await returned(
      db,
      `UPDATE monitors SET pipeline_id = NULL, data_source = NULL, data_source_subtype = NULL, slave_id = NULL, data_type = NULL
        WHERE monitor_id = $1 AND pipeline_id = $2 RETURNING monitor_id`,
      [monitor_id, pipeline_id],
    )
  ).length > 0;
