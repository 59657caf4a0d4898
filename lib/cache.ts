/**
 * The caches of every service, of two kinds (besides Moleculer's own action cache, `cache:` on
 * an action, which stays keyed as Moleculer keys it):
 *
 * - `LocalCache`: this process's memory, for what a hot path needs on every request (the
 *   gateway's verified callers, config's lists, the ingest path's keys and mappings). Bounded,
 *   with a time to live; a hit is a synchronous lookup, no copy. Whatever cached data a change
 *   invalidates is dropped on every replica by a broadcast the owner sends.
 * - `SharedCache`: the broker's cacher (Redis in a cluster, shared by every replica; memory in
 *   one process), for what is worth one round trip instead of a query or a hash. With no cacher
 *   it reads through. `SharedGeneration` puts a family of its entries out of reach at once.
 *
 * Invalidation races: a value loaded from a state that changed while it loaded must not be
 * stored. A LocalCache counts its invalidations; a load stores its value only if none happened
 * since it began (`mark`, taken by `getOrLoad` itself).
 */
import type { ServiceBroker } from "moleculer";
import { newId } from "./ids";

export interface LocalCacheOptions {
  /** How long an entry is served; 0 or less stores nothing. */
  ttlMs: number;
  /** Entries at most: past it the expired ones go, and if it is still full, all of them. */
  max?: number;
  /** The clock (tests). */
  now?: () => number;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/** Separates a group from the rest of a key: no username, id or hash contains it. */
const GROUP_END = "\u0000";

/** A value `undefined` is a miss: cache `null` for "known to be absent". */
export class LocalCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /** Loads under way, so that concurrent misses of one key wait for one load. */
  private readonly loading = new Map<string, Promise<V>>();
  private readonly ttlMs: number;
  private readonly max: number;
  private readonly now: () => number;
  private epoch = 0;

  constructor(opts: LocalCacheOptions) {
    this.ttlMs = opts.ttlMs;
    this.max = opts.max ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /** The key of `key` within `group`, so that `forgetGroup(group)` drops it with the rest of the group. */
  static key(group: string, key: string): string {
    return group + GROUP_END + key;
  }

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Taken before loading a value by other means than `getOrLoad`; `set` with it stores nothing if anything was forgotten since. */
  mark(): number {
    return this.epoch;
  }

  set(key: string, value: V, mark = this.epoch): void {
    if (this.ttlMs <= 0 || mark !== this.epoch) return;
    if (this.entries.size >= this.max && !this.entries.has(key)) this.evict();
    this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
  }

  /** The cached value, or the one `load` gives (a load already under way for the key is shared). */
  getOrLoad(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) return Promise.resolve(hit);
    const pending = this.loading.get(key);
    if (pending) return pending;
    const mark = this.epoch;
    const done = (): void => {
      if (this.loading.get(key) === loaded) this.loading.delete(key);
    };
    const loaded: Promise<V> = Promise.resolve()
      .then(load)
      .then(
        (value) => {
          done();
          this.set(key, value, mark);
          return value;
        },
        (err: unknown) => {
          done();
          throw err;
        },
      );
    this.loading.set(key, loaded);
    return loaded;
  }

  forget(key: string): void {
    this.invalidated();
    this.entries.delete(key);
  }

  /** Every entry whose key was made by `LocalCache.key(group, …)`. */
  forgetGroup(group: string): void {
    const prefix = group + GROUP_END;
    this.forgetWhere((_value, key) => key.startsWith(prefix));
  }

  forgetWhere(match: (value: V, key: string) => boolean): void {
    this.invalidated();
    for (const [key, entry] of this.entries) if (match(entry.value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.invalidated();
    this.entries.clear();
  }

  /** Loads under way may have read the old state: they are not stored, nor shared with later misses. */
  private invalidated(): void {
    this.epoch++;
    this.loading.clear();
  }

  /** Full: the expired entries go; still full (many live keys), all go rather than track recency on every hit. */
  private evict(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.clear();
  }
}

/**
 * The broker's cacher, typed, with values wrapped so that a cached `null` is a hit. Keys are the
 * caller's (`auth.credential:…`, `config.q.…`); `clean` takes the cacher's patterns (`*`, `**`),
 * which also reach Moleculer's action cache (`pipelines.resolve:**`).
 */
export class SharedCache {
  constructor(private readonly broker: Pick<ServiceBroker, "cacher">) {}

  get enabled(): boolean {
    return !!this.broker.cacher;
  }

  async get<T>(key: string): Promise<T | undefined> {
    const hit = (await this.broker.cacher?.get(key)) as { v: T } | null | undefined;
    return hit ? hit.v : undefined;
  }

  /** `ttlS` in seconds, as the cacher counts. */
  async set<T>(key: string, value: T, ttlS: number): Promise<void> {
    await this.broker.cacher?.set(key, { v: value }, ttlS);
  }

  async getOrLoad<T>(key: string, ttlS: number, load: () => Promise<T>): Promise<T> {
    const cacher = this.broker.cacher;
    if (!cacher) return load();
    const hit = (await cacher.get(key)) as { v: T } | null;
    if (hit) return hit.v;
    const value = await load();
    await cacher.set(key, { v: value }, ttlS);
    return value;
  }

  async del(key: string): Promise<void> {
    await this.broker.cacher?.del(key);
  }

  async clean(pattern: string): Promise<void> {
    await this.broker.cacher?.clean(pattern);
  }

  generation(key: string, ttlS: number, refreshMs: number): SharedGeneration {
    return new SharedGeneration(this, key, ttlS, refreshMs);
  }
}

/**
 * A family of shared entries made unreachable at once, on every replica: readers put the current
 * generation in their keys, and a write starts a new one. A read that began before the write and
 * stores its result after it stores it under the old generation, where nobody looks any more.
 *
 * Each replica keeps the generation in memory (a cached read is one round trip, not two) and
 * reads it again when told it changed (`reread`, on the owner's broadcast) and at least every
 * `refreshMs`, which bounds how long a broadcast lost while cut off from the bus can leave a
 * replica on an old generation. Without a cacher the generation is "" and nothing is cached.
 */
export class SharedGeneration {
  private current: Promise<string> | undefined;
  private readAt = 0;

  constructor(
    private readonly shared: SharedCache,
    private readonly key: string,
    /** A lost generation only costs a cold cache, so it need not live forever (nor leak per namespace). */
    private readonly ttlS: number,
    private readonly refreshMs: number,
  ) {}

  get(): Promise<string> {
    if (!this.shared.enabled) return Promise.resolve("");
    if (!this.current || Date.now() - this.readAt > this.refreshMs) this.reread();
    return this.current!;
  }

  /** Starts reading the generation (making one if there is none); requests meanwhile wait for it. */
  reread(): void {
    if (!this.shared.enabled) return;
    const reading = (async () => {
      const stored = await this.shared.get<string>(this.key);
      if (stored) return stored;
      const fresh = newId();
      await this.shared.set(this.key, fresh, this.ttlS);
      return fresh;
    })();
    this.current = reading;
    this.readAt = Date.now();
    // A failed read fails the requests waiting on it; the next request tries again.
    reading.catch(() => {
      if (this.current === reading) this.current = undefined;
    });
  }

  /** A new generation, in this replica's memory at once and stored for the others. */
  async renew(): Promise<string> {
    const fresh = newId();
    if (!this.shared.enabled) return fresh;
    this.current = Promise.resolve(fresh);
    this.readAt = Date.now();
    await this.shared.set(this.key, fresh, this.ttlS);
    return fresh;
  }
}
