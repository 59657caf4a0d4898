/**
 * Failed sign-in throttling and the OTP request limit (docs/security.md), as pure rules over a
 * store of timestamped events: Redis in a cluster, so that every api replica counts the same
 * failures (lib/throttle-redis.ts), this process's memory in the embedded default
 * (`MemoryThrottleStore`). The clock is the caller's, so a test moves time instead of waiting.
 *
 * Sign-in rules, each over the last 15 minutes (a sliding window of failures, not buckets):
 * - 5 failures for one username from one client address: that username from that address is
 *   refused, right password or not, until 15 minutes after the last failure;
 * - 100 failures from one address, any usernames: that address alike;
 * - 20 failures for one username from any addresses (a guess spread over many): that username
 *   is refused from every address it has never signed in from successfully, so a stranger
 *   cannot lock its owner out of the addresses the owner uses, and the owner is told by email.
 * A refused request is not a failure: nothing is counted while a lock holds, so a lock lapses
 * 15 minutes after the failure that made it. IPv6 clients are counted by their /64 network,
 * which one subscriber usually holds whole.
 */
import { isIP } from "node:net";
import { DomainError } from "./errors";

export const THROTTLED_MESSAGE = "Too many failed attempts. Try again later.";

/** The 429 of an operation called more often than it allows (its declaration's `rateLimit`, lib/operations.ts). */
export const TOO_MANY_REQUESTS = "Too many requests";

/** The 429 of a throttled caller; the gateway sends `retry_after_s` as `Retry-After` (it crosses the bus in the error's data). */
export function throttledError(retryAfterS: number, message = THROTTLED_MESSAGE): DomainError {
  const err = new DomainError(429, message);
  err.data = { retry_after_s: retryAfterS };
  return err;
}

/** The seconds a 429 asks the caller to wait, as `throttledError` put them. */
export function retryAfterOf(err: unknown): number | undefined {
  const value = (err as { data?: { retry_after_s?: unknown } } | null)?.data?.retry_after_s;
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.ceil(value) : undefined;
}

export const THROTTLE_WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_USER_AND_ADDRESS = 5;
export const MAX_FAILURES_PER_ADDRESS = 100;
/** Failures of one username from all addresses after which addresses it never signed in from are refused. */
export const MAX_FAILURES_PER_USER = 20;
export const MAX_OTP_REQUESTS_PER_EMAIL = 3;
/** How long a successful sign-in makes its address one the user "signs in from", and how many such addresses are kept. */
export const KNOWN_ADDRESS_TTL_MS = 90 * 24 * 3600_000;
export const KNOWN_ADDRESSES_PER_USER = 32;
/** No username is longer (auth refuses longer ones): a longer name is counted under its first 320 characters. */
const MAX_USERNAME = 320;

/** The newest event of a key (0 when none), and how many lie within the window that ends at it. */
export interface Tally {
  count: number;
  last: number;
}

/** A refusal of `take`: the oldest of the events that fill the window. */
export type Taken = { taken: true } | { taken: false; oldest: number };

/**
 * Timestamped events under keys, sets of remembered members, and once-per-period flags. Every
 * instant is given by the caller (epoch ms); keys are the throttle's own (the store adds its prefix).
 */
