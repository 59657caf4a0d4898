/**
 * The gateway's own short cache of verified callers, so that a repeated request does not cross
 * to the auth service (over NATS, the largest single cost of a request: BENCHMARKS.md).
 *
 * Entries are keyed by the same keyed fingerprint auth uses (lib/credentials.ts, with this
 * process's secret), never the password, and live a few seconds at most. Auth broadcasts
 * `auth.credentials.changed` whenever a user's credentials or grants change; `forget` drops that
 * user's entries. A verification that was under way while such a change arrived is not stored,
 * since auth may have answered from the old row.
 */
import type { KeyObject } from "node:crypto";
import type { Principal } from "../../lib/access";
import { credentialFingerprint, newCredentialSecret } from "../../lib/credentials";

interface Entry {
  principal: Principal;
  expiresAt: number;
}

export class PrincipalCache {
  private readonly secret: KeyObject = newCredentialSecret();
  private readonly byUser = new Map<string, Map<string, Entry>>();
  private size = 0;
  private changes = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  fingerprint(username: string, password: string): string {
    return credentialFingerprint(this.secret, username, password);
  }

  /** A copy of the cached principal, so a caller that changes it cannot change the cache. */
  get(username: string, fingerprint: string): Principal | undefined {
    const entries = this.byUser.get(username);
    const entry = entries?.get(fingerprint);
    if (!entries || !entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.remove(username, entries, fingerprint);
      return undefined;
    }
    return { ...entry.principal, modules: [...entry.principal.modules] };
  }

  /** Taken before asking auth; `set` stores only if no user's credentials changed meanwhile. */
  mark(): number {
    return this.changes;
  }

  set(username: string, fingerprint: string, principal: Principal, mark: number): void {
    if (!this.enabled || mark !== this.changes) return;
    if (this.size >= this.maxEntries) this.dropExpired();
    // Still full: many distinct live credentials. Start over rather than track recency per hit.
    if (this.size >= this.maxEntries) this.clear();
    let entries = this.byUser.get(username);
    if (!entries) this.byUser.set(username, (entries = new Map()));
    if (!entries.has(fingerprint)) this.size++;
    entries.set(fingerprint, { principal: { ...principal, modules: [...principal.modules] }, expiresAt: this.now() + this.ttlMs });
  }

  /** Every entry of the user goes, and verifications under way are not stored. */
  forget(username: string): void {
    this.changes++;
    const entries = this.byUser.get(username);
    if (!entries) return;
    this.size -= entries.size;
    this.byUser.delete(username);
  }

  /** Everything goes: after a reconnection, when broadcasts may have been missed. */
  clear(): void {
    this.changes++;
    this.byUser.clear();
    this.size = 0;
  }

  private remove(username: string, entries: Map<string, Entry>, fingerprint: string): void {
    if (entries.delete(fingerprint)) this.size--;
    if (entries.size === 0) this.byUser.delete(username);
  }

  private dropExpired(): void {
    const now = this.now();
    for (const [username, entries] of this.byUser) {
      for (const [fingerprint, entry] of entries) if (entry.expiresAt <= now) this.remove(username, entries, fingerprint);
    }
  }
}
