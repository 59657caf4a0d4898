/**
 * alerting: watchers and their triggers, the alerts they open, and the live evaluation of every
 * enabled trigger against the readings stream. This file is the table of contents:
 *
 * - watchers.actions.ts, alerts.actions.ts, kpi.actions.ts: the operations (route, docs, params, handler);
 * - alerts.lifecycle.actions.ts: alarm management (fetch with history, acknowledge, shelve, assign; rules in lifecycle.ts);
 * - suppressions.actions.ts: a watcher's maintenance windows (alerts opened inside one are suppressed);
 * - watchers.methods.ts: scope checks, watcher writes, the system watcher of a condition gateway;
 * - live.ts: the readings stream's consumer, evaluation, series clocks, opened alerts' notices;
 * - nodata.job.ts: `no_data` alerts of series gone silent while their pipeline runs (rules in nodata.ts);
 * - followups.job.ts: re-notifications, escalation tiers and shelf ends when due (rules in followups.ts);
 * - contract.ts: the alerts stream it publishes (through the stream mixin's outbox) for the notifier;
 * - domain: watchers.ts (body, checks, system triggers), evaluator.ts (the rule), evaluation.ts
 *   (a batch in one transaction), alerts.ts, trend.ts, time.ts;
 * - *.repo.ts: the SQL, one file per resource; openapi.ts: its resources as the docs show them.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { AUDIT_STREAM } from "../../lib/audit";
import { DbMixin } from "../../mixins/db.mixin";
import { PeriodicMixin, type PeriodicJobs } from "../../mixins/periodic.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import type { MonitorEvent } from "../config/contract";
import type { MonitorRegisteredEvent, MonitorUnregisteredEvent, PipelineStreams } from "../pipelines/contract";
import type { AlertingLocals, AlertingMethods, AlertingThis, Ctx } from "./alerting.types";
import { ALERT_ACTIONS } from "./alerts.actions";
import { FOLLOWUP_MS, sendDueFollowups } from "./followups.job";
import { NO_DATA_TICK_MS, openSilentAlerts } from "./nodata.job";
import { LIFECYCLE_ACTIONS } from "./alerts.lifecycle.actions";
import { KPI_ACTIONS } from "./kpi.actions";
import { KPI_SCHEMAS } from "./kpi.openapi";
import { LIFECYCLE_SCHEMAS } from "./lifecycle.openapi";
import { CLOCK_FLUSH_MS, LIVE_ACTIONS, LIVE_METHODS, READINGS_STREAM } from "./live";
import { migrations } from "./migrations";
import { ALERTING_SCHEMAS } from "./openapi";
import { hiddenGatewaysWatching } from "./watchers.repo";
import { SUPPRESSION_ACTIONS } from "./suppressions.actions";
import { SUPPRESSION_SCHEMAS } from "./suppressions.openapi";
import { WATCHER_ACTIONS } from "./watchers.actions";
import { WATCHER_METHODS } from "./watchers.methods";

const AlertingService: ServiceSchema<ServiceSettingSchema, AlertingMethods, AlertingLocals> & {
  streams: StreamConsumers<AlertingThis, PipelineStreams>;
  jobs: PeriodicJobs<AlertingThis>;
} = {
  name: "alerting",
  // The stream mixin first: the database opens before the consumer starts and closes after it stops.
  // Its outbox publishes the alerts stream (OUTBOX_SQL in migrations/0003-alerts-stream.ts).
  mixins: [PeriodicMixin(), StreamMixin({ outbox: true, batched: [AUDIT_STREAM] }), DbMixin({ schema: "alerting", migrations })],
  settings: { openapi: { schemas: { ...ALERTING_SCHEMAS, ...KPI_SCHEMAS, ...SUPPRESSION_SCHEMAS, ...LIFECYCLE_SCHEMAS } } },
  streams: READINGS_STREAM,
  jobs: {
    clockFlush: {
      everyMs: CLOCK_FLUSH_MS,
      run() {
        return this.flushClocks();
      },
    },
    // Re-notifications, escalations and shelf ends that are due (followups.job.ts).
    followups: {
      everyMs: FOLLOWUP_MS,
      run() {
        return sendDueFollowups(this);
      },
    },
    // Triggers' series silent for their no_data while the pipeline runs (nodata.job.ts).
    noData: {
      everyMs: NO_DATA_TICK_MS,
      run() {
        return openSilentAlerts(this);
      },
    },
  },

  actions: {
    ...WATCHER_ACTIONS,
    ...SUPPRESSION_ACTIONS,
    ...ALERT_ACTIONS,
    ...LIFECYCLE_ACTIONS,
    ...KPI_ACTIONS,
    ...LIVE_ACTIONS,
  },

  /**
   * The hidden watcher of a condition gateway follows the gateway: its monitors' registrations
   * (sent again whenever the pipeline changes) and their thresholds. The same as the query
   * variants of watcher create and update, for a pipelines service that does not call them.
   */
  events: {
    "pipelines.monitor.registered": {
      async handler(ctx: Ctx<MonitorRegisteredEvent>) {
        if (ctx.params.data_type !== "Condition") return;
        await this.syncSystemWatcher(ctx, ctx.params.pipeline_id, null);
      },
    },
    "pipelines.monitor.unregistered": {
      async handler(ctx: Ctx<MonitorUnregisteredEvent>) {
        await this.syncSystemWatcher(ctx, ctx.params.pipeline_id, null);
      },
    },
    "config.monitor.updated": {
      async handler(ctx: Ctx<MonitorEvent>) {
        for (const gateway_id of await hiddenGatewaysWatching(this.db, ctx.params.monitor_id)) {
          await this.syncSystemWatcher(ctx, gateway_id, ctx.params.monitor_id);
        }
      },
    },
  },

  methods: {
    ...WATCHER_METHODS,
    ...LIVE_METHODS,
  },

  created() {
    this.pipelineTails = new Map();
    this.pendingClocks = new Map();
  },

  /** The jobs have stopped by now: the clocks still pending are written. */
  async stopped() {
    await this.flushClocks();
  },
};

export default AlertingService;
