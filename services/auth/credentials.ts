/**
 * Who the caller of an HTTP request is (the gateway's `authenticate`). A verified credential is
 * cached under a keyed fingerprint (never the password; credential-cache.ts), so a request does
 * not pay an argon2 hash each time.
 */
import type { Principal } from "../../lib/access";
import { config } from "../../lib/config";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import { DomainError } from "../../lib/errors";
import type { AuthContract } from "./contract";
import { credentialKey } from "./credential-cache";
import { MSG } from "./messages";
import { credentialFingerprint, verifyPassword } from "./passwords";
import type { AuthPort } from "./port";
import { principalOf } from "./users";
import * as usersRepo from "./users.repo";
import type { UserRow } from "./users.repo";

/** The longest username and password `authenticate` will look at (a stored username is at most MAX_TEXT). */
const MAX_USERNAME = 320;
const MAX_PASSWORD = 1024;

/**
 * Records a failed sign-in in the audit trail: the username it tried (or the token's user), never
 * the password or token. The entry is the whole change: its outbox row commits on its own. A
 * site admin's plant is its whole site (`*`): none in particular.
 */
async function auditSignInFailure(port: AuthPort, username: string, row: UserRow | undefined): Promise<void> {
  await port.stageAudit(port.db, {
    action: "sign_in_failure",
    entity_type: "user",
    entity_id: username,
    site_id: row?.site_id ?? null,
    plant_id: row?.plant_id === "*" ? null : (row?.plant_id ?? null),
    actor: { username, user_type: row?.user_type ?? null },
  });
}

/** A failed sign-in: its audit entry, then 401 as for any wrong credentials. */
async function signInFailed(port: AuthPort, username: string, row: UserRow | undefined): Promise<never> {
  await auditSignInFailure(port, username, row);
  throw new DomainError(401, MSG.invalidCredentials);
}

/** Whether a user row still grants what an earlier read of it granted: same password hash, same principal. */
const sameGrant = (before: UserRow, after: UserRow): boolean =>
  before.password_hash === after.password_hash && JSON.stringify(principalOf(before)) === JSON.stringify(principalOf(after));

/** Who the caller of an HTTP request is; 401 `Invalid credentials` otherwise. */
export async function authenticate(port: AuthPort, p: ParamsOf<AuthContract, "authenticate">): Promise<ReplyOf<AuthContract, "authenticate">> {
  // Too long to be anyone's: wrong credentials (contract), refused before any hash is paid for.
  if (p.username.length > MAX_USERNAME || p.password.length > MAX_PASSWORD) {
    return signInFailed(port, p.username.toLowerCase(), undefined);
  }
  const username = p.username.toLowerCase();
  const key = credentialKey(username, credentialFingerprint(port.credentialSecret, username, p.password));
  const cached = await port.cache.get<Principal>(key);
  if (cached) return cached;
  const row = await usersRepo.findUser(port.db, username);
  if (!row || !(await verifyPassword(row.password_hash, p.password))) return signInFailed(port, username, row);
  await usersRepo.touchLastLogin(port.db, username, Date.now());
  const principal = principalOf(row);
  if (!port.cache.enabled || config().authCacheTtlS <= 0) return principal;
  await port.cache.set(key, principal, config().authCacheTtlS);
  // A change committed while this request checked the old row has cleaned the cache before the set above:
  // read the row again, so that the old credential or grant is not cached past the change.
  const now = await usersRepo.findUser(port.db, username);
  if (now && sameGrant(row, now)) return principal;
  await port.cache.del(key);
  if (!now || (now.password_hash !== row.password_hash && !(await verifyPassword(now.password_hash, p.password)))) {
    throw new DomainError(401, MSG.invalidCredentials);
  }
  return principalOf(now);
}
