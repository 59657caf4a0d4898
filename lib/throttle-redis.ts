/**
 * The throttle's store in Redis (REDIS_URL), shared by every replica: each key's events are a
 * sorted set scored by time, each change one Lua script so that replicas counting at once never
 * lose a count nor let a `take` pass its limit. Keys carry the namespace, as the cacher's do.
 *
 * A Redis that does not answer within a second fails the call; the gateway then lets the
 * sign-in through to the password check (logged), rather than lock every user out while the
 * cache is down (lib/throttle.ts has the rules; api.service.ts decides that).
 */
import { randomBytes } from "node:crypto";
import Redis from "ioredis";
import type { AppConfig } from "./config";
import { MemoryThrottleStore, type Taken, type Tally, type ThrottleStore } from "./throttle";

/** Per key in KEYS (ARGV[1]: window ms): the newest event's score, and the events within the window ending at it. */
const TALLY_KEYS = `
local out = {}
local window = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if newest[2] then
    out[#out + 1] = redis.call('ZCOUNT', key, '(' .. (tonumber(newest[2]) - window), '+inf')
    out[#out + 1] = newest[2]
  else
    out[#out + 1] = 0
    out[#out + 1] = '0'
  end
end
return out`;

/** KEYS: the keys; ARGV: at, window ms, a unique member suffix. Records, then tallies as TALLY_KEYS does. */
const RECORD = `
local at = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', at - window)
  redis.call('ZADD', key, ARGV[1], ARGV[1] .. ':' .. ARGV[3] .. ':' .. i)
  -- Kept a window after the newest event (by the callers' clock, not Redis's).
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', key, math.max(window, tonumber(newest[2]) + window - at))
end
${TALLY_KEYS.replace("tonumber(ARGV[1])", "tonumber(ARGV[2])")}`;

/** KEYS[1]; ARGV: at, window ms, limit, member. Answers {1} when taken, {0, oldest} when refused. */
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, oldest[2]}
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {1}`;

/** KEYS[1]; ARGV: at, member, ttl ms, max. */
const REMEMBER = `
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (tonumber(ARGV[1]) - tonumber(ARGV[3])))
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(tonumber(ARGV[4]) + 1))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

type Reply = (string | number)[];

interface ThrottleCommands {
  throttleTally(numKeys: number, ...args: (string | number)[]): Promise<Reply>;
  throttleRecord(numKeys: number, ...args: (string | number)[]): Promise<Reply>;
  throttleTake(key: string, ...args: (string | number)[]): Promise<Reply>;
  throttleRemember(key: string, ...args: (string | number)[]): Promise<number>;
}

const unique = (): string => randomBytes(6).toString("base64url");

const talliesOf = (keys: readonly string[], reply: Reply): Tally[] =>
  keys.map((_, i) => ({ count: Number(reply[2 * i]), last: Number(reply[2 * i + 1]) }));

export class RedisThrottleStore implements ThrottleStore {
  private readonly redis: Redis & ThrottleCommands;

  constructor(
    url: string,
    /** Put before every key: `<namespace>-throttle:`. */
    private readonly prefix: string,
  ) {
    // A throttle that waits on a Redis that is away would hold every sign-in: fail fast instead.
    const redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 1000, connectTimeout: 2000, lazyConnect: true });
    redis.defineCommand("throttleTally", { lua: TALLY_KEYS });
    redis.defineCommand("throttleRecord", { lua: RECORD });
    redis.defineCommand("throttleTake", { numberOfKeys: 1, lua: TAKE });
    redis.defineCommand("throttleRemember", { numberOfKeys: 1, lua: REMEMBER });
    // ioredis reports a lost connection as an "error" event too; it reconnects by itself.
    redis.on("error", () => undefined);
    this.redis = redis as Redis & ThrottleCommands;
  }

  async tally(keys: readonly string[], windowMs: number): Promise<Tally[]> {
    return talliesOf(keys, await this.redis.throttleTally(keys.length, ...keys.map((k) => this.prefix + k), windowMs));
  }

  async record(keys: readonly string[], at: number, windowMs: number): Promise<Tally[]> {
    return talliesOf(keys, await this.redis.throttleRecord(keys.length, ...keys.map((k) => this.prefix + k), at, windowMs, unique()));
  }

  async take(key: string, at: number, windowMs: number, limit: number): Promise<Taken> {
    const reply = await this.redis.throttleTake(this.prefix + key, at, windowMs, limit, `${at}:${unique()}`);
    return Number(reply[0]) === 1 ? { taken: true } : { taken: false, oldest: Number(reply[1]) };
  }

  async has(key: string, member: string, since: number): Promise<boolean> {
    const score = await this.redis.zscore(this.prefix + key, member);
    return score !== null && Number(score) >= since;
  }

  async remember(key: string, member: string, at: number, ttlMs: number, max: number): Promise<void> {
    await this.redis.throttleRemember(this.prefix + key, at, member, ttlMs, max);
  }

  async claim(key: string, _at: number, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.prefix + key, "1", "PX", ttlMs, "NX")) === "OK";
  }

  close(): Promise<void> {
    this.redis.disconnect();
    return Promise.resolve();
  }
}

/** Redis when the cluster has it (REDIS_URL), else this process's memory: where the cacher is. */
export function openThrottleStore(cfg: Pick<AppConfig, "redisUrl" | "namespace">): ThrottleStore {
  return cfg.redisUrl ? new RedisThrottleStore(cfg.redisUrl, `${cfg.namespace}-throttle:`) : new MemoryThrottleStore();
}
