/**
 * Broker options for both ways of running: with no TRANSPORTER every service shares one
 * process (in-process calls, memory cacher); with TRANSPORTER=nats://… each process joins the
 * cluster and REDIS_URL makes the cache shared.
 */
import type { BrokerOptions } from "moleculer";
import { config, type AppConfig } from "./lib/config";
import { DatabaseOutageMiddleware } from "./lib/errors";
import { failoverRetryable, FailFastMiddleware } from "./lib/failfast";
import { loggerOptions, RequestIdMiddleware } from "./lib/logging";
import { metricsOptions } from "./lib/metrics";
import { NATS_LIVENESS, natsServerList } from "./lib/streams/jetstream";
import { ParamsMiddleware } from "./lib/validation";

/**
 * The memory cacher hands out copies, so a caller that changes a result cannot change the cache.
 * A JSON round trip, not lodash's cloneDeep (`clone: true`): the same values the Redis cacher
 * gives back in the cluster, at under half the cost (bench/api.ts: a 100-site list spent a
 * quarter of its CPU in cloneDeep).
 */
const jsonClone = (data: unknown): unknown => (data === undefined ? data : JSON.parse(JSON.stringify(data)));

export function brokerOptions(cfg: AppConfig = config()): BrokerOptions {
  return {
    namespace: cfg.namespace,
    nodeID: cfg.nodeId ?? null,
    logger: loggerOptions(cfg.logLevel) as BrokerOptions["logger"],
    // The servers without credentials and the node's NATS user apart: Moleculer, given `url`, would
    // take a password as written in it (still percent-encoded).
    transporter: cfg.transporter ? { type: "NATS", options: { servers: natsServerList(cfg.transporter), ...cfg.natsAuth, ...NATS_LIVENESS } } : null,
    serializer: "JSON",
    cacher: cfg.redisUrl
      ? // REDIS_URL as the string itself, which the cacher hands to `new Redis(...)` (host, port,
        // password, db): ioredis ignores a `url` key in an options object, and connected to
        // localhost:6379 whatever REDIS_URL said. Moleculer's types name only the object form.
        { type: "Redis", options: { prefix: `${cfg.namespace}-cache`, redis: cfg.redisUrl as unknown as Record<string, unknown>, ttl: 300 } }
      : { type: "Memory", options: { ttl: 300, clone: jsonClone } },
    requestTimeout: cfg.requestTimeoutMs,
    // Over NATS, a call whose node died is sent again to another replica, once lib/failfast.ts has
    // found it gone and the call safe to repeat (a read, or ingestion with an Idempotency-Key);
    // nothing else is retried. At once: the replica is picked afresh and the dead one is out.
    retryPolicy: cfg.transporter
      ? { enabled: true, retries: 2, delay: 0, maxDelay: 0, factor: 1, check: failoverRetryable }
      : { enabled: false },
    circuitBreaker: {
      enabled: true,
      threshold: 0.5,
      minRequestCount: 20,
      windowTime: 60,
      halfOpenTime: 10000,
      // Faults open the breaker; a domain answer does not, though some are 500s the interface names
      // (`Something went wrong` for a note on an unknown alert): they would lock out valid calls.
      // Otherwise Moleculer's own test: a numeric code from 500 up.
      check: (err: Error & { code?: unknown; type?: string }) => typeof err.code === "number" && err.code >= 500 && err.type !== "DOMAIN_ERROR",
    },
    registry: { strategy: "RoundRobin", preferLocal: true },
    validator: false,
    middlewares: [RequestIdMiddleware, ParamsMiddleware, DatabaseOutageMiddleware, ...(cfg.transporter ? [FailFastMiddleware()] : [])],
    tracking: { enabled: true, shutdownTimeout: 10000 },
    metrics: metricsOptions(),
    tracing: { enabled: false },
    // bin/start.ts owns SIGINT/SIGTERM: it stops the broker, then the embedded PostgreSQL, in that order.
    skipProcessEventRegistration: true,
  };
}

export default brokerOptions;