export interface ThrottleStore {
  /**
   * Each key's newest event and the events within `windowMs` up to it: a lock made by the
   * failure that reached a limit holds a window after the last failure, though the first ones
   * leave a window ending now.
   */
  tally(keys: readonly string[], windowMs: number): Promise<Tally[]>;
  /** Records one event at `at` under each key, forgetting those a window older, then tallies each. */
  record(keys: readonly string[], at: number, windowMs: number): Promise<Tally[]>;
  /** Records one event under `key` only while fewer than `limit` lie within the window ending at `at`; atomic, so parallel takes never pass the limit. */
  take(key: string, at: number, windowMs: number, limit: number): Promise<Taken>;
  /** Whether `member` was remembered under `key` at or after `since`. */
  has(key: string, member: string, since: number): Promise<boolean>;
  /** Remembers `member` under `key` at `at`, for `ttlMs`; the `max` newest members are kept. */
  remember(key: string, member: string, at: number, ttlMs: number, max: number): Promise<void>;
  /** Sets the flag `key` until `at + ttlMs` unless it is set: true when this call set it. */
  claim(key: string, at: number, ttlMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The address a throttle counts: IPv4 as it stands, IPv6 by its /64 (`2001:db8:1:2::/64`).
 * "" (an address the socket no longer knows) is counted as one address, `unknown`.
 */
export function addressKey(address: string): string {
  if (isIP(address) !== 6) return address || "unknown";
  const [head = "", tail] = address.split("::");
  const left = head ? head.split(":") : [];
  const right = tail === undefined ? [] : tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g || "0", 16) || 0).toString(16))
    .join(":")}::/64`;
}

const userKey = (username: string): string => username.toLowerCase().slice(0, MAX_USERNAME);

/** The store keys of a sign-in's counters. */
export const signInKeys = (username: string | null, address: string) => {
  const a = addressKey(address);
  const u = username === null ? null : userKey(username);
  return {
    address: `f:a:${a}`,
    userAddress: u === null ? null : `f:ua:${u}|${a}`,
    user: u === null ? null : `f:u:${u}`,
    known: u === null ? null : `known:${u}`,
    notice: u === null ? null : `notice:${u}`,
    member: a,
  };
};

/** The counters of one sign-in as read from the store. */
export interface SignInTallies {
  userAddress?: Tally;
  address: Tally;
  user?: Tally;
  /** The user has signed in successfully from this address before. */
  known: boolean;
}

/** Until when a sign-in with these counters is refused (epoch ms); 0: it is not. */
export function lockedUntil(t: SignInTallies, windowMs = THROTTLE_WINDOW_MS): number {
  let until = 0;
  const lock = (tally: Tally | undefined, limit: number) => {
    if (tally && tally.count >= limit) until = Math.max(until, tally.last + windowMs);
  };
  lock(t.userAddress, MAX_FAILURES_PER_USER_AND_ADDRESS);
  lock(t.address, MAX_FAILURES_PER_ADDRESS);
  if (!t.known) lock(t.user, MAX_FAILURES_PER_USER);
  return until;
}

/** `Retry-After` in whole seconds, at least 1. */
export const retryAfterS = (until: number, now: number): number => Math.max(1, Math.ceil((until - now) / 1000));

/** What a failure started: the locks whose limit this very failure reached. */
export type Lockout = "user-address" | "address" | "user";

export type SignInVerdict = { allowed: true } | { allowed: false; retryAfterS: number };

export interface ThrottleOptions {
  windowMs?: number;
  now?: () => number;
}

export class SignInThrottle {
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: ThrottleStore,
    opts: ThrottleOptions = {},
  ) {
    this.windowMs = opts.windowMs ?? THROTTLE_WINDOW_MS;
    this.now = opts.now ?? Date.now;
  }

  /** Whether a sign-in of `username` (null: a token, whose user is not known yet) from `address` may be tried at all. */
  async check(username: string | null, address: string): Promise<SignInVerdict> {
    const now = this.now();
    const keys = signInKeys(username, address);
    const names = [keys.address, ...(keys.userAddress && keys.user ? [keys.userAddress, keys.user] : [])];
    const [tallies, known] = await Promise.all([
      this.store.tally(names, this.windowMs),
      // Only worth asking when the user's spread counter could matter.
      keys.known ? this.store.has(keys.known, keys.member, now - KNOWN_ADDRESS_TTL_MS) : Promise.resolve(false),
    ]);
    const until = lockedUntil({ address: tallies[0]!, userAddress: tallies[1], user: tallies[2], known }, this.windowMs);
    return until > now ? { allowed: false, retryAfterS: retryAfterS(until, now) } : { allowed: true };
  }

  /** Counts a failed sign-in; answers the locks this failure started (each is started by exactly one failure). */
  async failed(username: string | null, address: string): Promise<Lockout[]> {
    const now = this.now();
    const keys = signInKeys(username, address);
    const names = [keys.address, ...(keys.userAddress && keys.user ? [keys.userAddress, keys.user] : [])];
    const [perAddress, userAddress, user] = await this.store.record(names, now, this.windowMs);
    const lockouts: Lockout[] = [];
    if (userAddress?.count === MAX_FAILURES_PER_USER_AND_ADDRESS) lockouts.push("user-address");
    if (perAddress?.count === MAX_FAILURES_PER_ADDRESS) lockouts.push("address");
    if (user?.count === MAX_FAILURES_PER_USER) lockouts.push("user");
    return lockouts;
  }

  /** A successful sign-in: the address becomes one the user signs in from. */
  async succeeded(username: string, address: string): Promise<void> {
    const keys = signInKeys(username, address);
    await this.store.remember(keys.known!, keys.member, this.now(), KNOWN_ADDRESS_TTL_MS, KNOWN_ADDRESSES_PER_USER);
  }

  /** True once per window per user: whether this lock is the one to tell the user about. */
  async firstNotice(username: string): Promise<boolean> {
    return this.store.claim(signInKeys(username, "").notice!, this.now(), this.windowMs);
  }
}

/** "At most `limit` per `windowMs`" for one key (OTP requests per email). */
export class RequestLimit {
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: ThrottleStore,
    private readonly prefix: string,
    private readonly limit: number,
    opts: ThrottleOptions = {},
  ) {
    this.windowMs = opts.windowMs ?? THROTTLE_WINDOW_MS;
    this.now = opts.now ?? Date.now;
  }

  /** Counts one request, or refuses it (not counted) with the seconds until the oldest counted one leaves the window. */
  async take(key: string): Promise<SignInVerdict> {
    const now = this.now();
    const taken = await this.store.take(`${this.prefix}:${userKey(key)}`, now, this.windowMs, this.limit);
    return taken.taken ? { allowed: true } : { allowed: false, retryAfterS: retryAfterS(taken.oldest + this.windowMs, now) };
  }
}

/** Keys at most in a memory store; past it expired keys go, then the oldest written. */
const MEMORY_MAX_KEYS = 100_000;

/**
 * The store of one process (the embedded default, or a cluster without Redis, where each api
 * replica then counts on its own). Bounded: an attacker inventing usernames cannot grow it
 * past MEMORY_MAX_KEYS.
 */
export class MemoryThrottleStore implements ThrottleStore {
  private readonly events = new Map<string, { at: number[]; expiresAt: number }>();
  private readonly sets = new Map<string, Map<string, number>>();
  private readonly flags = new Map<string, number>();

  constructor(private readonly maxKeys = MEMORY_MAX_KEYS) {}

  tally(keys: readonly string[], windowMs: number): Promise<Tally[]> {
    return Promise.resolve(keys.map((key) => this.tallyOf(key, windowMs)));
  }

  record(keys: readonly string[], at: number, windowMs: number): Promise<Tally[]> {
    for (const key of keys) this.add(this.fresh(key, at - windowMs + 1, at), at, windowMs);
    return this.tally(keys, windowMs);
  }

  take(key: string, at: number, windowMs: number, limit: number): Promise<Taken> {
    const entry = this.fresh(key, at - windowMs + 1, at);
    if (entry.at.length >= limit) return Promise.resolve({ taken: false, oldest: entry.at[0]! });
    this.add(entry, at, windowMs);
    return Promise.resolve({ taken: true });
  }

  has(key: string, member: string, since: number): Promise<boolean> {
    const at = this.sets.get(key)?.get(member);
    return Promise.resolve(at !== undefined && at >= since);
  }

  remember(key: string, member: string, at: number, _ttlMs: number, max: number): Promise<void> {
    let set = this.sets.get(key);
    if (!set) {
      if (this.sets.size >= this.maxKeys) this.sets.delete(this.sets.keys().next().value!);
      set = new Map();
      this.sets.set(key, set);
    }
    set.delete(member);
    set.set(member, at);
    // Insertion order is age: the first are the oldest.
    while (set.size > max) set.delete(set.keys().next().value!);
    return Promise.resolve();
  }

  claim(key: string, at: number, ttlMs: number): Promise<boolean> {
    const until = this.flags.get(key);
    if (until !== undefined && until > at) return Promise.resolve(false);
    if (this.flags.size >= this.maxKeys) {
      for (const [k, u] of this.flags) if (u <= at) this.flags.delete(k);
      if (this.flags.size >= this.maxKeys) this.flags.clear();
    }
    this.flags.set(key, at + ttlMs);
    return Promise.resolve(true);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private tallyOf(key: string, windowMs: number): Tally {
    const all = this.events.get(key)?.at ?? [];
    const last = all.length ? all[all.length - 1]! : 0;
    return { count: all.filter((t) => t > last - windowMs).length, last };
  }

  private add(entry: { at: number[]; expiresAt: number }, at: number, windowMs: number): void {
    entry.at.push(at);
    entry.at.sort((x, y) => x - y);
    entry.expiresAt = Math.max(entry.expiresAt, at + windowMs);
  }

  /** The key's events from `since` on (older ones dropped), made when missing. */
  private fresh(key: string, since: number, now: number): { at: number[]; expiresAt: number } {
    let entry = this.events.get(key);
    if (!entry) {
      if (this.events.size >= this.maxKeys) this.sweep(now);
      entry = { at: [], expiresAt: now };
      this.events.set(key, entry);
    }
    entry.at = entry.at.filter((t) => t >= since);
    return entry;
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.events) if (entry.expiresAt <= now) this.events.delete(key);
    // Still full: the oldest written go, a tenth at a time.
    let drop = this.events.size >= this.maxKeys ? Math.ceil(this.maxKeys / 10) : 0;
    for (const key of this.events.keys()) {
      if (drop-- <= 0) break;
      this.events.delete(key);
    }
  }
}
