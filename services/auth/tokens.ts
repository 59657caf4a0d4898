/**
 * API tokens for integrations (docs/security.md): what a token is, how it is stored, who may manage
 * whose, and the list's shape. Pure: tokens.actions.ts does the I/O.
 *
 * A token is 256 random bits. It is stored as its SHA-256 only: a slow, salted hash (argon2, as
 * for passwords) defends guessable secrets against a dictionary; nobody can enumerate 2^256
 * candidates, so a fast unsalted hash is as safe here, costs nothing per request, and lets the
 * stored hash be looked up by an index. A key on the hash would only matter for guessable
 * secrets, and would be one more secret every auth replica must share.
 *
 * The operations (issue, list, revoke, and `tokens.authenticate`, the gateway's question for
 * `Authorization: Bearer`) follow the rules; a user manages its own tokens, an admin those of
 * users it may update.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Principal } from "../../lib/access";
import type { AuditChange } from "../../lib/audit";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import { DomainError, badRequest, notFound } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { TOKEN_SCOPES, type AuthContract, type TokenScope } from "./contract";
import { MSG } from "./messages";
import { placeOf } from "./places";
import type { AuthPort, AuthRequestPort } from "./port";
import * as repo from "./tokens.repo";
import type { TokenRow } from "./tokens.repo";
import { principalOf, updateRefusal, userPlace, userVisibleTo } from "./users";
import * as users from "./users.repo";
import type { UserRow } from "./users.repo";

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

export interface IssueParams {
  username: string;
  name: string;
  scope: TokenScope;
  expires_in_days: number;
}

/** The user whose tokens the path names, if the caller may manage them (else the users routes' refusal). */
async function ownerOfTokens(port: AuthRequestPort, username: string): Promise<UserRow> {
  const target = await users.findUser(port.db, username.toLowerCase());
  if (!target) throw notFound(MSG.userNotFound);
  const refusal = tokenRefusal(port.caller, target);
  if (refusal) throw refusal;
  return target;
}

export async function issueToken(port: AuthRequestPort, p: IssueParams): Promise<{ token_id: string; token: string }> {
  // A token that issued tokens could outlive its own expiry and revocation.
  if (port.token) throw new DomainError(403, MSG.unauthorizedOperation);
  const target = await ownerOfTokens(port, p.username);
  const token = generateToken();
  const created_at = Date.now();
  const token_id = newId();
  const expires_at = expiresAt(created_at, p.expires_in_days);
  // The entry names the token, never its secret or hash.
  const issued: AuditChange = {
    action: "token_issue",
    entity_type: "token",
    entity_id: token_id,
    ...userPlace(target),
    changes: { username: [null, target.username], name: [null, p.name], scope: [null, p.scope], expires_at: [null, new Date(expires_at).toISOString()] },
  };
  const inserted = await port.auditedWrite(
    (ok: boolean) => (ok ? issued : null),
    (db) =>
      repo.insertToken(db, {
        token_id,
        username: target.username,
        name: p.name,
        scope: p.scope,
        token_hash: tokenHash(token),
        created_at,
        expires_at,
        issued_by: port.caller.username,
      }),
  );
  if (!inserted) throw notFound(MSG.userNotFound);
  return { token_id, token };
}

export async function listTokens(port: AuthRequestPort, p: { username: string }): Promise<TokenView[]> {
  const target = await ownerOfTokens(port, p.username);
  return (await repo.listTokens(port.db, target.username)).map(tokenView);
}

export async function revokeToken(port: AuthRequestPort, p: { username: string; token_id: string }): Promise<string> {
  // The gateway refuses it already (refusesTokens); a call from another service carrying the meta is refused alike.
  if (port.token) throw new DomainError(403, MSG.unauthorizedOperation);
  const target = await ownerOfTokens(port, p.username);
  const token_id = p.token_id.toLowerCase();
  // An id of another user's token answers as an unknown one.
  const revokedEntry: AuditChange = { action: "token_revoke", entity_type: "token", entity_id: token_id, ...userPlace(target), changes: { username: [target.username, null] } };
  const revoked =
    isId(token_id) &&
    (await port.auditedWrite(
      (ok: boolean) => (ok ? revokedEntry : null),
      (db) => repo.deleteToken(db, target.username, token_id),
    ));
  if (!revoked) throw badRequest(MSG.invalidInput("token_id"), "token_id");
  // Before answering: the caller's next request finds no gateway replica still trusting the token.
  await port.credentialsChanged({ username: target.username, token_id });
  return MSG.tokenRevoked;
}

/** Whom a bearer token signs in; 401 `Invalid credentials` for any token that does not. */
export async function authenticateToken(port: AuthPort, p: ParamsOf<AuthContract, "tokens.authenticate">): Promise<ReplyOf<AuthContract, "tokens.authenticate">> {
  const { token } = p;
  // Unknown, revoked and expired answer alike, as a wrong password does.
  if (!looksLikeToken(token)) throw new DomainError(401, MSG.invalidCredentials);
  const found = await repo.findTokenSignIn(port.db, tokenHash(token));
  const now = Date.now();
  if (!found || !isLive(found, now)) throw new DomainError(401, MSG.invalidCredentials);
  if (dueForTouch(found, now)) await repo.touchToken(port.db, found.token_id, now, LAST_USED_EVERY_MS);
  return { principal: principalOf(found), token_id: found.token_id, scope: found.scope, expires_at: Number(found.expires_at), issued_by: found.issued_by };
}
