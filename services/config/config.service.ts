/**
 * config: the configuration hierarchy (sites → plants → functions → assets, monitors) and the
 * server time. Each action below is one operation of the spec (its number in the comment) or an
 * internal action other services call; the rules live in the entity modules beside this file.
 * Every read, list, count, update and delete is limited to the caller's scope (lib/access.ts).
 */
import { createHash } from "node:crypto";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import { scopeOf, type Principal } from "../../lib/access";
import { DomainError } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { withJsonText } from "../../lib/json-text";
import { MAX_TEXT } from "../../lib/validation";
import { DbMixin } from "../../mixins/db.mixin";
import * as assets from "./assets";
import { contextFor, type ConfigContext, type PipelinePlace, type PlantActivity } from "./context";
import type { ConfigChange, ConfigEntity, ConfigEvents, MonitorRegistered, MonitorUnregistered } from "./events";
import * as functions from "./functions";
import { MSG } from "./messages";
import { migrations } from "./migrations";
import * as monitors from "./monitors";
import * as plants from "./plants";
import { NUMERIC_TEXT } from "./rules";
import * as sites from "./sites";
import { PAGE_PARAMS, setTotal } from "../../lib/paging";

interface ConfigLocals {
  db: DataSource;
  /** The cache generation as this replica last read it (see `cacheGeneration`). */
  generation: Promise<string> | undefined;
  generationReadAt: number;
  /** Lists of one generation kept in memory (`cachedList`): the generation and its lists (loaded or loading) by key. */
  lists: { generation: string; byKey: Map<string, Promise<unknown>> };
}

/** Payload of the `config.cache.changed` broadcast: a write started a new cache generation. */
export interface ConfigCacheChanged {
  generation: string;
}

