/** The sites' SQL (table `sites`; the count of a site's plants its delete refusal needs). */
import { count, first, returned, rows, type Queryable } from "./sql";

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

export const siteById = (db: Queryable, site_id: string): Promise<SiteRow | null> =>
  first(db, `SELECT * FROM sites WHERE site_id = $1`, [site_id]);

/** The stored row; a taken name fails on `sites_name_key`. */
export async function insertSite(db: Queryable, s: SiteValues, created_at: number): Promise<SiteRow> {
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
export async function updateSite(db: Queryable, s: SiteValues): Promise<SiteRow | null> {
  const [row] = await returned<SiteRow>(
    db,
    `UPDATE sites SET site_name = $2, location = $3, latitude = $4, longitude = $5, timezone = $6,
            retention_period = $7, edge_current_version = $8, edge_previous_version = $9
      WHERE site_id = $1 RETURNING *`,
    [s.site_id, s.site_name, s.location, s.latitude, s.longitude, s.timezone, s.retention_period, s.edge_current_version, s.edge_previous_version],
  );
  return row ?? null;
}

export const plantsOnSite = (db: Queryable, site_id: string): Promise<number> =>
  count(db, `SELECT count(*)::int AS n FROM plants WHERE site_id = $1`, [site_id]);

/** False when there was no such site; a plant created meanwhile fails it on its foreign key. */
export const deleteSite = async (db: Queryable, site_id: string): Promise<boolean> =>
  (await returned(db, `DELETE FROM sites WHERE site_id = $1 RETURNING *`, [site_id])).length > 0;

/** Every site, or the one of a caller bound to a site. */
export const listSites = (db: Queryable, site_id: string | null): Promise<SiteRow[]> =>
  rows(db, `SELECT * FROM sites WHERE ($1::uuid IS NULL OR site_id = $1::uuid) ORDER BY created_at, site_name`, [site_id]);

export const siteSummary = (db: Queryable, site_id: string) =>
  first<Pick<SiteRow, "site_id" | "site_name" | "timezone" | "retention_period">>(
    db,
    `SELECT site_id, site_name, timezone, retention_period FROM sites WHERE site_id = $1`,
    [site_id],
  );
