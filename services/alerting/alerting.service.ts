/**
 * alerting: watchers and their triggers, the alerts they open, and the live evaluation of every
 * enabled trigger against the readings stream. This file is the table of contents:
 *
 * - *.actions.ts: the operations (route, docs, params, a handler of a line) of watchers,
 *   suppressions (a watcher's maintenance windows), alerts, their lifecycle, the KPI and evaluation;
 * - the domain over the port (port.ts): watchers.ts, suppressions.ts, alerts.ts, evaluation.ts
 *   (a batch in one transaction), nodata.ts (silent series), followups.ts (re-notifications,
 *   escalations, shelf ends), scope.ts (what a request names, in the caller's scope);
 * - pure rules: triggers.ts, evaluator.ts, lifecycle.ts, kpi.ts, trend.ts, time.ts, duration.ts;
 * - *.repo.ts: the SQL, one file per resource; migrations/: the schema, one file a migration;
 * - contract.ts: the alerts stream it publishes (through the stream mixin's outbox) for the notifier;
 *   openapi.ts: its resources as the docs show them.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { AUDIT_STREAM } from "../../lib/audit";
import { DbMixin } from "../../mixins/db.mixin";
import { PeriodicMixin, type PeriodicJobs } from "../../mixins/periodic.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import type { MonitorEvent } from "../config/contract";
import type { MonitorRegisteredEvent, MonitorUnregisteredEvent, PipelineStreams } from "../pipelines/contract";
import type { AlertingLocals, AlertingMethods, AlertingThis, AnyCtx, Ctx } from "./alerting.types";
import { ALERT_ACTIONS } from "./alerts.actions";
import { LIFECYCLE_ACTIONS } from "./alerts.lifecycle.actions";
import { CLOCK_FLUSH_MS, flushClocks } from "./evaluation";
import { EVALUATION_ACTIONS, READINGS_STREAM } from "./evaluation.actions";
import { FOLLOWUP_MS, sendDueFollowups } from "./followups";
import { KPI_ACTIONS } from "./kpi.actions";
import { KPI_SCHEMAS } from "./kpi.openapi";
import { LIFECYCLE_SCHEMAS } from "./lifecycle.openapi";
import { migrations } from "./migrations";
import { NO_DATA_TICK_MS, openSilentAlerts } from "./nodata";
import { ALERTING_SCHEMAS } from "./openapi";
import { systemPort, userPort } from "./port";
import { SUPPRESSION_ACTIONS } from "./suppressions.actions";
import { SUPPRESSION_SCHEMAS } from "./suppressions.openapi";
import * as watchers from "./watchers";
import { WATCHER_ACTIONS } from "./watchers.actions";

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
    // Series clocks of batches that changed no state (evaluation.ts).
    clockFlush: {
      everyMs: CLOCK_FLUSH_MS,
      run() {
        return flushClocks(this.system());
      },
    },
    // Re-notifications, escalations and shelf ends that are due (followups.ts).
    followups: {
      everyMs: FOLLOWUP_MS,
      run() {
        return sendDueFollowups(this.system());
      },
    },
    // Triggers' series silent for their no_data while the pipeline runs (nodata.ts).
    noData: {
      everyMs: NO_DATA_TICK_MS,
      run() {
        return openSilentAlerts(this.system());
      },
    },
  },

  actions: {
    ...WATCHER_ACTIONS,
    ...SUPPRESSION_ACTIONS,
    ...ALERT_ACTIONS,
    ...LIFECYCLE_ACTIONS,
    ...KPI_ACTIONS,
    ...EVALUATION_ACTIONS,
  },

  /**
   * The hidden watcher of a condition gateway follows the gateway: its monitors' registrations
   * (sent again whenever the pipeline changes) and their thresholds. The same as the query
   * variants of watcher create and update, for a pipelines service that does not call them.
   */
  events: {
    "pipelines.monitor.registered": {
      async handler(ctx: Ctx<MonitorRegisteredEvent>) {
        await watchers.gatewayRegistered(this.system(ctx), ctx.params);
      },
    },
    "pipelines.monitor.unregistered": {
      async handler(ctx: Ctx<MonitorUnregisteredEvent>) {
        await watchers.syncSystemWatcher(this.system(ctx), ctx.params.pipeline_id, null);
      },
    },
    "config.monitor.updated": {
      async handler(ctx: Ctx<MonitorEvent>) {
        await watchers.followMonitor(this.system(ctx), ctx.params.monitor_id);
      },
    },
  },

  methods: {
    use(ctx: AnyCtx) {
      return userPort(this, ctx);
    },
    system(ctx?: AnyCtx) {
      return systemPort(this, this.broker, ctx);
    },
  },

  created() {
    this.pipelineTails = new Map();
    this.pendingClocks = new Map();
  },

  /** The jobs have stopped by now: the clocks still pending are written. */
  async stopped() {
    await flushClocks(this.system());
  },
};

export default AlertingService;
