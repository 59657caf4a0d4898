/** The monitors' SQL (table `monitors`, with the registration config learns from the pipelines service's events). */
import type { ResolvedMonitor } from "./contract";
import { scopeSql } from "./rules";
import { count, inTransaction, returned, rows, type Queryable, type ScopeIds } from "./sql";

/** A monitor with its parents as stored: `config.monitors.resolve`'s item before it is shaped, and the registration. */
export type MonitorRow = Omit<ResolvedMonitor, "asset_attributes"> & {
  asset_attributes: ResolvedMonitor["asset_attributes"] | null;
  /** epoch ms, as text (bigint) */
  created_at: string;
  pipeline_id: string | null;
  data_source: string | null;
  data_source_subtype: string | null;
  slave_id: number | null;
  data_type: string | null;
};

export type MonitorValues = Pick<MonitorRow, "monitor_id" | "monitor_name" | "monitor_type" | "tags" | "specs" | "attributes">;

/** Monitors with their parents, those that exist, in creation order. */
export const monitorsByIds = (db: Queryable, monitor_ids: string[]): Promise<MonitorRow[]> =>
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
  db: Queryable,
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

export async function updateMonitor(db: Queryable, m: MonitorValues): Promise<void> {
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
export const deleteUnregisteredMonitor = async (db: Queryable, monitor_id: string): Promise<boolean> =>
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

export const listMonitors = (db: Queryable, f: MonitorFilterValues) =>
  rows<{ monitor_id: string; monitor_name: string; monitor_type: string; created_at: string; registered: boolean }>(
    db,
    `SELECT m.monitor_id, m.monitor_name, m.monitor_type, m.created_at, (m.pipeline_id IS NOT NULL) AS registered
       FROM monitors m JOIN functions f ON f.function_id = m.function_id JOIN plants p ON p.plant_id = f.plant_id
      WHERE ${MONITOR_FILTER}
      ORDER BY m.created_at, m.monitor_name`,
    monitorFilterParams(f),
  );

export const countMonitors = (db: Queryable, f: MonitorFilterValues): Promise<number> => count(db, MONITOR_COUNT_SQL, monitorFilterParams(f));

export type Registration = Pick<MonitorRow, "monitor_id" | "data_source" | "data_source_subtype" | "slave_id" | "data_type"> & { pipeline_id: string };

/** The latest registration wins; false when there is no such monitor. */
export const registerMonitor = async (db: Queryable, r: Registration): Promise<boolean> =>
  (
    await returned(
      db,
      `UPDATE monitors SET pipeline_id = $2, data_source = $3, data_source_subtype = $4, slave_id = $5, data_type = $6
        WHERE monitor_id = $1 RETURNING monitor_id`,
      [r.monitor_id, r.pipeline_id, r.data_source, r.data_source_subtype, r.slave_id, r.data_type],
    )
  ).length > 0;

/** Clears only the named pipeline's registration, so a late event cannot undo a newer one. */
export const unregisterMonitor = async (db: Queryable, monitor_id: string, pipeline_id: string): Promise<boolean> =>
  (
    await returned(
      db,
      `UPDATE monitors SET pipeline_id = NULL, data_source = NULL, data_source_subtype = NULL, slave_id = NULL, data_type = NULL
        WHERE monitor_id = $1 AND pipeline_id = $2 RETURNING monitor_id`,
      [monitor_id, pipeline_id],
    )
  ).length > 0;
