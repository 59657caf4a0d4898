/**
 * pipelines: gateways and third-party integrations (spec ops 46-57), their actions, and the
 * ingestion API through which readings, waveforms and heartbeats enter the system.
 * Publishes the `readings` and `waveforms` durable streams and
 * emits `pipelines.monitor.registered|unregistered` (their types: contract.ts).
 *
 * Each module of actions carries its operations' routes, params and docs beside the handlers;
 * the handlers call the domain modules (pipelines.ts, fleet.ts, actions.ts, ingest.ts, readings.ts,
 * ...) with a port (port.ts), and each resource's SQL is in its `.repo.ts`. The raw readings' owner
 * also answers their history, from minute and hour rollups staged with the readings and folded
 * every second.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { ANNOUNCE_EVERY_MS } from "../../lib/announcements";
import { AUDIT_STREAM } from "../../lib/audit";
import { LocalCache } from "../../lib/cache";
import { config } from "../../lib/config";
import { DAILY_CHECK_MS } from "../../lib/daily-job";
import { secretsKey } from "../../lib/secrets";
import { DbMixin } from "../../mixins/db.mixin";
import { PeriodicMixin, type PeriodicJobs } from "../../mixins/periodic.mixin";
import { StreamMixin } from "../../mixins/stream.mixin";
import { announceToConfig } from "./announcements";
import { sweepOverdueActions } from "./actions";
import { collectionActions } from "./collection.actions";
import type { PipelinesChanged } from "./contract";
import { edgeActions } from "./edge.actions";
import { fleetActions } from "./fleet.actions";
import { historyActions } from "./history.actions";
import { purgeKeys } from "./idempotency";
import { forgetPipeline } from "./ingest";
import { ingestActions } from "./ingest.actions";
import { internalActions } from "./internal.actions";
import { keysActions } from "./keys.actions";
import { footprintActions } from "./footprint.actions";
import { compressHistory, COMPRESS_EVERY_MS, foldRollups, makePartitionsAhead, NO_RETENTION, ROLLUP_FOLD_MS, runRetention } from "./jobs";
import { migrations } from "./migrations";
import { PIPELINES_SCHEMAS } from "./openapi";
import { Partitions } from "./partitions";
import type { PipelinesLocals, PipelinesMethods, PipelinesThis } from "./pipelines.types";
import { brokerBound, systemPort, userPort } from "./port";
import { forgetNodePipeline } from "./sparkplug";
import { sparkplugActions } from "./sparkplug.actions";
import { sqlConnectActions } from "./sql-connect.actions";
import { thirdPartyActions } from "./thirdparty.actions";

const HOUR_MS = 3600 * 1000;

/** Safe with any number of replicas (jobs.ts). */
const jobs: PeriodicJobs<PipelinesThis> = {
  actionTimeoutSweep: {
    everyMs: () => Math.min(5000, Math.max(100, Math.floor(config().pipelineActionTimeoutMs / 4))),
    run(caller) {
      return sweepOverdueActions(this.system(caller));
    },
  },
  // A gateway's Idempotency-Key is kept 24 h: lookups ignore older ones, this drops them (any replica, any number of times).
  idempotencyKeys: {
    everyMs: HOUR_MS,
    run(caller) {
      return purgeKeys(this.system(caller));
    },
  },
  // The history rollups: batches staged with their readings, folded into minutes and hours.
  rollups: {
    everyMs: ROLLUP_FOLD_MS,
    run(caller) {
      return foldRollups(this.system(caller));
    },
  },
  // The historian: readings past HISTORY_COMPRESS_AFTER into chunks (chunks.ts; one replica at a time).
  compress: {
    everyMs: COMPRESS_EVERY_MS,
    runnable: true,
    run(caller) {
      return compressHistory(this.system(caller));
    },
  },
  // Config's copy of where the pipelines are is made whole again, whatever event it missed (announcements.ts).
  announcePipelines: {
    everyMs: ANNOUNCE_EVERY_MS,
    run() {
      return announceToConfig(this.env, this.broker, true);
    },
  },
  partitionsAhead: {
    everyMs: HOUR_MS,
    run(caller) {
      return makePartitionsAhead(this.system(caller));
    },
  },
  retention: {
    everyMs: DAILY_CHECK_MS,
    daily: true,
    idle: NO_RETENTION,
    run(caller, now) {
      return runRetention(this.system(caller), now);
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
    ...keysActions, // an ingest key rotated
    ...footprintActions, // what each site's readings cost on disk
    ...fleetActions, // all kinds: list, count, start/stop
    ...sqlConnectActions, // a SQL gateway's source, introspected
    ...ingestActions, // the gateways' side: readings, waveforms, heartbeats, actions
    ...historyActions, // a tag's history at any zoom, and CSV export (routes under /_cm)
    ...internalActions, // for config, alerting and operators
    ...sparkplugActions, // the mqtt service's Sparkplug gateways and host
    ...collectionActions, // the collectors service's SQL (and later OPC-UA) pipelines
  },

  events: {
    /** Broadcast to every replica when a pipeline changes: what they cached of it is stale (a Sparkplug node's metric names too). */
    "pipelines.changed": {
      handler(ctx: Context<PipelinesChanged>) {
        forgetPipeline(this.system(ctx), ctx.params.pipeline_id);
        forgetNodePipeline(this.env, ctx.params.pipeline_id);
      },
    },
    /** A monitor's tags or a site's retention changed in config: every replica forgets its mappings. */
    "config.monitor.*": {
      handler(ctx: Context) {
        this.system(ctx).forget();
      },
    },
    "config.site.*": {
      handler(ctx: Context) {
        this.system(ctx).forget();
      },
    },
    /** A config node joined: it is told every pipeline (announcements.ts); before `started` set the env, nothing is told (it announces then). */
    "$services.changed"() {
      return this.env ? announceToConfig(this.env, this.broker) : undefined;
    },
    /** Events sent while this node was cut off are lost: every config node is told every pipeline again. */
    "$transporter.connected"() {
      return this.env ? announceToConfig(this.env, this.broker, true) : undefined;
    },
  },

  methods: {
    use(ctx) {
      return userPort(this.env, ctx);
    },
    system(caller) {
      return systemPort(this.env, this.broker, caller);
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
      ...brokerBound(this.broker),
    };
    await makePartitionsAhead(this.env);
    await announceToConfig(this.env, this.broker);
  },
};

export default PipelinesService;
