/**
 * The cache of verified credentials (credentials.ts fills it): dropped on every replica whenever a
 * user's password, type, place or modules change, or the user is deleted.
 */
import type { CredentialsChanged } from "./contract";
import type { AuthPort } from "./port";

/** The cache key of a user's verified credential; `*` as the fingerprint names them all. */
export const credentialKey = (username: string, fingerprint: string): string => `auth.credential:${username}:${fingerprint}`;

/**
 * Drops every cached credential of a user: called whenever password, type, scope or modules
 * change, and on delete. It is broadcast before the operation answers, so the caller's next
 * request finds no replica still holding the old credential.
 */
export async function forgetCredentials(port: AuthPort, username: string): Promise<void> {
  const name = username.toLowerCase();
  await port.cache.clean(credentialKey(name, "*"));
  await port.credentialsChanged({ username: name });
}

/**
 * Another auth replica changed a user's credentials: with a memory cacher (no REDIS_URL) each
 * replica holds verifications of its own, which must go too. With Redis this cleans what the
 * sender already cleaned.
 */
export async function credentialsChangedElsewhere(port: AuthPort, change: CredentialsChanged): Promise<void> {
  // A revoked token: auth caches no token verification, and the user's password stands.
  if (change.token_id !== undefined) return;
  await port.cache.clean(credentialKey(change.username, "*"));
}
