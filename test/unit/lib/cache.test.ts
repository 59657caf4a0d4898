/** lib/cache.ts: the local cache's bound, groups, shared loads and the invalidation race; the shared cache without a cacher. */
import { LocalCache, SharedCache } from "../../../lib/cache";

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("LocalCache", () => {
  it("shares one load among concurrent misses, and serves its value afterwards", async () => {
    const cache = new LocalCache<number>({ ttlMs: 1000 });
    const gate = deferred<number>();
    let loads = 0;
    const load = () => {
      loads++;
      return gate.promise;
    };
    const both = Promise.all([cache.getOrLoad("k", load), cache.getOrLoad("k", load)]);
    gate.resolve(7);
    expect(await both).toEqual([7, 7]);
    expect(loads).toBe(1);
    expect(cache.get("k")).toBe(7);
  });

  it("does not store a load that an invalidation overtook, nor share it with later misses", async () => {
    const cache = new LocalCache<string>({ ttlMs: 1000 });
    const old = deferred<string>();
    const first = cache.getOrLoad("k", () => old.promise);
    cache.forget("other");
    const second = cache.getOrLoad("k", () => Promise.resolve("new"));
    old.resolve("old");
    expect(await first).toBe("old");
    expect(await second).toBe("new");
    expect(cache.get("k")).toBe("new");
  });

  it("keeps nothing of a failed load", async () => {
    const cache = new LocalCache<string>({ ttlMs: 1000 });
    await expect(cache.getOrLoad("k", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(await cache.getOrLoad("k", () => Promise.resolve("up"))).toBe("up");
  });

  it("caches null as a value, forgets by group and by predicate", () => {
    const cache = new LocalCache<{ id: string } | null>({ ttlMs: 1000 });
    cache.set("absent", null);
    expect(cache.get("absent")).toBeNull();
    cache.set(LocalCache.key("alice", "1"), { id: "a1" });
    cache.set(LocalCache.key("alice", "2"), { id: "a2" });
    cache.set(LocalCache.key("alice2", "1"), { id: "b1" });
    cache.forgetGroup("alice");
    expect(cache.get(LocalCache.key("alice", "1"))).toBeUndefined();
    expect(cache.get(LocalCache.key("alice", "2"))).toBeUndefined();
    expect(cache.get(LocalCache.key("alice2", "1"))).toEqual({ id: "b1" });
    cache.forgetWhere((v) => v?.id === "b1");
    expect(cache.get(LocalCache.key("alice2", "1"))).toBeUndefined();
    expect(cache.get("absent")).toBeNull();
  });

  it("expires entries and stores nothing with a zero time to live", () => {
    const clock = { now: 0 };
    const cache = new LocalCache<number>({ ttlMs: 100, now: () => clock.now });
    cache.set("k", 1);
    clock.now = 99;
    expect(cache.get("k")).toBe(1);
    clock.now = 100;
    expect(cache.get("k")).toBeUndefined();
    const off = new LocalCache<number>({ ttlMs: 0 });
    off.set("k", 1);
    expect(off.enabled).toBe(false);
    expect(off.get("k")).toBeUndefined();
  });
});

describe("SharedCache without a cacher", () => {
  it("reads through and stores nothing", async () => {
    const shared = new SharedCache({ cacher: undefined });
    expect(shared.enabled).toBe(false);
    expect(await shared.getOrLoad("k", 10, () => Promise.resolve(3))).toBe(3);
    await shared.set("k", 3, 10);
    expect(await shared.get("k")).toBeUndefined();
    expect(await shared.generation("g", 10, 1000).get()).toBe("");
  });
});
