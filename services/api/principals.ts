/**
 * The gateway's own short cache of verified callers, so that a repeated request does not cross
 * to the auth service (over NATS, the largest single cost of a request: docs/benchmarks.md, bench:api).
 *
 * Entries are keyed by the same keyed fingerprint auth uses (lib/credentials.ts, with this
 * process's secret), never the password, and live a few seconds at most. Auth broadcasts
 * `auth.credentials.changed` whenever a user's credentials or grants change; `forget` drops that
 * user's entries. A verification that was under way while such a change arrived is not stored,
 * since auth may have answered from the old row.
 */
import type { KeyObject } from "node:crypto";
import type { Principal } from "../../lib/access";
import { LocalCache } from "../../lib/cache";
import { credentialFingerprint, newCredentialSecret } from "../../lib/credentials";
import type { VerifiedToken } from "../auth/contract";

/** A copy, so that a caller that changes a principal cannot change the cache. */
const copyOf = (p: Principal): Principal => ({ ...p, modules: [...p.modules] });

/** Entries are grouped by user (`LocalCache.key(username, fingerprint)`), so that a user's change drops them all. */
export class PrincipalCache {
  private readonly secret: KeyObject = newCredentialSecret();
  private readonly cache: LocalCache<Principal>;

  constructor(ttlMs: number, maxEntries = 10_000, now: () => number = Date.now) {
    this.cache = new LocalCache({ ttlMs, max: maxEntries, now });
  }

  get enabled(): boolean {
    return this.cache.enabled;
  }

  /**
   * The address is part of the key: a hit means this very client proved this password a moment
   * ago, so a hit may skip the sign-in throttle (a lock drops the user's entries: api.signin.locked).
   */
  fingerprint(username: string, password: string, address = ""): string {
    return credentialFingerprint(this.secret, `${username}\0${address}`, password);
  }

  /** A copy of the cached principal. */
  get(username: string, fingerprint: string): Principal | undefined {
    const hit = this.cache.get(LocalCache.key(username, fingerprint));
    return hit && copyOf(hit);
  }

  /** Taken before asking auth; `set` stores only if no user's credentials changed meanwhile. */
  mark(): number {
    return this.cache.mark();
  }

  set(username: string, fingerprint: string, principal: Principal, mark: number): void {
    this.cache.set(LocalCache.key(username, fingerprint), copyOf(principal), mark);
  }

  /** Every entry of the user goes, and verifications under way are not stored. */
  forget(username: string): void {
    this.cache.forgetGroup(username);
  }

  /** Everything goes: after a reconnection, when broadcasts may have been missed. */
  clear(): void {
    this.cache.clear();
  }
}

/**
 * The gateway's short cache of verified API tokens, under the same rules as PrincipalCache: keyed
 * by a keyed fingerprint (never the token), a few seconds at most, dropped for a user on auth's
 * `auth.credentials.changed` (a token revoked, or its user changed or deleted), and never served
 * past the token's own expiry.
 */
export class TokenCache {
  private readonly secret: KeyObject = newCredentialSecret();
  private readonly cache: LocalCache<VerifiedToken>;

  constructor(
    ttlMs: number,
    maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new LocalCache({ ttlMs, max: maxEntries, now });
  }

  get enabled(): boolean {
    return this.cache.enabled;
  }

  fingerprint(token: string): string {
    return credentialFingerprint(this.secret, "bearer", token);
  }

  /** A copy of the cached verification, if the token has not expired since. */
  get(fingerprint: string): VerifiedToken | undefined {
    const hit = this.cache.get(fingerprint);
    if (!hit || hit.expires_at <= this.now()) return undefined;
    return { ...hit, principal: copyOf(hit.principal) };
  }

  mark(): number {
    return this.cache.mark();
  }

  set(fingerprint: string, verified: VerifiedToken, mark: number): void {
    this.cache.set(fingerprint, { ...verified, principal: copyOf(verified.principal) }, mark);
  }

  /** Every token of the user goes (few entries: a scan on a change is cheaper than an index on every hit). */
  forget(username: string): void {
    this.cache.forgetWhere((v) => v.principal.username === username);
  }

  clear(): void {
    this.cache.clear();
  }
}