interface ConfigMethods {
  use(ctx: Context): ConfigContext;
  toolbox(ctx: Context, user: Principal): ConfigContext;
  system(ctx: Context): ConfigContext;
  cacheGeneration(): Promise<string>;
  readGeneration(): void;
  invalidate(): Promise<void>;
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

// Params fragments. Names are trimmed and must not be empty; ids are checked for shape by the handlers,
// so a malformed one answers the operation's "Invalid ... ID" message.
const text = { type: "string", max: MAX_TEXT } as const;
const optText = { ...text, optional: true } as const;
const name = { type: "string", max: MAX_TEXT, trim: true, empty: false } as const;
const id = text;
const optId = optText;
const page = PAGE_PARAMS;
const list = { unknown: MSG.excessInputs } as const;
const optNumber = { type: "number", min: 0, optional: true, nullable: true } as const;
const optAttr = { ...text, optional: true, nullable: true } as const;
// latest_version is the service's own (op 32 shows it); a site read back and sent again carries it: ignored.
const edgeFirmware = {
  type: "object",
  strict: true,
  props: { current_version: optText, previous_version: optText, latest_version: optText },
} as const;
const retention = { type: "number", integer: true, positive: true, max: 36500 } as const;
const assetAttributes = {
  type: "object",
  strict: true,
  optional: true,
  nullable: true,
  props: {
    machine_type: optAttr,
    rotating_speed: optNumber,
    manufacturer: optAttr,
    machine_model: optAttr,
    serial_no: optAttr,
    phases: optAttr,
    kw: optNumber,
    frequency: optNumber,
    volts: optNumber,
    amp: optNumber,
  },
} as const;
const threshold = { type: "string", convert: true, max: 64, pattern: NUMERIC_TEXT, optional: true } as const;
const monitorTag = {
  type: "object",
  strict: true,
  props: {
    tag_id: optText,
    tag_name: name,
    tag_desc: optText,
    tag_unit: optText,
    thresholds: {
      type: "object",
      strict: true,
      optional: true,
      props: { caution: threshold, operational: threshold, warning: threshold },
    },
  },
} as const;
const tags = { type: "array", max: 1000, items: monitorTag } as const;
/** specs: only speed_type is known (spec: Monitor.specs); other keys are the client's. */
const specs = { type: "object", props: { speed_type: optText } } as const;
const freeObject = { type: "object" } as const;

/**
 * Fields an update may carry because the fetch or list answered them, so that a record sent back
 * as it was read is taken: accepted, never written (names of parents, counts, server-kept times).
 */
const readBack = <K extends string>(...names: K[]) =>
  Object.fromEntries(names.map((n) => [n, { type: "any", optional: true } as const])) as Record<K, { type: "any"; optional: true }>;

type P<T> = Context<T>;

const ConfigService: ServiceSchema<ServiceSettingSchema, ConfigMethods, ConfigLocals> = {
  name: "config",
  mixins: [DbMixin({ schema: "config", migrations })],

  actions: {
    /** Op 78: UTC seconds with a fraction (the spec's quirk: described as ms, returned as s). */
    serverTime: {
      params: {},
      handler() {
        return Date.now() / 1000;
      },
    },

    // Sites (ops 28-32)
    "sites.create": {
      params: {
        site_name: name,
        location: text,
        timezone: text,
        edge_firmware: edgeFirmware,
        latitude: optText,
        longitude: optText,
        retention_period: { ...retention, optional: true },
      },
      handler(ctx: P<sites.SiteCreate>) {
        return sites.createSite(this.use(ctx), ctx.params);
      },
    },
    "sites.remove": {
      params: { site_id: id },
      handler(ctx: P<{ site_id: string }>) {
        return sites.removeSite(this.use(ctx), ctx.params.site_id);
      },
    },
    "sites.update": {
      params: {
        site_id: id,
        location: text,
        retention_period: retention,
        site_name: { ...name, optional: true },
        timezone: optText,
        edge_firmware: { ...edgeFirmware, optional: true },
        latitude: optText,
        longitude: optText,
      },
      handler(ctx: P<sites.SiteUpdate>) {
        return sites.updateSite(this.use(ctx), ctx.params);
      },
    },
    "sites.get": {
      params: { site_id: id },
      handler(ctx: P<{ site_id: string }>) {
        return sites.getSite(this.use(ctx), ctx.params.site_id);
      },
    },
    "sites.list": {
      params: { ...page, $$messages: list },
      handler(ctx: P<{ limit?: number; offset?: number }>) {
        return sites.listSites(this.use(ctx), ctx.params);
      },
    },

    // Plants (ops 33-37)
    "plants.create": {
      params: { plant_name: name, site_id: id },
      handler(ctx: P<{ plant_name: string; site_id: string }>) {
        return plants.createPlant(this.use(ctx), ctx.params);
      },
    },
    "plants.remove": {
      params: { plant_id: id },
      handler(ctx: P<{ plant_id: string }>) {
        return plants.removePlant(this.use(ctx), ctx.params.plant_id);
      },
    },
    "plants.update": {
      params: { plant_id: id, plant_name: name, site_id: id, ...readBack("site_name", "function_count", "pipeline_count") },
      handler(ctx: P<{ plant_id: string; plant_name: string; site_id: string }>) {
        return plants.updatePlant(this.use(ctx), ctx.params);
      },
    },
    "plants.get": {
      params: { plant_id: id },
      handler(ctx: P<{ plant_id: string }>) {
        return plants.getPlant(this.use(ctx), ctx.params.plant_id);
      },
    },
    "plants.list": {
      params: { site_id: id, ...page, $$messages: list },
      handler(ctx: P<{ site_id: string; limit?: number; offset?: number }>) {
        return plants.listPlants(this.use(ctx), ctx.params);
      },
    },

    // Functions (ops 23-27)
    "functions.create": {
      params: { function_name: name, plant_id: id, site_id: optId },
      handler(ctx: P<{ function_name: string; plant_id: string; site_id?: string }>) {
        return functions.createFunction(this.use(ctx), ctx.params);
      },
    },
    "functions.remove": {
      params: { function_id: id },
      handler(ctx: P<{ function_id: string }>) {
        return functions.removeFunction(this.use(ctx), ctx.params.function_id);
      },
    },
    "functions.update": {
      params: { function_id: id, function_name: name, plant_id: id, site_id: optId, ...readBack("plant_name", "site_name", "monitor_count") },
      handler(ctx: P<{ function_id: string; function_name: string; plant_id: string; site_id?: string }>) {
        return functions.updateFunction(this.use(ctx), ctx.params);
      },
    },
    "functions.get": {
      params: { function_id: id },
      handler(ctx: P<{ function_id: string }>) {
        return functions.getFunction(this.use(ctx), ctx.params.function_id);
      },
    },
    "functions.list": {
      params: { plant_id: id, ...page, $$messages: list },
      handler(ctx: P<{ plant_id: string; limit?: number; offset?: number }>) {
        return functions.listFunctions(this.use(ctx), ctx.params);
      },
    },

    // Assets (ops 11-16)
    "assets.create": {
      params: {
        asset_name: name,
        function_id: id,
        plant_id: optId,
        site_id: optId,
        asset_category: name,
        is_critical: optText,
        attributes: assetAttributes,
        $$messages: { invalid: MSG.invalidAssetData },
      },
      handler(ctx: P<assets.AssetWrite>) {
        return assets.createAsset(this.use(ctx), ctx.params);
      },
    },
    "assets.remove": {
      params: { asset_id: id },
      handler(ctx: P<{ asset_id: string }>) {
        return assets.removeAsset(this.use(ctx), ctx.params.asset_id);
      },
    },
    "assets.update": {
      params: {
        asset_id: id,
        asset_name: name,
        function_id: id,
        plant_id: optId,
        site_id: optId,
        asset_category: name,
        is_critical: text,
        attributes: assetAttributes,
        ...readBack("function_name", "plant_name", "site_name", "monitor_count"),
        $$messages: { invalid: MSG.invalidAssetData },
      },
      handler(ctx: P<assets.AssetWrite & { asset_id: string; is_critical: string }>) {
        return assets.updateAsset(this.use(ctx), ctx.params);
      },
    },
    "assets.get": {
      params: { asset_id: id },
      handler(ctx: P<{ asset_id: string }>) {
        return assets.getAsset(this.use(ctx), ctx.params.asset_id);
      },
    },
    "assets.list": {
      params: { function_id: optId, asset_category: optText, is_critical: optText, ...page, $$messages: list },
      handler(ctx: P<assets.AssetFilter>) {
        return assets.listAssets(this.use(ctx), ctx.params);
      },
    },
    "assets.count": {
      params: { function_id: optId, asset_category: optText, is_critical: optText, $$messages: list },
      handler(ctx: P<assets.AssetFilter>) {
        return assets.countAssets(this.use(ctx), ctx.params);
      },
    },

    // Monitors (ops 17-22)
    "monitors.create": {
      params: {
        monitor_name: name,
        monitor_type: name,
        function_id: optId,
        asset_id: optId,
        tags: { ...tags, optional: true },
        specs: { ...specs, optional: true },
        attributes: { ...freeObject, optional: true },
        $$messages: { unknown: MSG.invalidKey },
      },
      handler(ctx: P<monitors.MonitorCreate>) {
        return monitors.createMonitor(this.use(ctx), ctx.params);
      },
    },
    "monitors.remove": {
      params: { monitor_id: id },
      handler(ctx: P<{ monitor_id: string }>) {
        return monitors.removeMonitor(this.use(ctx), ctx.params.monitor_id);
      },
    },
    "monitors.update": {
      params: {
        monitor_id: id,
        monitor_name: name,
        monitor_type: name,
        tags,
        specs,
        attributes: freeObject,
        // Op 19 lists its body and names `Invalid key` for any other key: a fetched monitor's
        // function_id, created_at and gateway are not taken back.
        $$messages: { unknown: MSG.invalidKey },
      },
      handler(ctx: P<monitors.MonitorUpdate>) {
        return monitors.updateMonitor(this.use(ctx), ctx.params);
      },
    },
    "monitors.get": {
      params: { monitor_id: id },
      handler(ctx: P<{ monitor_id: string }>) {
        return monitors.getMonitor(this.use(ctx), ctx.params.monitor_id);
      },
    },
    "monitors.list": {
      params: {
        asset_id: optId,
        function_id: optId,
        pipeline_id: optId,
        is_registered: optText,
        data_type: optText,
        ...page,
        $$messages: list,
      },
      handler(ctx: P<monitors.MonitorFilter>) {
        return monitors.listMonitors(this.use(ctx), ctx.params);
      },
    },
    "monitors.count": {
      params: { asset_id: optId, function_id: optId, $$messages: list },
      handler(ctx: P<{ asset_id?: string; function_id?: string }>) {
        return monitors.countMonitors(this.use(ctx), ctx.params);
      },
    },

    // Internal: what other services need to know of the hierarchy. Cached, not scoped.
    "sites.resolve": {
      visibility: "public",
      params: { site_id: text },
      handler(ctx: P<{ site_id: string }>) {
        return sites.resolveSite(this.system(ctx), ctx.params.site_id);
      },
    },
    "plants.resolve": {
      visibility: "public",
      params: { plant_id: text },
      handler(ctx: P<{ plant_id: string }>) {
        return plants.resolvePlant(this.system(ctx), ctx.params.plant_id);
      },
    },
    "functions.resolve": {
      visibility: "public",
      params: { function_id: text },
      handler(ctx: P<{ function_id: string }>) {
        return functions.functionSummary(this.system(ctx), ctx.params.function_id);
      },
    },
    "assets.resolve": {
      visibility: "public",
      params: { asset_id: text },
      handler(ctx: P<{ asset_id: string }>) {
        return assets.assetSummary(this.system(ctx), ctx.params.asset_id);
      },
    },
    "monitors.resolve": {
      visibility: "public",
      params: { monitor_ids: { type: "array", max: 10000, items: text } },
      handler(ctx: P<{ monitor_ids: string[] }>) {
        return monitors.resolveMonitors(this.system(ctx), ctx.params.monitor_ids);
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
    /** The toolbox of one HTTP operation: the caller from the gateway and its scope. */
    use(ctx: Context) {
      const user = (ctx.meta as { user?: Principal | null }).user;
      if (!user) throw new DomainError(401, "Invalid credentials");
      return this.toolbox(ctx, user);
    },

    /** The toolbox of an internal action or event: unscoped. */
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
