/**
 * The operations that declare a rate limit (`http.rateLimit`, lib/operations.ts): each call
 * counted per client address in the throttle's store (Redis in a cluster: every replica counts
 * the same calls); past the limit 429 `Too many requests` with `Retry-After`.
 */
import type { ServiceBroker } from "moleculer";
import { addressKey, RequestLimit, throttledError, TOO_MANY_REQUESTS, type ThrottleStore } from "../../lib/throttle";
import type { GatewayAlias } from "./catalog";

export class RateLimits {
  /** Per action with a `rateLimit` declaration: its counter of calls per client address. */
  private readonly counters = new Map<string, RequestLimit>();

  constructor(
    private readonly store: ThrottleStore,
    private readonly logger: ServiceBroker["logger"],
  ) {}

  /** One call of the alias's operation from `address`; a store that does not answer lets the call through, logged. */
  async take(alias: GatewayAlias, address: string): Promise<void> {
    if (!alias.rateLimit) return;
    const { limit, windowS } = alias.rateLimit;
    let counter = this.counters.get(alias.action);
    if (!counter) {
      counter = new RequestLimit(this.store, `rate:${alias.action}`, limit, { windowMs: windowS * 1000 });
      this.counters.set(alias.action, counter);
    }
    const verdict = await counter.take(addressKey(address)).catch((err: unknown) => {
      this.logger.warn(`rate limit of ${alias.action} not applied: its store failed (${String(err)})`);
      return { allowed: true } as const;
    });
    if (!verdict.allowed) throw throttledError(verdict.retryAfterS, TOO_MANY_REQUESTS);
  }
}
