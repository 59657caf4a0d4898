/**
 * auth's queries on its own schema (users, otps, tokens): raw parametrised SQL through the TypeORM
 * DataSource, or through the EntityManager of a transaction the caller holds.
 */
import type { DataSource, EntityManager } from "typeorm";
import type { Scope, UserType } from "../../lib/access";
import type { OtpRow } from "./otp";
import type { TokenRow, TokenScope } from "./tokens";
import type { Place, UserRow } from "./users";

type Db = DataSource | EntityManager;

export async function findUser(db: Db, username: string): Promise<UserRow | undefined> {
  const rows: UserRow[] = await db.query(`SELECT * FROM users WHERE username = $1`, [username]);
  return rows[0];
}

export async function touchLastLogin(db: Db, username: string, at: number): Promise<void> {
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
export async function insertUser(db: Db, u: NewUser): Promise<boolean> {
  const inserted: unknown[] = await db.query(
    `INSERT INTO users (username, password_hash, user_type, site_id, plant_id, mobile_number, country_code, modules, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (username) DO NOTHING RETURNING username`,
    [u.username, u.password_hash, u.user_type, u.site_id, u.plant_id, u.mobile_number, u.country_code, u.modules, u.created_at],
  );
  return inserted.length > 0;
}

export async function deleteUser(db: Db, username: string): Promise<void> {
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
export async function updateUser(db: Db, username: string, c: UserChange): Promise<void> {
  await db.query(
    `WITH revoked AS (DELETE FROM tokens WHERE username = $1 AND $8::text IS NOT NULL)
     UPDATE users SET mobile_number = $2, country_code = $3, user_type = $4, site_id = $5, plant_id = $6,
                      modules = $7, password_hash = COALESCE($8, password_hash)
      WHERE username = $1`,
    [username, c.mobile_number, c.country_code, c.user_type, c.site_id, c.plant_id, c.modules, c.password_hash],
  );
}

export async function setPasswordHash(db: Db, username: string, passwordHash: string): Promise<void> {
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
  db: Db,
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

/** A new OTP replaces the previous one and its count of wrong tries. */
export async function saveOtp(db: Db, username: string, otpHash: string, expiresAt: number): Promise<void> {
  await db.query(
    `INSERT INTO otps (username, otp_hash, expires_at, attempts, verified) VALUES ($1, $2, $3, 0, false)
     ON CONFLICT (username) DO UPDATE SET otp_hash = EXCLUDED.otp_hash, expires_at = EXCLUDED.expires_at, attempts = 0, verified = false`,
    [username, otpHash, expiresAt],
  );
}

/** The user's OTP, its row locked until the transaction `tx` ends. */
export async function lockOtp(tx: EntityManager, username: string): Promise<OtpRow | undefined> {
  const rows: OtpRow[] = await tx.query(`SELECT * FROM otps WHERE username = $1 FOR UPDATE`, [username]);
  return rows[0];
}

export async function markOtpVerified(db: Db, username: string): Promise<void> {
  await db.query(`UPDATE otps SET verified = true WHERE username = $1`, [username]);
}

export async function setOtpAttempts(db: Db, username: string, attempts: number): Promise<void> {
  await db.query(`UPDATE otps SET attempts = $2 WHERE username = $1`, [username, attempts]);
}

export async function deleteOtp(db: Db, username: string): Promise<void> {
  await db.query(`DELETE FROM otps WHERE username = $1`, [username]);
}

/** Serialises the first start of replicas: held until `tx` ends. */
export async function lockBootstrap(tx: EntityManager): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('ims:auth:bootstrap'))`);
}

export async function countUsers(db: Db): Promise<number> {
  const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM users`)) as { n: number }[];
  return n;
}

/** The bootstrap SaaS admin: reserved, so it keeps its type and is never deleted. */
export async function insertReservedAdmin(db: Db, username: string, passwordHash: string, modules: string[], createdAt: number): Promise<void> {
  await db.query(
    `INSERT INTO users (username, password_hash, user_type, site_id, plant_id, modules, created_at, reserved)
     VALUES ($1, $2, 'saas-admin', NULL, NULL, $3, $4, true)`,
    [username, passwordHash, modules, createdAt],
  );
}

export interface NewToken {
  token_id: string;
  username: string;
  name: string;
  scope: TokenScope;
  token_hash: string;
  created_at: number;
  expires_at: number;
  /** Who issued it: its user, or an admin of that user. */
  issued_by: string;
}

