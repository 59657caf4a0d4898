/** The functions' SQL (table `functions`, joined to its plant and site for the names). */
import type { ResolvedFunction } from "./contract";
import { first, rows, type Queryable } from "./sql";

/** A function with its names and its site's zone: what `config.functions.resolve` answers. */
export type FunctionRow = ResolvedFunction;

export const functionById = (db: Queryable, function_id: string): Promise<FunctionRow | null> =>
  first(
    db,
    `SELECT f.function_id, f.function_name, p.plant_id, p.plant_name, s.site_id, s.site_name, s.timezone
       FROM functions f JOIN plants p ON p.plant_id = f.plant_id JOIN sites s ON s.site_id = p.site_id
      WHERE f.function_id = $1`,
    [function_id],
  );

/** A taken name fails on `functions_name_key`, a plant deleted meanwhile on the foreign key. */
export async function insertFunction(db: Queryable, f: { function_id: string; function_name: string; plant_id: string }, created_at: number): Promise<void> {
  await db.query(`INSERT INTO functions (function_id, function_name, plant_id, created_at) VALUES ($1,$2,$3,$4)`, [
    f.function_id,
    f.function_name,
    f.plant_id,
    created_at,
  ]);
}

export async function renameFunction(db: Queryable, function_id: string, function_name: string): Promise<void> {
  await db.query(`UPDATE functions SET function_name = $2 WHERE function_id = $1`, [function_id, function_name]);
}

export const functionAttachments = async (db: Queryable, function_id: string): Promise<{ monitors: number; assets: number }> =>
  (await rows<{ monitors: number; assets: number }>(
    db,
    `SELECT (SELECT count(*) FROM monitors WHERE function_id = $1)::int AS monitors,
            (SELECT count(*) FROM assets WHERE function_id = $1)::int AS assets`,
    [function_id],
  ))[0]!;

/** A monitor or asset attached meanwhile fails it on its foreign key. */
export async function deleteFunction(db: Queryable, function_id: string): Promise<void> {
  await db.query(`DELETE FROM functions WHERE function_id = $1`, [function_id]);
}

/** monitor_count counts the monitors on the function's assets too. */
export const functionsOfPlant = (db: Queryable, plant_id: string) =>
  rows<{ function_id: string; function_name: string; monitor_count: number }>(
    db,
    `SELECT f.function_id, f.function_name,
            (SELECT count(*) FROM monitors m WHERE m.function_id = f.function_id)::int AS monitor_count
       FROM functions f WHERE f.plant_id = $1
      ORDER BY f.created_at, f.function_name`,
    [plant_id],
  );
