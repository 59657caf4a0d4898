/**
 * pipelines: gateways and third-party integrations (spec ops 46-57), their actions, and the
 * ingestion API through which readings, waveforms and heartbeats enter the system (contract:
 * Pipelines and data ingestion). Publishes the `readings` and `waveforms` durable streams and
 * emits `pipelines.monitor.registered|unregistered` (their types: contract.ts).
 *
 * Each module of actions carries its operations' routes, params and docs beside the handlers;
 * the handlers call the domain (crud.ts, fleet.ts, ingest.ts, sql-connect.ts, history.ts), whose SQL
 * is in repo.ts and history.repo.ts. The raw readings' owner also answers their history, from
 * minute and hour rollups staged with the readings and folded every second.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { AUDIT_STREAM } from "../../lib/audit";
import { LocalCache } from "../../lib/cache";
import { config } from "../../lib/config";
import { DAILY_CHECK_MS } from "../../lib/daily-job";
import { secretsKey } from "../../lib/secrets";
import { DbMixin } from "../../mixins/db.mixin";
import { PeriodicMixin, type PeriodicJobs } from "../../mixins/periodic.mixin";
import { StreamMixin } from "../../mixins/stream.mixin";
import type { KeyedPipeline, PipelinesLocals, PipelinesMethods, PipelinesThis } from "./context";
import { pipelinesEvents, type PipelinesChanged } from "./contract";
import { historyActions } from "./history.actions";
import { purgeKeys } from "./idempotency";
import { edgeActions } from "./edge.actions";
import { fleetActions } from "./fleet.actions";
import { ingestActions } from "./ingest.actions";
import { internalActions } from "./internal.actions";
import { foldRollups, makePartitionsAhead, NO_RETENTION, ROLLUP_FOLD_MS, runRetention, sweepOverdueActions } from "./jobs";
import { migrations } from "./migrations";
import { PIPELINES_SCHEMAS } from "./openapi";
import { Partitions } from "./partitions";
import { sparkplugActions } from "./sparkplug.actions";
import { sqlConnectActions } from "./sql-connect.actions";
import { thirdPartyActions } from "./thirdparty.actions";

const HOUR_MS = 3600 * 1000;

/** Every replica forgets what it cached of pipelines, mappings and retention. */
function forgetAll(ctx: Context): void {
  void pipelinesEvents.broadcast(ctx, "pipelines.changed", {}, "pipelines");
}

/** Safe with any number of replicas (jobs.ts). */
const jobs: PeriodicJobs<PipelinesThis> = {
  actionTimeoutSweep: {
    everyMs: () => Math.min(5000, Math.max(100, Math.floor(config().pipelineActionTimeoutMs / 4))),
    run() {
      return sweepOverdueActions(this.env);
    },
  },
  // A gateway's Idempotency-Key is kept 24 h: lookups ignore older ones, this drops them (any replica, any number of times).
  idempotencyKeys: {
    everyMs: HOUR_MS,
    run() {
      return purgeKeys(this.env);
    },
  },
  // The history rollups: batches staged with their readings, folded into minutes and hours.
  rollups: {
    everyMs: ROLLUP_FOLD_MS,
    run() {
      return foldRollups(this.env);
    },
  },
  partitionsAhead: {
    everyMs: HOUR_MS,
    run() {
      return makePartitionsAhead(this.env);
    },
  },
  retention: {
    everyMs: DAILY_CHECK_MS,
    daily: true,
    idle: NO_RETENTION,
    run(caller, now) {
      return runRetention(this.env, caller, now);
    },
  },
};

const PipelinesService: ServiceSchema<ServiceSettingSchema, PipelinesMethods, PipelinesLocals> & { jobs: PeriodicJobs<PipelinesThis> } = {
  name: "pipelines",
  mixins: [PeriodicMixin(), StreamMixin({ outbox: true, batched: [AUDIT_STREAM] }), DbMixin({ schema: "pipelines", migrations, poolSize: 16 })],
  settings: { openapi: { schemas: PIPELINES_SCHEMAS } },
  jobs,

  actions: {
    ...thirdPartyActions, // third-party pipelines
    ...edgeActions, // edge-server pipelines (gateways)
    ...fleetActions, // all kinds: list, count, start/stop
    ...sqlConnectActions, // a SQL gateway's source, introspected
    ...ingestActions, // the gateways' side: readings, waveforms, heartbeats, actions
    ...historyActions, // a tag's history at any zoom, and CSV export (routes under /_cm)
    ...internalActions, // for config, alerting and operators
    ...sparkplugActions, // the mqtt service's Sparkplug gateways and host
  },

  events: {
    /** Broadcast to every replica when a pipeline changes: what they cached of it is stale. */
    "pipelines.changed": {
      handler(ctx: Context<PipelinesChanged>) {
        const pipeline_id = ctx.params.pipeline_id;
        if (!pipeline_id) {
          this.env.mappings.clear();
          this.env.retention.clear();
          return;
        }
        this.env.mappings.forget(pipeline_id);
        this.env.keys.forgetWhere((p: KeyedPipeline | null) => p?.pipeline_id === pipeline_id);
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

  async started() {
    this.env = {
      db: this.db,
      streams: this.streams,
      partitions: new Partitions(),
      // What every ingest request needs: a lookup per request would cost more than the insert.
      keys: new LocalCache({ ttlMs: 10000 }),
      mappings: new LocalCache({ ttlMs: 5000 }),
      retention: new LocalCache({ ttlMs: 60000 }),
      logger: this.logger,
      secretsKey: secretsKey(config()),
      broker: this.broker,
    };
    await makePartitionsAhead(this.env);
  },
};

export default PipelinesService;
