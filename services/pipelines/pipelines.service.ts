/**
 * pipelines: gateways and third-party integrations (spec ops 46-57), their actions, and the
 * ingestion API through which readings, waveforms and heartbeats enter the system (contract:
 * Pipelines and data ingestion). Publishes the `readings` and `waveforms` durable streams and
 * emits `pipelines.monitor.registered|unregistered` (types in ./streams.ts).
 *
 * Each module of actions carries its operations' routes, params and docs beside the handlers;
 * the handlers call the domain (crud.ts, fleet.ts, ingest.ts, sql-connect.ts), whose SQL is in repo.ts.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../../lib/config";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin } from "../../mixins/stream.mixin";
import type { KeyedPipeline, PipelinesLocals, PipelinesMethods } from "./context";
import { edgeActions } from "./edge.actions";
import { fleetActions } from "./fleet.actions";
import { ingestActions } from "./ingest.actions";
import { internalActions } from "./internal.actions";
import { makePartitionsAhead, runRetention, sweepOverdueActions } from "./jobs";
import { migrations } from "./migrations";
import { PIPELINES_SCHEMAS } from "./openapi";
import { Partitions } from "./partitions";
import { sqlConnectActions } from "./sql-connect.actions";
import { thirdPartyActions } from "./thirdparty.actions";
import { TtlCache } from "./ttl-cache";

const HOUR_MS = 3600 * 1000;

/** Every replica forgets what it cached of pipelines, mappings and retention. */
function forgetAll(ctx: Context): void {
  void ctx.broadcast("pipelines.changed", {}, ["pipelines"]);
}

const PipelinesService: ServiceSchema<ServiceSettingSchema, PipelinesMethods, PipelinesLocals> = {
  name: "pipelines",
  mixins: [StreamMixin({ outbox: true }), DbMixin({ schema: "pipelines", migrations, poolSize: 16 })],
  settings: { openapi: { schemas: PIPELINES_SCHEMAS } },

  actions: {
    ...thirdPartyActions, // third-party pipelines
    ...edgeActions, // edge-server pipelines (gateways)
    ...fleetActions, // all kinds: list, count, start/stop
    ...sqlConnectActions, // a SQL gateway's source, introspected
    ...ingestActions, // the gateways' side: readings, waveforms, heartbeats, actions
    ...internalActions, // for config, alerting and operators
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
      handler: forgetAll,
    },
    "config.site.*": {
      handler: forgetAll,
    },
  },

  methods: {
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
