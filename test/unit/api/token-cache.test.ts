/** The gateway's cache of verified API tokens: keyed by fingerprint, dropped per user, never served past the token's expiry. */
import type { Principal } from "../../../lib/access";
import type { VerifiedToken } from "../../../services/auth/contract";
import { TokenCache } from "../../../services/api/principals";

const alice: Principal = { username: "alice@example.com", user_type: "plant-admin", site_id: "s", plant_id: "p", modules: ["Configuration"] };
const TOKEN = "ims_0123456789abcdefghijABCDEFGHIJ_-klmnopqrs";

function cacheAt(ttlMs = 5000) {
  const clock = { now: 1000 };
  return { clock, cache: new TokenCache(ttlMs, 100, () => clock.now) };
}

const verified = (expires_at: number, principal = alice): VerifiedToken => ({ principal, token_id: "t1", scope: "read", expires_at, issued_by: null });

describe("TokenCache", () => {
  it("keys by a fingerprint that does not hold the token and differs per process", () => {
    const { cache } = cacheAt();
    const fp = cache.fingerprint(TOKEN);
    expect(fp).not.toContain(TOKEN.slice(4, 20));
    expect(fp).not.toBe(new TokenCache(5000).fingerprint(TOKEN));
  });

  it("serves a verification as a copy, until its time to live or the token's expiry, whichever comes first", () => {
    const { cache, clock } = cacheAt();
    const fp = cache.fingerprint(TOKEN);
    cache.set(fp, verified(clock.now + 2000), cache.mark());
    const hit = cache.get(fp)!;
    expect(hit).toEqual(verified(3000));
    hit.principal.modules.push("Alerting");
    expect(cache.get(fp)!.principal.modules).toEqual(["Configuration"]);
    clock.now += 1999;
    expect(cache.get(fp)).toBeDefined();
    clock.now += 1;
    expect(cache.get(fp)).toBeUndefined();

    cache.set(fp, verified(clock.now + 60_000), cache.mark());
    clock.now += 5000;
    expect(cache.get(fp)).toBeUndefined();
  });

  it("forgets the tokens of one user at once, and does not store a verification under way meanwhile", () => {
    const { cache, clock } = cacheAt();
    const bob = { ...alice, username: "bob@example.com" };
    const fpA = cache.fingerprint(TOKEN);
    const fpB = cache.fingerprint(`${TOKEN}b`);
    cache.set(fpA, verified(clock.now + 60_000), cache.mark());
    cache.set(fpB, verified(clock.now + 60_000, bob), cache.mark());
    const mark = cache.mark();
    cache.forget(alice.username);
    expect(cache.get(fpA)).toBeUndefined();
    expect(cache.get(fpB)).toBeDefined();
    cache.set(fpA, verified(clock.now + 60_000), mark);
    expect(cache.get(fpA)).toBeUndefined();
    cache.clear();
    expect(cache.get(fpB)).toBeUndefined();
  });

  it("stores nothing when turned off (AUTH_CACHE_TTL_S=0)", () => {
    const { cache, clock } = cacheAt(0);
    expect(cache.enabled).toBe(false);
    cache.set(cache.fingerprint(TOKEN), verified(clock.now + 60_000), cache.mark());
    expect(cache.get(cache.fingerprint(TOKEN))).toBeUndefined();
  });
});
