/**
 * `ConfigPort`: what an operation of the config service works with — the database, the caller
 * and its scope, the read cache, change announcements, whether pipelines are deployed. The
 * schema builds one per call (`use(ctx)` for an HTTP caller, `system(ctx)` for internal actions
 * and events, both through `portFor` below), so the resource modules stay free of Moleculer.
 */
import { createHash } from "node:crypto";
import type { Context, ServiceBroker } from "moleculer";
import type { DataSource, EntityManager } from "typeorm";
import { scopeOf, type Principal, type Scope } from "../../lib/access";
import { auditedWrite, type AuditChange, type AuditStreams } from "../../lib/audit";
import type { LocalCache, SharedCache, SharedGeneration } from "../../lib/cache";
import { withJsonText } from "../../lib/json-text";
import { setTotal, slicePage, type Page } from "../../lib/paging";
import type { StreamClient } from "../../mixins/stream.mixin";
import { configEvents, type ConfigChange, type ConfigEntity, type ConfigEntityEvents } from "./contract";
import { scopeParams } from "./rules";

export type { Page } from "../../lib/paging";

export interface ConfigPort {
  db: DataSource;
  user: Principal;
  scope: Scope;
  /** The scope as SQL parameters [site, plant] (rules.scopeParams). */
  scopeIds: [string | null, string | null];
  /** A read through the cacher; every change makes all earlier entries unreachable. */
  cached<T>(key: string, load: () => Promise<T>): Promise<T>;
  /**
   * A list read through the cacher and kept in this process's memory too, frozen and with its
   * JSON text (lib/json-text.ts), so that a repeated list costs neither a copy nor an encoding.
   * Only for lists whose items `load` builds afresh, since they are frozen.
   */
  cachedList<T extends object>(key: string, load: () => Promise<T[]>): Promise<T[]>;
  /**
   * A write of this operation with its audit entry, in one transaction (lib/audit.ts,
   * auditedWrite); the entry may depend on what the write answered (null: none).
   */
  audited<T>(change: AuditChange | ((result: T) => AuditChange | null), write: (db: DataSource | EntityManager) => Promise<T>): Promise<T>;
  /** After a committed write: invalidates the cache, then emits `config.<entity>.<change>`. */
  changed<E extends ConfigEntity>(entity: E, change: ConfigChange, payload: ConfigEntityEvents[E]): Promise<void>;
  /** Sets the X-Total-Count response header of a list. */
  setTotal(total: number): void;
  /**
   * Whether a pipelines service is on the bus (the registry says so: nothing is asked of it).
   * Until one is, no plant has pipelines and no pipeline_id is checked (pipeline-places.ts).
   */
  pipelinesDeployed(): boolean;
}

/** Cached reads live this long at most; every write makes them unreachable at once anyway. */
export const CACHE_TTL_S = 300;

/** What of the service a port is built from: its locals (config.types.ts, ConfigLocals) and broker. */
export interface PortHost {
  broker: ServiceBroker;
  db: DataSource;
  streams: StreamClient<AuditStreams>;
  reads: SharedCache;
  generation: SharedGeneration;
  lists: LocalCache<object[]>;
  listsGeneration: string;
}

/** The port of one call, for `user` (the HTTP caller, or the service itself for internal work). */
export function portFor(host: PortHost, ctx: Context, user: Principal): ConfigPort {
  let generation: Promise<string> | undefined;
  const reads = host.reads;
  const shortKey = (key: string) => (key.length > 200 ? createHash("sha256").update(key).digest("hex") : key);
  const cached = async <T>(key: string, load: () => Promise<T>): Promise<T> => {
    if (!reads.enabled) return load();
    // One generation per request: the reads of one operation see one state of the cache.
    generation ??= host.generation.get();
    return reads.getOrLoad(`config.q.${await generation}.${shortKey(key)}`, CACHE_TTL_S, load);
  };
  const scope = scopeOf(user);
  return {
    db: host.db,
    user,
    scope,
    scopeIds: scopeParams(scope),
    cached,
    cachedList: async <T extends object>(key: string, load: () => Promise<T[]>): Promise<T[]> => {
      if (!reads.enabled) return load();
      generation ??= host.generation.get();
      const gen = await generation;
      // Of one generation like the cacher's entries: a write makes every list of the old one unreachable,
      // and a list still loading from the old one is not kept.
      if (host.listsGeneration !== gen) {
        host.listsGeneration = gen;
        host.lists.clear();
      }
      // Requests that arrive while the list loads wait for that one load.
      return host.lists.getOrLoad(key, () => cached(key, load).then(withJsonText)) as Promise<T[]>;
    },
    audited: (change, write) => auditedWrite(host.db, host.streams, ctx, change, write),
    changed: async <E extends ConfigEntity>(entity: E, change: ConfigChange, payload: ConfigEntityEvents[E]) => {
      await invalidate(host);
      await host.broker.emit(`config.${entity}.${change}`, payload);
    },
    setTotal: (total: number) => setTotal(ctx, total),
    pipelinesDeployed: () => host.broker.registry.getServiceList({ onlyAvailable: true }).some((s) => s.name === "pipelines"),
  };
}

/**
 * After a write: a new generation (lib/cache.ts, SharedGeneration), so that no read cached
 * before it is served after it; `config.cache.changed` (a broadcast, sent before the write
 * answers) makes every replica read the generation again.
 */
export async function invalidate(host: PortHost): Promise<void> {
  if (!host.reads.enabled) return;
  const fresh = await host.generation.renew();
  await host.reads.clean("config.q.**");
  await configEvents.broadcast(host.broker, "config.cache.changed", { generation: fresh });
}

/** The contract's optional paging of lists: the total goes in X-Total-Count, the page in the body. */
export function paged<T>(c: ConfigPort, rows: T[], page: Page): T[] {
  c.setTotal(rows.length);
  return slicePage(rows, page);
}
