/**
 * Internal: who the caller of an HTTP request is. A verified credential is cached under a keyed
 * fingerprint (never the password), so a request does not pay an argon2 hash each time.
 */
import type { Context } from "moleculer";
import type { Principal } from "../../lib/access";
import { stageAudit } from "../../lib/audit";
import { config } from "../../lib/config";
import { DomainError } from "../../lib/errors";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import type { AuthActions, AuthThis } from "./context";
import type { AuthContract } from "./contract";
import { MSG } from "./messages";
import { credentialFingerprint, verifyPassword } from "./passwords";
import * as repo from "./repo";
import { principalOf, type UserRow } from "./users";

/** The longest username and password `authenticate` will look at (a stored username is at most MAX_TEXT). */
const MAX_USERNAME = 320;
const MAX_PASSWORD = 1024;

/** The cache key of a user's verified credential; `*` as the fingerprint names them all. */
export const credentialKey = (username: string, fingerprint: string): string => `auth.credential:${username}:${fingerprint}`;

/**
 * Records a failed sign-in in the audit trail: the username it tried (or the token's user), never
 * the password or token. The entry is the whole change: its outbox row commits on its own. A
 * site admin's plant is its whole site (`*`): none in particular.
 */
export async function auditSignInFailure(self: AuthThis, ctx: Context, username: string, row: UserRow | undefined): Promise<void> {
  await stageAudit(self.streams, self.db, ctx, {
    action: "sign_in_failure",
    entity_type: "user",
    entity_id: username,
    site_id: row?.site_id ?? null,
    plant_id: row?.plant_id === "*" ? null : (row?.plant_id ?? null),
    actor: { username, user_type: row?.user_type ?? null },
  });
}

/** A failed sign-in: its audit entry, then 401 as for any wrong credentials. */
async function signInFailed(self: AuthThis, ctx: Context, username: string, row: UserRow | undefined): Promise<never> {
  await auditSignInFailure(self, ctx, username, row);
  throw new DomainError(401, MSG.invalidCredentials);
}

/** Whether a user row still grants what an earlier read of it granted: same password hash, same principal. */
const sameGrant = (before: UserRow, after: UserRow): boolean =>
  before.password_hash === after.password_hash && JSON.stringify(principalOf(before)) === JSON.stringify(principalOf(after));

export const credentialsActions: AuthActions = {
  /** Who the caller of an HTTP request is; 401 `Invalid credentials` otherwise. */
  authenticate: {
    visibility: "public",
    params: { username: "string", password: "string" },
    async handler(ctx: Context<ParamsOf<AuthContract, "authenticate">>): Promise<ReplyOf<AuthContract, "authenticate">> {
      // Too long to be anyone's: wrong credentials (contract), refused before any hash is paid for.
      if (ctx.params.username.length > MAX_USERNAME || ctx.params.password.length > MAX_PASSWORD) {
        return signInFailed(this, ctx, ctx.params.username.toLowerCase(), undefined);
      }
      const username = ctx.params.username.toLowerCase();
      const key = credentialKey(username, credentialFingerprint(this.credentialSecret, username, ctx.params.password));
      const cached = await this.cache.get<Principal>(key);
      if (cached) return cached;
      const row = await repo.findUser(this.db, username);
      if (!row || !(await verifyPassword(row.password_hash, ctx.params.password))) return signInFailed(this, ctx, username, row);
      await repo.touchLastLogin(this.db, username, Date.now());
      const principal = principalOf(row);
      if (!this.cache.enabled || config().authCacheTtlS <= 0) return principal;
      await this.cache.set(key, principal, config().authCacheTtlS);
      // A change committed while this request checked the old row has cleaned the cache before the set above:
      // read the row again, so that the old credential or grant is not cached past the change.
      const now = await repo.findUser(this.db, username);
      if (now && sameGrant(row, now)) return principal;
      await this.cache.del(key);
      if (!now || (now.password_hash !== row.password_hash && !(await verifyPassword(now.password_hash, ctx.params.password)))) {
        throw new DomainError(401, MSG.invalidCredentials);
      }
      return principalOf(now);
    },
  },
};
