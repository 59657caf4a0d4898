/**
 * The sign-in throttle's rules and the OTP request limit (lib/throttle.ts), moved through time
 * by a test clock, over both stores: this process's memory and the machine's Redis (the store a
 * cluster shares), which must answer alike.
 */
import { randomBytes } from "node:crypto";
import Redis from "ioredis";
import {
  addressKey,
  lockedUntil,
  MAX_FAILURES_PER_ADDRESS,
  MAX_FAILURES_PER_USER,
  MemoryThrottleStore,
  RequestLimit,
  retryAfterOf,
  SignInThrottle,
  THROTTLE_WINDOW_MS,
  THROTTLED_MESSAGE,
  throttledError,
  type ThrottleStore,
} from "../../../lib/throttle";
import { RedisThrottleStore } from "../../../lib/throttle-redis";
import { REDIS_URL } from "../../helpers/cluster";

const MIN = 60_000;

describe("addressKey", () => {
  it("counts IPv4 addresses one by one and IPv6 clients by their /64", () => {
    expect(addressKey("203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8:1:2:bbbb:cccc:dddd:eeee")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
    expect(addressKey("")).toBe("unknown");
  });
});

describe("lockedUntil", () => {
  const none = { count: 0, last: 0 };
  it("locks at the limit, until a window after the last failure", () => {
    expect(lockedUntil({ address: none, userAddress: { count: 4, last: 100 }, user: none, known: false })).toBe(0);
    expect(lockedUntil({ address: none, userAddress: { count: 5, last: 100 }, user: none, known: false })).toBe(100 + THROTTLE_WINDOW_MS);
    expect(lockedUntil({ address: { count: MAX_FAILURES_PER_ADDRESS, last: 7 }, known: false })).toBe(7 + THROTTLE_WINDOW_MS);
  });
  it("lets a known address through a username's spread lock, not through its own", () => {
    const spread = { count: MAX_FAILURES_PER_USER, last: 50 };
    expect(lockedUntil({ address: none, userAddress: none, user: spread, known: false })).toBe(50 + THROTTLE_WINDOW_MS);
    expect(lockedUntil({ address: none, userAddress: none, user: spread, known: true })).toBe(0);
    expect(lockedUntil({ address: none, userAddress: { count: 5, last: 60 }, user: spread, known: true })).toBe(60 + THROTTLE_WINDOW_MS);
  });
});

describe("throttledError", () => {
  it("is the sign-in throttle's 429 with its wait, which survives the bus as data", () => {
    const err = throttledError(42);
    expect(err.code).toBe(429);
    expect(err.message).toBe(THROTTLED_MESSAGE);
    expect(retryAfterOf(JSON.parse(JSON.stringify({ ...err, message: err.message })))).toBe(42);
    expect(retryAfterOf(new Error("x"))).toBeUndefined();
  });
});

const redisPrefix = `test-throttle-${randomBytes(4).toString("hex")}:`;
const stores: [string, () => ThrottleStore][] = [
  ["memory", () => new MemoryThrottleStore()],
  ["redis", () => new RedisThrottleStore(REDIS_URL, `${redisPrefix}${randomBytes(3).toString("hex")}:`)],
];

afterAll(async () => {
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${redisPrefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

describe.each(stores)("SignInThrottle over the %s store", (_name, open) => {
  let store: ThrottleStore;
  let clock: { now: number };
  let throttle: SignInThrottle;
  beforeEach(() => {
    store = open();
    clock = { now: Date.UTC(2030, 0, 1) };
    throttle = new SignInThrottle(store, { now: () => clock.now });
  });
  afterEach(() => store.close());

  it("locks a username at one address after 5 failures, for 15 minutes after the last, and that address only", async () => {
    for (let i = 1; i <= 5; i++) {
      expect(await throttle.check("ann@example.com", "10.0.0.1")).toEqual({ allowed: true });
      expect(await throttle.failed("ann@example.com", "10.0.0.1")).toEqual(i === 5 ? ["user-address"] : []);
      clock.now += MIN;
    }
    // Five minutes after the first failure, eleven minutes of the lock remain (15 after the fifth, a minute ago).
    expect(await throttle.check("ann@example.com", "10.0.0.1")).toEqual({ allowed: false, retryAfterS: 14 * 60 });
    expect(await throttle.check("ANN@example.com", "10.0.0.1")).toMatchObject({ allowed: false });
    expect(await throttle.check("ann@example.com", "10.0.0.2")).toEqual({ allowed: true });
    expect(await throttle.check("bob@example.com", "10.0.0.1")).toEqual({ allowed: true });
    clock.now += 14 * MIN - 1000;
    expect(await throttle.check("ann@example.com", "10.0.0.1")).toEqual({ allowed: false, retryAfterS: 1 });
    clock.now += 1000;
    expect(await throttle.check("ann@example.com", "10.0.0.1")).toEqual({ allowed: true });
  });

  it("counts failures within a sliding 15 minutes, not forever", async () => {
    for (let i = 0; i < 8; i++) {
      await throttle.failed("cy@example.com", "10.0.0.3");
      clock.now += 4 * MIN;
    }
    // Failures 4 minutes apart: never 5 within 15 minutes.
    expect(await throttle.check("cy@example.com", "10.0.0.3")).toEqual({ allowed: true });
  });

  it("locks an address after 100 failures, whatever the usernames", async () => {
    for (let i = 0; i < MAX_FAILURES_PER_ADDRESS - 1; i++) expect(await throttle.failed(`u${i}@example.com`, "10.0.0.4")).toEqual([]);
    expect(await throttle.failed("last@example.com", "10.0.0.4")).toEqual(["address"]);
    expect(await throttle.check("anyone@example.com", "10.0.0.4")).toMatchObject({ allowed: false });
    // Tokens, whose user is not known before they are checked, are counted and refused by address alone.
    expect(await throttle.check(null, "10.0.0.4")).toMatchObject({ allowed: false });
    expect(await throttle.check(null, "10.0.0.5")).toEqual({ allowed: true });
  });

  it("slows a guess spread over many addresses, without locking the owner out of an address it used", async () => {
    await throttle.succeeded("dee@example.com", "192.0.2.10");
    const lockouts = [];
    for (let i = 0; i < MAX_FAILURES_PER_USER; i++) lockouts.push(...(await throttle.failed("dee@example.com", `198.51.100.${i}`)));
    expect(lockouts).toEqual(["user"]);
    expect(await throttle.check("dee@example.com", "203.0.113.99")).toMatchObject({ allowed: false });
    expect(await throttle.check("dee@example.com", "192.0.2.10")).toEqual({ allowed: true });
    clock.now += THROTTLE_WINDOW_MS;
    expect(await throttle.check("dee@example.com", "203.0.113.99")).toEqual({ allowed: true });
  });

  it("tells the owner once per window", async () => {
    expect(await throttle.firstNotice("eve@example.com")).toBe(true);
    expect(await throttle.firstNotice("eve@example.com")).toBe(false);
    expect(await throttle.firstNotice("fay@example.com")).toBe(true);
  });

  it("never loses a count when failures arrive at once", async () => {
    const all = await Promise.all(Array.from({ length: 12 }, () => throttle.failed("gus@example.com", "10.0.0.6")));
    expect(all.flat()).toEqual(["user-address"]);
  });
});

describe.each(stores)("RequestLimit over the %s store", (_name, open) => {
  it("takes 3 per key in 15 minutes, refuses the rest without counting them, even at once", async () => {
    const store = open();
    const clock = { now: Date.UTC(2030, 0, 1) };
    const limit = new RequestLimit(store, "otp", 3, { now: () => clock.now });
    try {
      const first = await Promise.all(Array.from({ length: 5 }, () => limit.take("hal@example.com")));
      expect(first.filter((v) => v.allowed)).toHaveLength(3);
      expect(await limit.take("ida@example.com")).toEqual({ allowed: true });
      clock.now += 10 * MIN;
      expect(await limit.take("hal@example.com")).toEqual({ allowed: false, retryAfterS: 5 * 60 });
      clock.now += 5 * MIN;
      expect(await limit.take("HAL@example.com")).toEqual({ allowed: true });
    } finally {
      await store.close();
    }
  });
});
