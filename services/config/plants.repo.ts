/** The plants' SQL (table `plants`, joined to its site for the names; what it holds, for its delete refusal). */
import type { ResolvedPlant } from "./contract";
import { scopeSql } from "./rules";
import { first, rows, type Queryable, type ScopeIds } from "./sql";

/** A plant with its site's name (`config.plants.resolve` adds the site's zone). */
export type PlantRow = Omit<ResolvedPlant, "timezone">;

export const plantById = (db: Queryable, plant_id: string): Promise<PlantRow | null> =>
  first(
    db,
    `SELECT p.plant_id, p.plant_name, p.site_id, s.site_name FROM plants p JOIN sites s ON s.site_id = p.site_id WHERE p.plant_id = $1`,
    [plant_id],
  );

/** A taken name fails on `plants_name_key`, a site deleted meanwhile on the foreign key. */
export async function insertPlant(db: Queryable, p: Omit<PlantRow, "site_name">, created_at: number): Promise<void> {
  await db.query(`INSERT INTO plants (plant_id, plant_name, site_id, created_at) VALUES ($1,$2,$3,$4)`, [p.plant_id, p.plant_name, p.site_id, created_at]);
}

export async function renamePlant(db: Queryable, plant_id: string, plant_name: string): Promise<void> {
  await db.query(`UPDATE plants SET plant_name = $2 WHERE plant_id = $1`, [plant_id, plant_name]);
}

/** What this schema holds on a plant (its events and pipelines are the pipelines service's). */
export const plantContents = async (db: Queryable, plant_id: string): Promise<{ assets: number; functions: number }> =>
  (await rows<{ assets: number; functions: number }>(
    db,
    `SELECT (SELECT count(*) FROM assets a JOIN functions f ON f.function_id = a.function_id WHERE f.plant_id = $1)::int AS assets,
            (SELECT count(*) FROM functions WHERE plant_id = $1)::int AS functions`,
    [plant_id],
  ))[0]!;

/** A function created meanwhile fails it on its foreign key. */
export async function deletePlant(db: Queryable, plant_id: string): Promise<void> {
  await db.query(`DELETE FROM plants WHERE plant_id = $1`, [plant_id]);
}

/** The plants of a site within the caller's scope, with their function counts. */
export const plantsOfSite = (db: Queryable, site_id: string, [scopeSite, scopePlant]: ScopeIds) =>
  rows<PlantRow & { function_count: number }>(
    db,
    `SELECT p.plant_id, p.plant_name, p.site_id, s.site_name,
            (SELECT count(*) FROM functions f WHERE f.plant_id = p.plant_id)::int AS function_count
       FROM plants p JOIN sites s ON s.site_id = p.site_id
      WHERE p.site_id = $1 AND ${scopeSql(2)}
      ORDER BY p.created_at, p.plant_name`,
    [site_id, scopeSite, scopePlant],
  );

export const plantSummary = (db: Queryable, plant_id: string) =>
  first<ResolvedPlant>(
    db,
    `SELECT p.plant_id, p.plant_name, s.site_id, s.site_name, s.timezone
       FROM plants p JOIN sites s ON s.site_id = p.site_id WHERE p.plant_id = $1`,
    [plant_id],
  );
