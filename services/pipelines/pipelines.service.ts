/**
 * pipelines: gateways and third-party integrations (spec ops 46-57), their actions, and the
 * ingestion API through which readings, waveforms and heartbeats enter the system (contract:
 * Pipelines and data ingestion). Publishes the `readings` and `waveforms` durable streams and
 * emits `pipelines.monitor.registered|unregistered` (types in ./streams.ts).
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import { config } from "../../lib/config";
import { EPOCH_MS, MAX_TEXT } from "../../lib/validation";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin, type StreamClient } from "../../mixins/stream.mixin";
import type { Ctx, KeyedPipeline, PipelinesEnv } from "./context";
import * as crud from "./crud";
import * as ingest from "./ingest";
import { makePartitionsAhead, runRetention, sweepOverdueActions } from "./jobs";
import { migrations } from "./migrations";
import * as repo from "./repo";
import { resolvePipeline } from "./repo";
import { COMPONENTS } from "./rules";
import {
  countParams,
  edgeCreateParams,
  edgeUpdateParams,
  listParams,
  thirdPartyCreateParams,
  thirdPartyUpdateParams,
} from "./schemas";
import { sqlConnect, type SqlConnectInput } from "./sql-connect";
import { Partitions } from "./storage";
import { TtlCache } from "./ttl-cache";

interface PipelinesLocals {
  db: DataSource;
  streams: StreamClient;
  env: PipelinesEnv;
  timers: NodeJS.Timeout[];
}

interface PipelinesMethods {
  every(ms: number, name: string, work: () => Promise<unknown>): void;
}

const text = { type: "string", max: MAX_TEXT } as const;
const id = { pipeline_id: text } as const;
/** Samples of one capture; bounded so that its stream message stays under NATS's 1 MB payload. */
export const MAX_SAMPLES = 32768;
const HOUR_MS = 3600 * 1000;

