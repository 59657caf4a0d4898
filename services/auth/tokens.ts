/**
 * API tokens for integrations (docs/security.md): what a token is, how it is stored, who may manage
 * whose, and the list's shape. Pure: tokens.actions.ts does the I/O.
 *
 * A token is 256 random bits. It is stored as its SHA-256 only: a slow, salted hash (argon2, as
 * for passwords) defends guessable secrets against a dictionary; nobody can enumerate 2^256
 * candidates, so a fast unsalted hash is as safe here, costs nothing per request, and lets the
 * stored hash be looked up by an index. A key on the hash would only matter for guessable
 * secrets, and would be one more secret every auth replica must share.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Principal } from "../../lib/access";
import { DomainError } from "../../lib/errors";
import { TOKEN_SCOPES, type TokenScope } from "./contract";
import { MSG } from "./messages";
import { placeOf, updateRefusal, userVisibleTo, type UserRow } from "./users";

export { TOKEN_SCOPES, type TokenScope };

export const TOKEN_MAX_DAYS = 365;

/** `last_used_at` is written at most this often per token: a read-mostly integration does not turn every request into a write. */
export const LAST_USED_EVERY_MS = 60_000;

const DAY_MS = 86_400_000;

/**
 * `ims_` and 43 base64url characters (32 bytes). The prefix lets a reader, a log scrubber or a
 * secret scanner tell a token from a password at a glance.
 */
const TOKEN_PREFIX = "ims_";
const TOKEN_SHAPE = /^ims_[A-Za-z0-9_-]{43}$/;

export const generateToken = (): string => TOKEN_PREFIX + randomBytes(32).toString("base64url");

/** Only the shape of a token is worth a query. */
export const looksLikeToken = (token: string): boolean => TOKEN_SHAPE.test(token);

export const tokenHash = (token: string): string => createHash("sha256").update(token).digest("hex");

export const expiresAt = (createdAt: number, days: number): number => createdAt + days * DAY_MS;

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

/** What the list answers: the token itself never again, nor its hash. Times are ISO 8601 (UTC), like every new field. */
export interface TokenView {
  token_id: string;
  name: string;
  scope: TokenScope;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
}

const iso = (ms: string | number): string => new Date(Number(ms)).toISOString();

export function tokenView(row: TokenRow): TokenView {
  return {
    token_id: row.token_id,
    name: row.name,
    scope: row.scope,
    created_at: iso(row.created_at),
    expires_at: iso(row.expires_at),
    last_used_at: row.last_used_at === null ? null : iso(row.last_used_at),
  };
}

/** Whether a stored token still signs its user in. */
export const isLive = (row: Pick<TokenRow, "expires_at">, now: number): boolean => Number(row.expires_at) > now;

/** Whether this use should be written as `last_used_at`. */
export const dueForTouch = (row: Pick<TokenRow, "last_used_at">, now: number): boolean =>
  row.last_used_at === null || now - Number(row.last_used_at) >= LAST_USED_EVERY_MS;

/**
 * Who may manage a user's tokens: the user itself, and whoever may update that user (users.ts,
 * updateRefusal, with nothing changed): an admin the types below it in its scope; a general-user
 * or a support analyst nobody else. A user the caller cannot see answers as one that does not
 * exist.
 */
export function tokenRefusal(caller: Principal, target: UserRow): DomainError | null {
  if (!userVisibleTo(caller, target)) return new DomainError(404, MSG.userNotFound);
  // Every user its own, a support analyst too (which updates no user, itself included).
  if (target.username === caller.username) return null;
  return updateRefusal(caller, target, { user_type: target.user_type, ...placeOf(target), modules: target.modules });
}
