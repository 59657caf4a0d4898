/** The gateway's cache of verified callers: keyed by fingerprint, short-lived, dropped per user, never stale past a change. */
import type { Principal } from "../../../lib/access";
import { PrincipalCache } from "../../../services/api/principals";

const alice: Principal = { username: "alice@example.com", user_type: "plant-admin", site_id: "s", plant_id: "p", modules: ["Configuration"] };

function cacheAt(ttlMs = 5000, max = 100) {
  const clock = { now: 1000 };
  return { clock, cache: new PrincipalCache(ttlMs, max, () => clock.now) };
}

describe("PrincipalCache", () => {
  it("keys by a fingerprint that holds neither the password nor the same value for another password", () => {
    const { cache } = cacheAt();
    const fp = cache.fingerprint(alice.username, "Secret123x");
    expect(fp).not.toContain("Secret123x");
    expect(fp).not.toBe(cache.fingerprint(alice.username, "Secret123y"));
    expect(fp).not.toBe(new PrincipalCache(5000).fingerprint(alice.username, "Secret123x"));
  });

  it("serves a stored principal until it expires, as a copy", () => {
    const { cache, clock } = cacheAt();
    const fp = cache.fingerprint(alice.username, "pw");
    cache.set(alice.username, fp, alice, cache.mark());
    const hit = cache.get(alice.username, fp)!;
    expect(hit).toEqual(alice);
    hit.modules.push("Alerting");
    expect(cache.get(alice.username, fp)).toEqual(alice);
    expect(cache.get(alice.username, cache.fingerprint(alice.username, "other"))).toBeUndefined();
    clock.now += 5000;
    expect(cache.get(alice.username, fp)).toBeUndefined();
  });

  it("forgets every entry of a user at once, and only that user's", () => {
    const { cache } = cacheAt();
    const bob = { ...alice, username: "bob@example.com" };
    const fp1 = cache.fingerprint(alice.username, "old");
    const fp2 = cache.fingerprint(alice.username, "new");
    const fpBob = cache.fingerprint(bob.username, "pw");
    for (const [p, fp] of [[alice, fp1], [alice, fp2], [bob, fpBob]] as const) cache.set(p.username, fp, p, cache.mark());
    cache.forget(alice.username);
    expect(cache.get(alice.username, fp1)).toBeUndefined();
    expect(cache.get(alice.username, fp2)).toBeUndefined();
    expect(cache.get(bob.username, fpBob)).toEqual(bob);
  });

  it("does not store a verification that was under way when a change arrived", () => {
    const { cache } = cacheAt();
    const fp = cache.fingerprint(alice.username, "pw");
    const mark = cache.mark();
    cache.forget("someone@example.com");
    cache.set(alice.username, fp, alice, mark);
    expect(cache.get(alice.username, fp)).toBeUndefined();
  });

  it("stores nothing with a zero time to live", () => {
    const { cache } = cacheAt(0);
    const fp = cache.fingerprint(alice.username, "pw");
    cache.set(alice.username, fp, alice, cache.mark());
    expect(cache.enabled).toBe(false);
    expect(cache.get(alice.username, fp)).toBeUndefined();
  });

  it("stays within its bound, dropping expired entries first", () => {
    const { cache, clock } = cacheAt(5000, 3);
    const put = (name: string) => cache.set(name, cache.fingerprint(name, "pw"), { ...alice, username: name }, cache.mark());
    const has = (name: string) => cache.get(name, cache.fingerprint(name, "pw")) !== undefined;
    put("a");
    clock.now += 3000;
    put("b");
    put("c");
    clock.now += 2500; // a has expired, b and c have not
    put("d");
    expect([has("a"), has("b"), has("c"), has("d")]).toEqual([false, true, true, true]);
    put("e"); // full of live entries: starts over
    expect([has("b"), has("c"), has("d"), has("e")]).toEqual([false, false, false, true]);
  });
});