const PipelinesService: ServiceSchema<ServiceSettingSchema, PipelinesMethods, PipelinesLocals> = {
  name: "pipelines",
  mixins: [StreamMixin({ outbox: true }), DbMixin({ schema: "pipelines", migrations, poolSize: 16 })],

  actions: {
    // ------------------------------------------------------------ third-party (ops 46-49)
    "thirdparty.create": {
      params: thirdPartyCreateParams,
      handler(ctx: Ctx<crud.PipelineInput>) {
        return crud.createPipeline(this.env, ctx, "thirdparty");
      },
    },
    "thirdparty.remove": {
      params: id,
      handler(ctx: Ctx<{ pipeline_id: string }>) {
        return crud.removePipeline(this.env, ctx, "thirdparty");
      },
    },
    "thirdparty.update": {
      params: thirdPartyUpdateParams,
      handler(ctx: Ctx<crud.PipelineInput>) {
        return crud.updatePipeline(this.env, ctx, "thirdparty");
      },
    },
    "thirdparty.get": {
      params: { ...id, mac_ids: [{ type: "array", max: 100, items: text, optional: true }, { ...text, optional: true }] },
      handler(ctx: Ctx<{ pipeline_id: string; mac_ids?: string | string[] }>) {
        return crud.getPipeline(this.env, ctx, "thirdparty");
      },
    },

    // ------------------------------------------------------------ edge-server (ops 50-53)
    "edge.create": {
      params: edgeCreateParams,
      handler(ctx: Ctx<crud.PipelineInput>) {
        return crud.createPipeline(this.env, ctx, "edge");
      },
    },
    "edge.remove": {
      params: id,
      handler(ctx: Ctx<{ pipeline_id: string }>) {
        return crud.removePipeline(this.env, ctx, "edge");
      },
    },
    "edge.update": {
      params: edgeUpdateParams,
      handler(ctx: Ctx<crud.PipelineInput>) {
        return crud.updatePipeline(this.env, ctx, "edge");
      },
    },
    "edge.get": {
      params: id,
      handler(ctx: Ctx<{ pipeline_id: string }>) {
        return crud.getPipeline(this.env, ctx, "edge");
      },
    },

    // ------------------------------------------------------------ all kinds (ops 54-57)
    list: {
      params: listParams,
      handler(ctx: Ctx<{ plant_id?: string; function_id?: string; limit?: number; offset?: number }>) {
        return crud.listPipelines(this.env, ctx);
      },
    },
    count: {
      params: countParams,
      handler(ctx: Ctx<{ plant_id?: string; function_id?: string; status?: string }>) {
        return crud.countPipelines(this.env, ctx);
      },
    },
    action: {
      params: {
        // "a request form uses the key id for this list" (spec op 56)
        // An empty list names no pipeline: the handler answers Insufficient inputs, as for a missing one.
        pipeline_id: [{ type: "array", max: 1000, items: text, optional: true }, { ...text, optional: true }],
        id: [{ type: "array", max: 1000, items: text, optional: true }, { ...text, optional: true }],
        action: { type: "enum", values: ["start", "stop"] },
      },
      handler(ctx: Ctx<{ pipeline_id?: string | string[]; id?: string | string[]; action: "start" | "stop" }>) {
        return crud.queueActions(this.env, ctx);
      },
    },
    sqlConnect: {
      params: {
        server_address: { ...text, optional: true },
        port: { type: "number", integer: true, min: 1, max: 65535, convert: true, optional: true },
        username: { ...text, optional: true },
        password: [
          { type: "string", max: 1024, optional: true },
          { type: "number", optional: true },
        ],
        dialect: { type: "enum", values: ["postgres", "mysql", "mssql"], optional: true },
        database: { ...text, optional: true },
        table: { ...text, optional: true },
        time_field: { ...text, optional: true },
        return_data_types: [
          { type: "enum", values: ["true", "false", "True", "False"], optional: true },
          { type: "boolean", optional: true },
        ],
        ignore_type: { type: "any", optional: true },
      },
      handler(ctx: Context<SqlConnectInput>) {
        return sqlConnect(ctx.params, (m) => this.logger.warn(m));
      },
    },

    // ------------------------------------------------------------ ingestion API (contract)
    "ingest.readings": {
      params: {
        ...id,
        // Its size is checked in the handler, so that a value that is no list says so (Invalid input: readings).
        readings: { type: "array" },
      },
      handler(ctx: Ctx<ingest.ReadingsInput>) {
        return ingest.ingestReadings(this.env, ctx);
      },
    },
    "ingest.waveform": {
      params: {
        ...id,
        monitor_id: text,
        tag: text,
        axis: { type: "enum", values: ["x", "y", "z"] },
        ts: EPOCH_MS,
        sample_rate_hz: { type: "number", positive: true, max: 10_000_000 },
        samples: { type: "array", min: 1, max: MAX_SAMPLES, items: { type: "number", finite: true } },
      },
      handler(ctx: Ctx<ingest.WaveformInput>) {
        return ingest.ingestWaveform(this.env, ctx);
      },
    },
    "ingest.heartbeat": {
      params: { ...id, component: { type: "enum", values: [...COMPONENTS] }, ts: EPOCH_MS },
      handler(ctx: Ctx<{ pipeline_id: string; component: (typeof COMPONENTS)[number]; ts: number }>) {
        return ingest.heartbeat(this.env, ctx);
      },
    },
    "ingest.config": {
      params: id,
      handler(ctx: Ctx<{ pipeline_id: string }>) {
        return ingest.gatewayConfig(this.env, ctx);
      },
    },
    "ingest.actions": {
      params: id,
      handler(ctx: Ctx<{ pipeline_id: string }>) {
        return ingest.pendingActions(this.env, ctx);
      },
    },
    "ingest.ack": {
      params: { ...id, action_id: text, status: { type: "enum", values: ["completed", "failed"] } },
      handler(ctx: Ctx<{ pipeline_id: string; action_id: string; status: "completed" | "failed" }>) {
        return ingest.ackAction(this.env, ctx);
      },
    },

    // ------------------------------------------------------------ for other services
    /** Config's plant-delete refusal: the plant's pipelines and their events. */
    countForPlant: {
      visibility: "public",
      params: { plant_id: text },
      handler(ctx: Context<{ plant_id: string }>) {
        return repo.plantActivity(this.db, ctx.params.plant_id.toLowerCase()).catch(() => ({ pipelines: 0, events: 0 }));
      },
    },
    /** A gateway's names, place and registered monitors (alerting names watchers' gateways with it), or null. */
    resolve: {
      visibility: "public",
      cache: { keys: ["pipeline_id"], ttl: 30 },
      params: { pipeline_id: text },
      async handler(ctx: Context<{ pipeline_id: string }>) {
        return resolvePipeline(this.db, ctx.params.pipeline_id);
      },
    },
    /** The pipeline a monitor is registered to, or null: the authority behind config's copy. */
    registrationOf: {
      visibility: "public",
      params: { monitor_id: text },
      async handler(ctx: Context<{ monitor_id: string }>) {
        const rows = (await this.db
          .query(`SELECT monitor_id, pipeline_id, slave_id FROM registrations WHERE monitor_id::text = lower($1)`, [ctx.params.monitor_id])
          .catch(() => [])) as { monitor_id: string; pipeline_id: string; slave_id: string | null }[];
        return rows[0] ?? null;
      },
    },
    /** Runs the retention job now (operators, tests); `force: false` runs it only when a day has passed since the last run. */
    "retention.run": {
      visibility: "public",
      params: { force: { type: "boolean", optional: true, default: true } },
      handler(ctx: Context<{ force: boolean }>) {
        return runRetention(this.env, ctx, ctx.params.force);
      },
    },
    /** Fails overdue actions now (operators, tests); the periodic sweep does the same. */
    "actions.sweep": {
      visibility: "public",
      params: {},
      handler() {
        return sweepOverdueActions(this.env);
      },
    },
  },

  events: {
    /** Broadcast to every replica when a pipeline changes: what they cached of it is stale. */
    "pipelines.changed": {
      handler(ctx: Context<{ pipeline_id?: string }>) {
        const pipeline_id = ctx.params.pipeline_id;
        if (!pipeline_id) {
          this.env.mappings.clear();
          this.env.retention.clear();
          return;
        }
        this.env.mappings.delete(pipeline_id);
        this.env.keys.deleteWhere((p: KeyedPipeline | null) => p?.pipeline_id === pipeline_id);
      },
    },
    /** A monitor's tags or a site's retention changed in config: every replica forgets its mappings. */
    "config.monitor.*": {
      handler(ctx: Context) {
        void ctx.broadcast("pipelines.changed", {}, ["pipelines"]);
      },
    },
    "config.site.*": {
      handler(ctx: Context) {
        void ctx.broadcast("pipelines.changed", {}, ["pipelines"]);
      },
    },
  },

  methods: {
    /** A periodic job that logs its failures instead of dying, stopped with the service. */
    every(ms: number, name: string, work: () => Promise<unknown>) {
      const timer = setInterval(() => {
        work().catch((err: unknown) => this.logger.warn(`${name} failed:`, err));
      }, ms);
      timer.unref();
      this.timers.push(timer);
    },
  },

  created() {
    this.timers = [];
  },

  async started() {
    this.env = {
      db: this.db,
      streams: this.streams,
      partitions: new Partitions(),
      keys: new TtlCache(10000),
      mappings: new TtlCache(5000),
      retention: new TtlCache(60000),
      logger: this.logger,
    };
    await makePartitionsAhead(this.env);
    const timeout = config().pipelineActionTimeoutMs;
    this.every(Math.min(5000, Math.max(100, Math.floor(timeout / 4))), "action timeout sweep", () => sweepOverdueActions(this.env));
    this.every(HOUR_MS, "partitions ahead", () => makePartitionsAhead(this.env));
    // Checked hourly; the job itself runs once a day, on one replica (jobs.ts).
    this.every(HOUR_MS, "retention", () => runRetention(this.env, this.broker, false));
  },

  stopped() {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  },
};

export default PipelinesService;
