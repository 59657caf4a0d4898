/**
 * config: the configuration hierarchy (sites → plants → functions → assets, monitors) and the
 * server time. The actions are listed below by resource (each module holds its actions'
 * declarations, params and short handlers); the rules live in the entity modules, the SQL in
 * repo.ts. Every read, list, count, update and delete is limited to the caller's scope
 * (lib/access.ts); the internal actions other services call answer for the whole deployment.
 */
import { createHash } from "node:crypto";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { ConfigLocals, ConfigMethods, ConfigThis } from "./config.types";
import { scopeOf, type Principal } from "../../lib/access";
import { LocalCache, SharedCache } from "../../lib/cache";
import { DomainError } from "../../lib/errors";
import { withJsonText } from "../../lib/json-text";
import { setTotal } from "../../lib/paging";
import { AUDIT_STREAM, auditedWrite, type AuditStreams } from "../../lib/audit";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import { assetActions } from "./assets.actions";
import { AUDIT_SCHEMAS, AUDIT_STREAM_CONSUMER, AuditAppender, auditActions } from "./audit.actions";
import type { RequestMeta } from "../../lib/contract";
import { pipelinesClient, type MonitorRegisteredEvent, type MonitorUnregisteredEvent, type PlantActivity } from "../pipelines/contract";
import { contextFor, type PipelinePlace } from "./context";
import { configEvents, type ConfigChange, type ConfigEntity, type ConfigEntityEvents } from "./contract";
import { functionActions } from "./functions.actions";
import { internalActions } from "./internal.actions";
import { MSG } from "./messages";
import { migrations } from "./migrations";
import * as monitors from "./monitors";
import { monitorActions } from "./monitors.actions";
import { CONFIG_SCHEMAS } from "./openapi";
import { plantActions } from "./plants.actions";
import { siteActions } from "./sites.actions";

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
/** Lists kept in a replica's memory at most; past it they are dropped (2,000 assets are about 0.5 MB). */
const LISTS_IN_MEMORY = 100;

/** Internal actions answer for the whole deployment: they are not reachable over HTTP. */
const SYSTEM: Principal = { username: "config", user_type: "saas-admin", site_id: null, plant_id: null, modules: [] };

const ConfigService: ServiceSchema<ServiceSettingSchema, ConfigMethods, ConfigLocals> & { streams: StreamConsumers<ConfigThis, AuditStreams> } = {
  name: "config",
  // The stream mixin first: the database opens before the audit consumer starts and closes after it stops.
  mixins: [StreamMixin({ outbox: true, batched: [AUDIT_STREAM] }), DbMixin({ schema: "config", migrations })],
  settings: { openapi: { schemas: { ...CONFIG_SCHEMAS, ...AUDIT_SCHEMAS } } },
  // Every service's audit entries, appended to the log (audit.actions.ts).
  streams: AUDIT_STREAM_CONSUMER,

  actions: {
    ...assetActions,
    ...monitorActions,
    ...functionActions,
    ...siteActions,
    ...plantActions,
    ...internalActions,
    ...auditActions,

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
      this.generation.reread();
    },

    /** The pipelines service registered a monitor: it now shows as registered and cannot be deleted. */
    "pipelines.monitor.registered": {
      async handler(ctx: Context<MonitorRegisteredEvent>) {
        if (await monitors.registerMonitor(this.system(ctx), ctx.params)) await this.invalidate();
      },
    },
    "pipelines.monitor.unregistered": {
      async handler(ctx: Context<MonitorUnregisteredEvent>) {
        if (await monitors.unregisterMonitor(this.system(ctx), ctx.params)) await this.invalidate();
      },
    },
  },

  methods: {
    use(ctx: Context<unknown, Partial<RequestMeta>>) {
      const user = ctx.meta.user;
      if (!user) throw new DomainError(401, MSG.invalidCredentials);
      return this.toolbox(ctx, user);
    },

    system(ctx: Context) {
      return this.toolbox(ctx, SYSTEM);
    },

    toolbox(ctx: Context, user: Principal) {
      let generation: Promise<string> | undefined;
      const reads = this.reads;
      const shortKey = (key: string) => (key.length > 200 ? createHash("sha256").update(key).digest("hex") : key);
      const cached = async <T>(key: string, load: () => Promise<T>): Promise<T> => {
        if (!reads.enabled) return load();
        // One generation per request: the reads of one operation see one state of the cache.
        generation ??= this.generation.get();
        return reads.getOrLoad(`config.q.${await generation}.${shortKey(key)}`, CACHE_TTL_S, load);
      };
      return contextFor(
        {
          db: this.db,
          cached,
          cachedList: async <T extends object>(key: string, load: () => Promise<T[]>): Promise<T[]> => {
            if (!reads.enabled) return load();
            generation ??= this.generation.get();
            const gen = await generation;
            // Of one generation like the cacher's entries: a write makes every list of the old one unreachable,
            // and a list still loading from the old one is not kept.
            if (this.listsGeneration !== gen) {
              this.listsGeneration = gen;
              this.lists.clear();
            }
            // Requests that arrive while the list loads wait for that one load.
            return this.lists.getOrLoad(key, () => cached(key, load).then(withJsonText)) as Promise<T[]>;
          },
          audited: (change, write) => auditedWrite(this.db, this.streams, ctx, change, write),
          changed: async <E extends ConfigEntity>(entity: E, change: ConfigChange, payload: ConfigEntityEvents[E]) => {
            await this.invalidate();
            await this.broker.emit(`config.${entity}.${change}`, payload);
          },
          setTotal: (total: number) => setTotal(ctx, total),
          plantActivity: async (plant_id: string): Promise<PlantActivity> => {
            // Until the pipelines service is deployed no plant has pipelines or events.
            if (!this.broker.registry.getServiceList({ onlyAvailable: true }).some((s) => s.name === "pipelines")) {
              return { pipelines: 0, events: 0 };
            }
            const counts = await pipelinesClient.call(ctx, "countForPlant", { plant_id });
            return { pipelines: Number(counts?.pipelines ?? 0), events: Number(counts?.events ?? 0) };
          },
          pipelinePlace: async (pipeline_id: string): Promise<PipelinePlace | null | undefined> => {
            if (!this.broker.registry.getServiceList({ onlyAvailable: true }).some((s) => s.name === "pipelines")) return undefined;
            const found = await pipelinesClient.call(ctx, "resolve", { pipeline_id });
            return found ? { site_id: found.site_id, plant_id: found.plant_id } : null;
          },
        },
        user,
        scopeOf(user),
      );
    },

    /**
     * After a write: a new generation (lib/cache.ts, SharedGeneration), so that no read cached
     * before it is served after it; `config.cache.changed` (a broadcast, sent before the write
     * answers) makes every replica read the generation again.
     */
    async invalidate() {
      if (!this.reads.enabled) return;
      const fresh = await this.generation.renew();
      await this.reads.clean("config.q.**");
      await configEvents.broadcast(this.broker, "config.cache.changed", { generation: fresh });
    },
  },

  created() {
    this.reads = new SharedCache(this.broker);
    this.generation = this.reads.generation(GENERATION_KEY, GENERATION_TTL_S, GENERATION_REFRESH_MS);
    this.lists = new LocalCache({ ttlMs: CACHE_TTL_S * 1000, max: LISTS_IN_MEMORY });
    this.listsGeneration = "";
    this.auditLog = new AuditAppender(() => this.db);
  },
};

export default ConfigService;
