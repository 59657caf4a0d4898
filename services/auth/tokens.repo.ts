/** The SQL of API tokens and notebook runs' tokens (auth.tokens). */
import type { TokenScope } from "./contract";
import type { Queryable } from "./port";
import type { UserRow } from "./users.repo";

/** A row of auth.tokens; bigint columns arrive from pg as text. */
export interface TokenRow {
  token_id: string;
  username: string;
  name: string;
  scope: TokenScope;
  token_hash: string;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  /** Null for tokens issued before the issuer was recorded. */
  issued_by: string | null;
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
export async function insertToken(db: Queryable, t: NewToken): Promise<boolean> {
  const inserted: unknown[] = await db.query(
    `INSERT INTO tokens (token_id, username, name, scope, token_hash, created_at, expires_at, issued_by)
     SELECT $1, username, $3, $4, $5, $6, $7, $8 FROM users WHERE username = $2
     RETURNING token_id`,
    [t.token_id, t.username, t.name, t.scope, t.token_hash, t.created_at, t.expires_at, t.issued_by],
  );
  return inserted.length > 0;
}

/** A user's tokens, oldest first, expired ones included (the list shows why an integration stopped). */
export async function listTokens(db: Queryable, username: string): Promise<TokenRow[]> {
  // A notebook run's token is the run's, not one of the user's integrations.
  return db.query(`SELECT * FROM tokens WHERE username = $1 AND purpose IS NULL ORDER BY created_at, token_id`, [username]);
}

/** A token found by its hash, with what its user is granted now (a token acts with its user's current grants). */
export type TokenSignIn = Pick<TokenRow, "token_id" | "username" | "scope" | "expires_at" | "last_used_at" | "issued_by"> &
  Pick<UserRow, "user_type" | "site_id" | "plant_id" | "modules">;

export async function findTokenSignIn(db: Queryable, tokenHash: string): Promise<TokenSignIn | undefined> {
  const rows: TokenSignIn[] = await db.query(
    `SELECT t.token_id, t.username, t.scope, t.expires_at, t.last_used_at, t.issued_by, u.user_type, u.site_id, u.plant_id, u.modules
       FROM tokens t JOIN users u ON u.username = t.username
      WHERE t.token_hash = $1`,
    [tokenHash],
  );
  return rows[0];
}

/** Writes the use unless another request wrote one within `everyMs` (so parallel requests write once). */
export async function touchToken(db: Queryable, tokenId: string, at: number, everyMs: number): Promise<void> {
  await db.query(`UPDATE tokens SET last_used_at = $2 WHERE token_id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`, [
    tokenId,
    at,
    at - everyMs,
  ]);
}

/** Revokes every token of a user (a password reset); answers how many there were. */
export async function deleteTokensOf(db: Queryable, username: string): Promise<number> {
  const deleted: unknown[] = await db.query(`WITH d AS (DELETE FROM tokens WHERE username = $1 RETURNING token_id) SELECT token_id FROM d`, [username]);
  return deleted.length;
}

/** False when the user has no such token. */
export async function deleteToken(db: Queryable, username: string, tokenId: string): Promise<boolean> {
  // Through a CTE: TypeORM answers a bare DELETE … RETURNING with [rows, affected].
  const deleted: unknown[] = await db.query(`WITH d AS (DELETE FROM tokens WHERE username = $1 AND token_id = $2 RETURNING token_id) SELECT token_id FROM d`, [
    username,
    tokenId,
  ]);
  return deleted.length > 0;
}

/** A notebook run's read token (run-tokens.ts). */
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
export async function insertRunToken(db: Queryable, t: NewRunToken): Promise<boolean> {
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
export async function deleteRunToken(db: Queryable, tokenId: string): Promise<string | null> {
  const deleted: { username: string }[] = await db.query(
    `WITH d AS (DELETE FROM tokens WHERE token_id = $1 AND purpose = 'notebook-run' RETURNING username) SELECT username FROM d`,
    [tokenId],
  );
  return deleted[0]?.username ?? null;
}

export async function deleteExpiredRunTokens(db: Queryable, now: number): Promise<void> {
  await db.query(`DELETE FROM tokens WHERE purpose = 'notebook-run' AND expires_at < $1`, [now]);
}
