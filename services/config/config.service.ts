/**
 * config: the configuration hierarchy (sites → plants → functions → assets, monitors) and the
 * server time. The actions are listed below by resource (each module holds its actions'
 * declarations, params and short handlers); the rules live in the entity modules, the SQL in
 * repo.ts. Every read, list, count, update and delete is limited to the caller's scope
 * (lib/access.ts); the internal actions other services call answer for the whole deployment.
 */
import { createHash } from "node:crypto";
import type { ActionSchema, Context, Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import { scopeOf, type Principal } from "../../lib/access";
import { DomainError } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { withJsonText } from "../../lib/json-text";
import { setTotal } from "../../lib/paging";
import { DbMixin } from "../../mixins/db.mixin";
import { assetActions } from "./assets.actions";
import { contextFor, type ConfigContext, type PipelinePlace, type PlantActivity } from "./context";
import type { ConfigChange, ConfigEntity, ConfigEvents, MonitorRegistered, MonitorUnregistered } from "./events";
import { functionActions } from "./functions.actions";
import { internalActions } from "./internal.actions";
import { MSG } from "./messages";
import { migrations } from "./migrations";
import * as monitors from "./monitors";
import { monitorActions } from "./monitors.actions";
import { CONFIG_SCHEMAS } from "./openapi";
import { plantActions } from "./plants.actions";
import { siteActions } from "./sites.actions";

export interface ConfigLocals {
  db: DataSource;
  /** The cache generation as this replica last read it (see `cacheGeneration`). */
  generation: Promise<string> | undefined;
  generationReadAt: number;
  /** Lists of one generation kept in memory (`cachedList`): the generation and its lists (loaded or loading) by key. */
  lists: { generation: string; byKey: Map<string, Promise<unknown>> };
}

export interface ConfigMethods {
  /** The toolbox of one HTTP operation: the caller from the gateway and its scope. */
  use(ctx: Context): ConfigContext;
  /** The toolbox of an internal action or event: unscoped. */
  system(ctx: Context): ConfigContext;
  toolbox(ctx: Context, user: Principal): ConfigContext;
  cacheGeneration(): Promise<string>;
  readGeneration(): void;
  invalidate(): Promise<void>;
}

/** `this` in the config service's handlers. */
export type ConfigThis = Service<ServiceSettingSchema> & ConfigMethods & ConfigLocals;
/** The actions of one resource module, spread into the service's `actions`. */
export type ConfigActions = Record<string, ActionSchema<ConfigThis>>;

/** Payload of the `config.cache.changed` broadcast: a write started a new cache generation. */
export interface ConfigCacheChanged {
  generation: string;
}

/** Cached reads live this long at most; every write makes them unreachable at once anyway. */
const CACHE_TTL_S = 300;
const GENERATION_KEY = "config.generation";
/** A lost generation only costs a cold cache, so it need not live forever (nor leak per namespace). */
const GENERATION_TTL_S = 86400;
/**
 * A replica keeps the generation in memory and learns of a new one by broadcast; it reads it
 * again from the cacher at least this often anyway, which bounds how long a broadcast lost
 * while the replica was cut off from the bus can leave it serving an old generation.
 */
const GENERATION_REFRESH_MS = 1000;
/** Lists kept in a replica's memory at most; past it they are all dropped (2,000 assets are about 0.5 MB). */
const LISTS_IN_MEMORY = 100;

/** Internal actions answer for the whole deployment: they are not reachable over HTTP. */
const SYSTEM: Principal = { username: "config", user_type: "saas-admin", site_id: null, plant_id: null, modules: [] };

const ConfigService: ServiceSchema<ServiceSettingSchema, ConfigMethods, ConfigLocals> = {
  name: "config",
  mixins: [DbMixin({ schema: "config", migrations })],
  settings: { openapi: { schemas: CONFIG_SCHEMAS } },

  actions: {
    ...assetActions,
    ...monitorActions,
    ...functionActions,
    ...siteActions,
    ...plantActions,
    ...internalActions,

    serverTime: {
      http: {
        op: 78,
        routes: ["GET /_config/server-time"],
        // Under /_config, so behind the Configuration module like the rest of the group (contract: route groups).
        group: "utility",
        summary: "Server time",
        description: "The server's clock: UTC seconds since the epoch, with a fraction (seconds, not milliseconds).",
        answer: { schema: "number", example: 1767225600.123 },
      },
      params: {},
      handler() {
        return Date.now() / 1000;
      },
    },
  },

  events: {
    /**
     * Another replica (or this one) started a new cache generation. The generation is read again
     * from the cacher rather than taken from the payload, so broadcasts of two replicas' writes
     * arriving in either order leave every replica on the latest.
     */
    "config.cache.changed"() {
      this.readGeneration();
    },

    /** The pipelines service registered a monitor: it now shows as registered and cannot be deleted. */
    "pipelines.monitor.registered": {
      async handler(ctx: Context<MonitorRegistered>) {
        if (await monitors.registerMonitor(this.system(ctx), ctx.params)) await this.invalidate();
      },
    },
    "pipelines.monitor.unregistered": {
      async handler(ctx: Context<MonitorUnregistered>) {
        if (await monitors.unregisterMonitor(this.system(ctx), ctx.params)) await this.invalidate();
      },
    },
  },

  methods: {
    use(ctx: Context) {
      const user = (ctx.meta as { user?: Principal | null }).user;
      if (!user) throw new DomainError(401, MSG.invalidCredentials);
      return this.toolbox(ctx, user);
    },

    system(ctx: Context) {
      return this.toolbox(ctx, SYSTEM);
    },

    toolbox(ctx: Context, user: Principal) {
      let generation: Promise<string> | undefined;
      const cacher = this.broker.cacher;
      const shortKey = (key: string) => (key.length > 200 ? createHash("sha256").update(key).digest("hex") : key);
      const cached = async <T>(key: string, load: () => Promise<T>): Promise<T> => {
        if (!cacher) return load();
        // One generation per request: the reads of one operation see one state of the cache.
        generation ??= this.cacheGeneration();
        const full = `config.q.${await generation}.${shortKey(key)}`;
        const hit = (await cacher.get(full)) as { v: T } | null;
        if (hit) return hit.v;
        const value = await load();
        await cacher.set(full, { v: value }, CACHE_TTL_S);
        return value;
      };
      return contextFor(
        {
          db: this.db,
          cached,
          cachedList: async <T extends object>(key: string, load: () => Promise<T[]>): Promise<T[]> => {
            if (!cacher) return load();
            generation ??= this.cacheGeneration();
            const gen = await generation;
            // Keyed by generation like the cacher's entries: a write makes every list of the old one unreachable.
            if (this.lists.generation !== gen) this.lists = { generation: gen, byKey: new Map() };
            const lists = this.lists;
            const kept = lists.byKey.get(key) as Promise<T[]> | undefined;
            if (kept) return kept;
            // The promise is kept, not the value: requests that arrive while the list loads wait for that one load.
            const loading = cached(key, load).then(withJsonText);
            if (lists.byKey.size >= LISTS_IN_MEMORY) lists.byKey.clear();
            lists.byKey.set(key, loading);
            loading.catch(() => lists.byKey.delete(key));
            return loading;
          },
          changed: async <E extends ConfigEntity>(entity: E, change: ConfigChange, payload: ConfigEvents[E]) => {
            await this.invalidate();
            await this.broker.emit(`config.${entity}.${change}`, payload);
          },
          setTotal: (total: number) => setTotal(ctx, total),
          plantActivity: async (plant_id: string): Promise<PlantActivity> => {
            // Until the pipelines service is deployed no plant has pipelines or events.
            if (!this.broker.registry.getServiceList({ onlyAvailable: true }).some((s) => s.name === "pipelines")) {
              return { pipelines: 0, events: 0 };
            }
            const counts = await ctx.call<Partial<PlantActivity> | null, { plant_id: string }>("pipelines.countForPlant", {
              plant_id,
            });
            return { pipelines: Number(counts?.pipelines ?? 0), events: Number(counts?.events ?? 0) };
          },
          pipelinePlace: async (pipeline_id: string): Promise<PipelinePlace | null | undefined> => {
            if (!this.broker.registry.getServiceList({ onlyAvailable: true }).some((s) => s.name === "pipelines")) return undefined;
            const found = await ctx.call<PipelinePlace | null, { pipeline_id: string }>("pipelines.resolve", { pipeline_id });
            return found ? { site_id: found.site_id, plant_id: found.plant_id } : null;
          },
        },
        user,
        scopeOf(user),
      );
    },

    /**
     * Cached reads are stored under the current generation; a write starts a new one. A read
     * that began before a write and stores its result after it stores it under the old
     * generation, where nobody looks any more: no stale entry outlives a write.
     *
     * The generation is kept in memory, so a cached read is one round trip to the cacher, not
     * two; `config.cache.changed` (a broadcast, sent before the write answers) makes every
     * replica read it again, and it is read again every GENERATION_REFRESH_MS in any case.
     */
    cacheGeneration() {
      if (!this.broker.cacher) return Promise.resolve("");
      if (!this.generation || Date.now() - this.generationReadAt > GENERATION_REFRESH_MS) this.readGeneration();
      return this.generation!;
    },

    /** Starts reading the generation from the cacher (creating one if there is none); requests meanwhile wait for it. */
    readGeneration() {
      const cacher = this.broker.cacher;
      if (!cacher) return;
      const reading = (async () => {
        const current = (await cacher.get(GENERATION_KEY)) as string | null;
        if (current) return current;
        const fresh = newId();
        await cacher.set(GENERATION_KEY, fresh, GENERATION_TTL_S);
        return fresh;
      })();
      this.generation = reading;
      this.generationReadAt = Date.now();
      // A failed read fails the requests waiting on it; the next request tries again.
      reading.catch(() => {
        if (this.generation === reading) this.generation = undefined;
      });
    },

    async invalidate() {
      const cacher = this.broker.cacher;
      if (!cacher) return;
      const fresh = newId();
      this.generation = Promise.resolve(fresh);
      this.generationReadAt = Date.now();
      await cacher.set(GENERATION_KEY, fresh, GENERATION_TTL_S);
      await cacher.clean("config.q.**");
      await this.broker.broadcast("config.cache.changed", { generation: fresh } satisfies ConfigCacheChanged);
    },
  },

  created() {
    this.lists = { generation: "", byKey: new Map() };
  },
};

export default ConfigService;
