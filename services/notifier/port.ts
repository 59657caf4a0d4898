/**
 * `NotifierPort`: everything the notifier's domain modules (notifications.ts,
 * alert-notifications.ts) may use (docs/architecture.md, "The service shape"): the database, the
 * channels that carry a message, the service's background work (timers and deliveries in flight,
 * awaited on stop), its counters, and config's actions as plain async functions (the users'
 * contacts it reads from its own copy, contacts.ts: the notifier calls no auth action).
 * Built per call by the schema's `system(ctx)`.
 */
import type { Context, ServiceBroker } from "moleculer";
import type { DataSource } from "typeorm";
import type { Caller } from "../../lib/contract";
import { countDomain } from "../../lib/metrics";
import { resolveSite, type ResolvedSite } from "../config/contract";
import type { Channel, Medium } from "./delivery";

export interface PortLogger {
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

/** The schema's locals a port is built from (notifier.types.ts, `NotifierLocals`). */
export interface NotifierPortSource {
  broker: ServiceBroker;
  logger: PortLogger;
  db: DataSource;
  channels: Partial<Record<Medium, Channel>>;
  timers: Set<NodeJS.Timeout>;
  inflight: Set<Promise<void>>;
  stopping: boolean;
}

export interface NotifierPort {
  db: DataSource;
  logger: PortLogger;
  channels: Partial<Record<Medium, Channel>>;
  /** True once the service is stopping: no delivery starts after that. */
  stopping(): boolean;
  /** Runs `task` after `delayMs`, tracked; not once the service is stopping. */
  later(delayMs: number, task: () => Promise<void>): void;
  /** Background work is awaited on stop, so the database is not closed under a delivery; its failure is logged. */
  track(task: Promise<void>): void;
  /** A notification that became final (lib/metrics.ts). */
  countFinal(status: "sent" | "failed" | "skipped", medium: Medium): void;
  /** The site, when config is up to say; null otherwise. */
  resolveSite(site_id: string): Promise<ResolvedSite | null>;
}

export function systemPort(self: NotifierPortSource, caller: Caller & (Context | ServiceBroker)): NotifierPort {
  const port: NotifierPort = {
    db: self.db,
    logger: self.logger,
    channels: self.channels,
    stopping: () => self.stopping,
    later(delayMs, task) {
      if (self.stopping) return;
      const timer = setTimeout(() => {
        self.timers.delete(timer);
        port.track(task());
      }, delayMs);
      timer.unref();
      self.timers.add(timer);
    },
    track(task) {
      const settled = task.catch((err) => self.logger.error("notification delivery failed", err));
      self.inflight.add(settled);
      void settled.finally(() => self.inflight.delete(settled));
    },
    countFinal: (status, medium) => countDomain(self.broker, `notifications.${status}`, { medium }),
    // Config down is not worth holding a notice back for.
    resolveSite: async (site_id) =>
      self.broker.registry.actions.isAvailable("config.sites.resolve") ? resolveSite(caller, site_id).catch(() => null) : null,
  };
  return port;
}

/** On stop: no timer fires any more, and the deliveries in flight end before the database closes. */
export async function stopBackground(self: NotifierPortSource): Promise<void> {
  self.stopping = true;
  for (const timer of self.timers) clearTimeout(timer);
  self.timers.clear();
  await Promise.all([...self.inflight]);
  for (const channel of Object.values(self.channels)) channel?.close?.();
}