/** False when the user is gone (deleted while the token was being issued). */
export async function insertToken(db: Db, t: NewToken): Promise<boolean> {
  const inserted: unknown[] = await db.query(
    `INSERT INTO tokens (token_id, username, name, scope, token_hash, created_at, expires_at, issued_by)
     SELECT $1, username, $3, $4, $5, $6, $7, $8 FROM users WHERE username = $2
     RETURNING token_id`,
    [t.token_id, t.username, t.name, t.scope, t.token_hash, t.created_at, t.expires_at, t.issued_by],
  );
  return inserted.length > 0;
}

/** A user's tokens, oldest first, expired ones included (the list shows why an integration stopped). */
export async function listTokens(db: Db, username: string): Promise<TokenRow[]> {
  // A notebook run's token is the run's, not one of the user's integrations.
  return db.query(`SELECT * FROM tokens WHERE username = $1 AND purpose IS NULL ORDER BY created_at, token_id`, [username]);
}

/** A token found by its hash, with what its user is granted now (a token acts with its user's current grants). */
export type TokenSignIn = Pick<TokenRow, "token_id" | "username" | "scope" | "expires_at" | "last_used_at" | "issued_by"> &
  Pick<UserRow, "user_type" | "site_id" | "plant_id" | "modules">;

export async function findTokenSignIn(db: Db, tokenHash: string): Promise<TokenSignIn | undefined> {
  const rows: TokenSignIn[] = await db.query(
    `SELECT t.token_id, t.username, t.scope, t.expires_at, t.last_used_at, t.issued_by, u.user_type, u.site_id, u.plant_id, u.modules
       FROM tokens t JOIN users u ON u.username = t.username
      WHERE t.token_hash = $1`,
    [tokenHash],
  );
  return rows[0];
}

/** Writes the use unless another request wrote one within `everyMs` (so parallel requests write once). */
export async function touchToken(db: Db, tokenId: string, at: number, everyMs: number): Promise<void> {
  await db.query(`UPDATE tokens SET last_used_at = $2 WHERE token_id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`, [
    tokenId,
    at,
    at - everyMs,
  ]);
}

/** Revokes every token of a user (a password reset); answers how many there were. */
export async function deleteTokensOf(db: Db, username: string): Promise<number> {
  const deleted: unknown[] = await db.query(`WITH d AS (DELETE FROM tokens WHERE username = $1 RETURNING token_id) SELECT token_id FROM d`, [username]);
  return deleted.length;
}

/** False when the user has no such token. */
export async function deleteToken(db: Db, username: string, tokenId: string): Promise<boolean> {
  // Through a CTE: TypeORM answers a bare DELETE … RETURNING with [rows, affected].
  const deleted: unknown[] = await db.query(`WITH d AS (DELETE FROM tokens WHERE username = $1 AND token_id = $2 RETURNING token_id) SELECT token_id FROM d`, [
    username,
    tokenId,
  ]);
  return deleted.length > 0;
}

/** A notebook run's read token (run-tokens.actions.ts). */
export interface NewRunToken {
  token_id: string;
  username: string;
  /** The owner's record (its `created_at`): a later user of the same name gets no token for the old one's notebooks. */
  owner_since: number | null;
  token_hash: string;
  created_at: number;
  expires_at: number;
}

/** False when the user is gone, or is another record of that name than the notebook's owner. */
export async function insertRunToken(db: Db, t: NewRunToken): Promise<boolean> {
  const inserted: unknown[] = await db.query(
    `INSERT INTO tokens (token_id, username, name, scope, token_hash, created_at, expires_at, purpose)
     SELECT $1, username, 'notebook run', 'read', $4, $5, $6, 'notebook-run' FROM users
      WHERE username = $2 AND ($3::bigint IS NULL OR created_at = $3::bigint)
     RETURNING token_id`,
    [t.token_id, t.username, t.owner_since, t.token_hash, t.created_at, t.expires_at],
  );
  return inserted.length > 0;
}

/** The token's user, or null when there was no such run token. */
export async function deleteRunToken(db: Db, tokenId: string): Promise<string | null> {
  const deleted: { username: string }[] = await db.query(
    `WITH d AS (DELETE FROM tokens WHERE token_id = $1 AND purpose = 'notebook-run' RETURNING username) SELECT username FROM d`,
    [tokenId],
  );
  return deleted[0]?.username ?? null;
}

export async function deleteExpiredRunTokens(db: Db, now: number): Promise<void> {
  await db.query(`DELETE FROM tokens WHERE purpose = 'notebook-run' AND expires_at < $1`, [now]);
}
