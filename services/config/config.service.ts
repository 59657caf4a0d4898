/**
 * config: the configuration hierarchy (sites → plants → functions → assets, monitors) and the
 * server time. The actions are listed below by resource (each module holds its actions'
 * declarations, params and short handlers); the rules live in the resource modules over the
 * port (port.ts), the SQL in `<resource>.repo.ts`. Every read, list, count, update and delete is
 * limited to the caller's scope (lib/access.ts); the internal actions other services call answer
 * for the whole deployment.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { ConfigLocals, ConfigMethods, ConfigThis } from "./config.types";
import type { Principal } from "../../lib/access";
import { LocalCache, SharedCache } from "../../lib/cache";
import { DomainError } from "../../lib/errors";
import { AUDIT_STREAM, type AuditStreams } from "../../lib/audit";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import { assetActions } from "./assets.actions";
import { AUDIT_SCHEMAS, AUDIT_STREAM_CONSUMER, AuditAppender, auditActions } from "./audit.actions";
import type { RequestMeta } from "../../lib/contract";
import type {
  MonitorRegisteredEvent,
  MonitorUnregisteredEvent,
  PipelineEvent,
  PipelineReceivedEvent,
  PipelinesAnnounced,
} from "../pipelines/contract";
import { functionActions } from "./functions.actions";
import { internalActions } from "./internal.actions";
import { MSG } from "./messages";
import { migrations } from "./migrations";
import * as monitors from "./monitors";
import { monitorActions } from "./monitors.actions";
import { CONFIG_SCHEMAS } from "./openapi";
import * as places from "./pipeline-places";
import { plantActions } from "./plants.actions";
import { CACHE_TTL_S, invalidate, portFor } from "./port";
import { serverTimeActions } from "./server-time.actions";
import { siteActions } from "./sites.actions";

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

    ...serverTimeActions,
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

    /** Where the pipelines are and whether they received events: config's copy (pipeline-places.ts). */
    "pipelines.pipeline.*": {
      handler(ctx: Context<PipelineEvent | PipelineReceivedEvent>) {
        return places.pipelineChanged(this.system(ctx), ctx.eventName ?? "", ctx.params);
      },
    },
    "pipelines.pipelines.announced": {
      handler(ctx: Context<PipelinesAnnounced>) {
        return places.pipelinesAnnounced(this.system(ctx), ctx.params);
      },
    },
  },

  methods: {
    use(ctx: Context<unknown, Partial<RequestMeta>>) {
      const user = ctx.meta.user;
      if (!user) throw new DomainError(401, MSG.invalidCredentials);
      return portFor(this, ctx, user);
    },

    system(ctx: Context) {
      return portFor(this, ctx, SYSTEM);
    },

    /** After a write: every replica's cached reads are out of reach before the write answers (port.ts). */
    invalidate() {
      return invalidate(this);
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
