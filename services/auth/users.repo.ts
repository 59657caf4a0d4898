/**
 * The SQL of auth's users (auth.users): raw parametrised queries through the TypeORM DataSource,
 * or the EntityManager of a transaction the caller holds.
 */
import type { EntityManager } from "typeorm";
import type { Scope, UserType } from "../../lib/access";
import type { Queryable } from "./port";

/** A row of auth.users. bigint columns arrive from pg as text, which is the spec's form for the two timestamps. */
export interface UserRow {
  username: string;
  password_hash: string;
  user_type: UserType;
  site_id: string | null;
  plant_id: string | null;
  mobile_number: string;
  country_code: string;
  modules: string[];
  created_at: string;
  last_login_time: string | null;
  reserved: boolean;
  hidden: boolean;
}

/** Where a user belongs: both null for the types that see every site, plant null for a site-admin. */
export interface Place {
  site_id: string | null;
  plant_id: string | null;
}

export async function findUser(db: Queryable, username: string): Promise<UserRow | undefined> {
  const rows: UserRow[] = await db.query(`SELECT * FROM users WHERE username = $1`, [username]);
  return rows[0];
}

export async function touchLastLogin(db: Queryable, username: string, at: number): Promise<void> {
  await db.query(`UPDATE users SET last_login_time = $2 WHERE username = $1`, [username, at]);
}

export interface NewUser extends Place {
  username: string;
  password_hash: string;
  user_type: UserType;
  mobile_number: string;
  country_code: string;
  modules: string[];
  created_at: number;
}

/** False when the username is taken (a parallel create won). */
export async function insertUser(db: Queryable, u: NewUser): Promise<boolean> {
  const inserted: unknown[] = await db.query(
    `INSERT INTO users (username, password_hash, user_type, site_id, plant_id, mobile_number, country_code, modules, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (username) DO NOTHING RETURNING username`,
    [u.username, u.password_hash, u.user_type, u.site_id, u.plant_id, u.mobile_number, u.country_code, u.modules, u.created_at],
  );
  return inserted.length > 0;
}

export async function deleteUser(db: Queryable, username: string): Promise<void> {
  await db.query(`DELETE FROM users WHERE username = $1`, [username]);
}

export interface UserChange extends Place {
  mobile_number: string;
  country_code: string;
  user_type: UserType;
  modules: string[];
  /** null keeps the stored hash. */
  password_hash: string | null;
}

/** A new password (not null) revokes the user's API tokens in the same statement, as a reset does (docs/security.md). */
export async function updateUser(db: Queryable, username: string, c: UserChange): Promise<void> {
  await db.query(
    `WITH revoked AS (DELETE FROM tokens WHERE username = $1 AND $8::text IS NOT NULL)
     UPDATE users SET mobile_number = $2, country_code = $3, user_type = $4, site_id = $5, plant_id = $6,
                      modules = $7, password_hash = COALESCE($8, password_hash)
      WHERE username = $1`,
    [username, c.mobile_number, c.country_code, c.user_type, c.site_id, c.plant_id, c.modules, c.password_hash],
  );
}

export async function setPasswordHash(db: Queryable, username: string, passwordHash: string): Promise<void> {
  await db.query(`UPDATE users SET password_hash = $2 WHERE username = $1`, [username, passwordHash]);
}

export interface UserFilter {
  /** A site or plant id, lower case; undefined for every one. */
  site_id?: string;
  plant_id?: string;
  /** The caller's scope, which applies whatever the filter asks for. */
  scope: Scope;
}

/** One page of the visible users, oldest first, and how many there are in all. */
export async function listUsers(
  db: Queryable,
  filter: UserFilter,
  page: { limit?: number; offset?: number },
): Promise<{ total: number; rows: UserRow[] }> {
  const where = ["NOT hidden"];
  const args: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    args.push(value);
    where.push(sql.replace("?", `$${args.length}`));
  };
  if (filter.site_id !== undefined) add("site_id = ?", filter.site_id);
  if (filter.plant_id !== undefined) add("plant_id = ?", filter.plant_id);
  const { scope } = filter;
  if (scope.kind !== "all") add("site_id = ?", scope.site_id);
  // A plant's users see one another, not the site-admin above them (users.ts, userVisibleTo).
  if (scope.kind === "plant") add("(plant_id = ? AND user_type IN ('plant-admin', 'general-user'))", scope.plant_id);

  const clause = where.join(" AND ");
  const [{ total }] = (await db.query(`SELECT count(*)::int AS total FROM users WHERE ${clause}`, args)) as { total: number }[];
  const rows: UserRow[] = await db.query(
    `SELECT * FROM users WHERE ${clause} ORDER BY created_at, username LIMIT $${args.length + 1} OFFSET $${args.length + 2}`,
    [...args, page.limit ?? null, page.offset ?? 0],
  );
  return { total, rows };
}

/** Serialises the first start of replicas: held until `tx` ends. */
export async function lockBootstrap(tx: EntityManager): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('ims:auth:bootstrap'))`);
}

export async function countUsers(db: Queryable): Promise<number> {
  const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM users`)) as { n: number }[];
  return n;
}

/** The bootstrap SaaS admin: reserved, so it keeps its type and is never deleted. */
export async function insertReservedAdmin(db: Queryable, username: string, passwordHash: string, modules: string[], createdAt: number): Promise<void> {
  await db.query(
    `INSERT INTO users (username, password_hash, user_type, site_id, plant_id, modules, created_at, reserved)
     VALUES ($1, $2, 'saas-admin', NULL, NULL, $3, $4, true)`,
    [username, passwordHash, modules, createdAt],
  );
}


/** Up to `limit` users' contact fields after `after` (null: from the first), ordered by name byte by byte (lib/announcements.ts). */
export const contactsAfter = async (db: Queryable, after: string | null, limit: number): Promise<ContactRow[]> =>
  (await db.query(
    `SELECT username, user_type, site_id, plant_id, mobile_number, country_code, created_at FROM users
      WHERE ($1::text IS NULL OR username COLLATE "C" > $1::text) ORDER BY username COLLATE "C" LIMIT $2`,
    [after, limit],
  )) as ContactRow[];

export type ContactRow = Pick<UserRow, "username" | "user_type" | "site_id" | "plant_id" | "mobile_number" | "country_code" | "created_at">;
