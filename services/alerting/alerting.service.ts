/**
 * alerting: watchers (ops 1-6), alerts (ops 7-10) and the live evaluation of every enabled
 * trigger against the readings stream. Domain rules live beside this file: watchers.ts (body,
 * checks, system triggers), evaluator.ts (the rule), evaluation.ts (a batch in one transaction),
 * outbox.ts (durable hand-over to the notifier), trend.ts, time.ts.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import { inScope, mayWrite, scopeOf, type Principal, type Scope } from "../../lib/access";
import { DomainError, isUniqueViolation } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { countDomain } from "../../lib/metrics";
import { compileParams, MAX_TEXT } from "../../lib/validation";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import type { MonitorRegisteredEvent, MonitorUnregisteredEvent, ReadingBatch } from "../pipelines/streams";
import type { MonitorEvent } from "../config/events";
import { alertView } from "./alerts";
import { advanceClocks, evaluateBatch, type BatchOutcome, type Describer, type SeriesClock, type Transactional } from "./evaluation";
import type { Reading } from "./evaluator";
import { gatewayNames, resolveFunction, resolveGateway, resolveMonitors, type FunctionSummary, type GatewaySummary } from "./lookups";
import { MSG } from "./messages";
import { migrations } from "./migrations";
import { drainOutbox } from "./outbox";
import * as repo from "./repo";
import { severityKey } from "./severity";
import { rangeOf, type Range } from "./time";
import { bucketCount, MAX_BUCKETS, trendOf } from "./trend";
import {
  checkTriggers,
  CREATE_TEXTS,
  isHiddenFlag,
  isSystemVariant,
  monitorIdsOf,
  normalizeTriggers,
  systemTriggers,
  UPDATE_TEXTS,
  WATCHER_BODY,
  WATCHER_PARAMS,
  watcherView,
  type TriggerBody,
  type WatcherBody,
  type WatcherRow,
  type WatcherView,
} from "./watchers";
import { PAGE_PARAMS, setTotal } from "../../lib/paging";

interface Meta {
  user?: Principal;
  $responseHeaders?: Record<string, string>;
}
type Ctx<P = Record<string, unknown>> = Context<P, Meta>;
type AnyCtx = Context<unknown, Meta>;

interface Locals {
  db: DataSource;
  outboxTimer?: NodeJS.Timeout;
  draining?: Promise<unknown>;
  /** The batch of each pipeline being evaluated: a pipeline's batches run one after another. */
  pipelineTails: Map<string, Promise<unknown>>;
  /** Series clocks of batches that changed no state, written together every CLOCK_FLUSH_MS. */
  pendingClocks: Map<string, SeriesClock>;
  clockTimer?: NodeJS.Timeout;
}

interface Methods {
  scope(ctx: AnyCtx): Scope;
  requireWrite(ctx: AnyCtx): void;
  functionInScope(ctx: AnyCtx, function_id: string, message: string): Promise<FunctionSummary>;
  checkPlacement(ctx: AnyCtx, body: WatcherBody): Promise<FunctionSummary>;
  watcherInScope(ctx: AnyCtx, watcher_id: string): Promise<WatcherRow>;
  views(ctx: AnyCtx, rows: WatcherRow[]): Promise<WatcherView[]>;
  saveWatcher(row: WatcherRow, isNew: boolean, existsMessage: string): Promise<void>;
  systemWatcher(ctx: AnyCtx, gateway: GatewaySummary, monitorId: string | null, current: WatcherRow | null): Promise<WatcherRow>;
  gatewayInScope(ctx: AnyCtx, pipeline_id: string): Promise<GatewaySummary>;
  describer(): Describer;
  evaluate(readings: Reading[], buffered?: boolean): Promise<BatchOutcome>;
  flushClocks(): Promise<void>;
  inPipelineOrder<T>(pipeline_id: string, work: () => Promise<T>): Promise<T>;
  syncSystemWatcher(ctx: AnyCtx, pipeline_id: string, monitorId: string | null, asked?: boolean): Promise<string | null>;
  drain(): Promise<void>;
  tx(): Transactional;
  range(params: { from?: string; to?: string }): Range;
}

const text = { type: "string", max: MAX_TEXT } as const;
const page = PAGE_PARAMS;
const range = { from: { ...text, optional: true }, to: { ...text, optional: true } } as const;
const lists = { unknown: MSG.excessInputs } as const;
const NOTE_MAX = 4000;

const checkBody = compileParams(WATCHER_BODY);

/** The outbox is drained this often; an opening also drains at once. */
const OUTBOX_INTERVAL_MS = 500;
const CLOCK_FLUSH_MS = 200;

/**
 * The readings stream, read by the durable group "alerting": every replica shares it, so each
 * batch is evaluated by one of them. Batches are keyed by pipeline, so the stream hands one
 * pipeline's batches over one at a time in the order stored, across all replicas (the evaluator
 * ignores a reading older than its series' clock: out of order, an excursion could be missed);
 * up to 8 pipelines' batches at once per replica. `inPipelineOrder` stays as a cheap second guard
 * (an unkeyed message from before partitions, read through the group's old consumer). The trigger
 * row locks and the per-series clock make a batch that is redelivered open each alert once.
 */
const streams: StreamConsumers = {
  readings: {
    group: "alerting",
    concurrency: 8,
    async handler(this: unknown, batch: unknown) {
      const self = this as Methods;
      const b = batch as ReadingBatch;
      await self.inPipelineOrder(b.pipeline_id, () => self.evaluate(b.readings, true));
    },
  },
};

const AlertingService: ServiceSchema<ServiceSettingSchema, Methods, Locals> & { streams: StreamConsumers } = {
  name: "alerting",
  // The stream mixin first: the database opens before the consumer starts and closes after it stops.
  mixins: [StreamMixin(), DbMixin({ schema: "alerting", migrations })],
  streams,

  actions: {
    /** Op 1, and its no-body variant `?is_hidden=1&pipeline_id=…` for a condition gateway. */
    "watchers.create": {
      params: WATCHER_PARAMS,
      async handler(ctx: Ctx) {
        const p = ctx.params;
        if (isSystemVariant(p)) {
          this.requireWrite(ctx);
          const gateway = await this.gatewayInScope(ctx, String(p.pipeline_id));
          // The spec makes this call right after a condition gateway is created, but the service
          // has made that gateway's system watcher already (events below): it is remade from the
          // gateway's monitors and its id answered, so the call reads the same whichever came first.
          const id = await this.syncSystemWatcher(ctx, gateway.pipeline_id, null, true);
          if (!id) throw new DomainError(400, MSG.invalidInput("pipeline_id"));
          return MSG.watcherCreated(id);
        }
        const invalid = checkBody(p);
        if (invalid !== true) throw new DomainError(400, invalid);
        const body = p as unknown as WatcherBody;
        const hidden = isHiddenFlag(p.is_hidden);
        const rule = checkTriggers(body.triggers, CREATE_TEXTS, hidden === 1);
        if (rule) throw new DomainError(400, rule);
        this.requireWrite(ctx);
        const fn = await this.checkPlacement(ctx, body);
        if (await repo.watcherOnGateway(this.db, body.gateway_id, hidden)) throw new DomainError(400, MSG.watcherExistsOnCreate);
        const now = Date.now();
        const row: WatcherRow = {
          watcher_id: newId(),
          watcher_name: body.watcher_name,
          function_id: fn.function_id,
          plant_id: body.plant_id,
          site_id: body.site_id,
          gateway_id: body.gateway_id,
          is_enabled: body.is_enabled,
          is_hidden: hidden,
          triggers: normalizeTriggers(body.triggers),
          created_at_time: now,
          last_update_time: now,
        };
        await this.saveWatcher(row, true, MSG.watcherExistsOnCreate);
        return MSG.watcherCreated(row.watcher_id);
      },
    },

    /** Op 2. */
    "watchers.remove": {
      params: { watcher_id: text },
      async handler(ctx: Ctx<{ watcher_id: string }>) {
        const w = await this.watcherInScope(ctx, ctx.params.watcher_id);
        this.requireWrite(ctx);
        await this.db.transaction((tx) => repo.deleteWatcher(tx, w.watcher_id, Date.now()));
        return MSG.watcherDeleted(w.watcher_id);
      },
    },

    /** Op 3, and its no-body variants for a condition gateway (`&pipeline_id=`) or monitor (`&monitor_id=`). */
    "watchers.update": {
      params: { ...WATCHER_PARAMS, watcher_id: text },
      async handler(ctx: Ctx) {
        const p = ctx.params;
        const current = await this.watcherInScope(ctx, String(p.watcher_id));
        this.requireWrite(ctx);
        if (isSystemVariant(p)) {
          const gateway = await this.gatewayInScope(ctx, String(p.pipeline_id));
          if (current.is_hidden !== 1 || current.gateway_id !== gateway.pipeline_id) throw new DomainError(400, MSG.invalidWatcherId);
          const monitorId = typeof p.monitor_id === "string" ? p.monitor_id : null;
          const row = await this.systemWatcher(ctx, gateway, monitorId, current);
          await this.saveWatcher(row, false, MSG.watcherExistsOnUpdate);
          return MSG.watcherUpdated(row.watcher_id);
        }
        const invalid = checkBody(p);
        if (invalid !== true) throw new DomainError(400, invalid);
        const body = p as unknown as WatcherBody;
        const hidden = Number(current.is_hidden) === 1;
        const rule = checkTriggers(body.triggers, UPDATE_TEXTS, hidden);
        if (rule) throw new DomainError(400, rule);
        const fn = await this.checkPlacement(ctx, body);
        const other = await repo.watcherOnGateway(this.db, body.gateway_id, Number(current.is_hidden));
        if (other && other.watcher_id !== current.watcher_id) throw new DomainError(400, MSG.watcherExistsOnUpdate);
        const row: WatcherRow = {
          ...current,
          watcher_name: body.watcher_name,
          function_id: fn.function_id,
          plant_id: body.plant_id,
          site_id: body.site_id,
          gateway_id: body.gateway_id,
          is_enabled: body.is_enabled,
          triggers: normalizeTriggers(body.triggers),
          last_update_time: Math.max(Date.now(), Number(current.last_update_time) + 1),
        };
        await this.saveWatcher(row, false, MSG.watcherExistsOnUpdate);
        return MSG.watcherUpdated(row.watcher_id);
      },
    },

    /** Op 4. */
    "watchers.get": {
      params: { watcher_id: text },
      async handler(ctx: Ctx<{ watcher_id: string }>) {
        const w = await this.watcherInScope(ctx, ctx.params.watcher_id);
        return (await this.views(ctx, [w]))[0];
      },
    },

    /** Op 5. `is_hidden=1` lists the system watchers, which the plain list leaves out. */
    "watchers.list": {
      params: {
        function_id: text,
        is_hidden: { type: "number", integer: true, min: 0, max: 1, convert: true, optional: true },
        ...page,
        $$messages: lists,
      },
      async handler(ctx: Ctx<{ function_id: string; is_hidden?: number; limit?: number; offset?: number }>) {
        // Queries take config's spelling of the id: a caller's upper-case UUID names the same function.
        const { function_id } = await this.functionInScope(ctx, ctx.params.function_id, MSG.invalidFunctionId);
        const { rows, total } = await repo.listWatchers(this.db, { ...ctx.params, function_id, is_hidden: ctx.params.is_hidden ?? 0 });
        setTotal(ctx, total);
        return this.views(ctx, rows);
      },
    },

    /** Op 6. */
    "watchers.count": {
      params: {
        function_id: text,
        is_hidden: { type: "number", integer: true, min: 0, max: 1, convert: true, optional: true },
        $$messages: lists,
      },
      async handler(ctx: Ctx<{ function_id: string; is_hidden?: number }>) {
        const { function_id } = await this.functionInScope(ctx, ctx.params.function_id, MSG.invalidFunctionId);
        const { total } = await repo.listWatchers(this.db, { ...ctx.params, function_id, is_hidden: ctx.params.is_hidden ?? 0, limit: 0 });
        return total;
      },
    },

    /** Op 7: alerts by class that started in the range (hidden watchers' included). */
    "alerts.count": {
      params: { function_id: text, ...range, $$messages: lists },
      async handler(ctx: Ctx<{ function_id: string; from?: string; to?: string }>) {
        const { function_id } = await this.functionInScope(ctx, ctx.params.function_id, MSG.functionDoesNotExist);
        const r = this.range(ctx.params);
        const counts = await repo
          .countAlerts(this.db, { function_id, ...r, scope: this.scope(ctx) })
          .catch(() => Promise.reject(new DomainError(500, MSG.errorOccurred)));
        const result = { high: 0, medium: 0, low: 0 };
        for (const c of counts) result[severityKey(c.severity)] += c.n;
        return result;
      },
    },

    /** Op 8. */
    "alerts.list": {
      params: {
        function_id: text,
        asset_id: { ...text, optional: true },
        is_hidden: { type: "number", integer: true, min: 0, max: 1, convert: true },
        ...range,
        ...page,
        $$messages: lists,
      },
      async handler(ctx: Ctx<{ function_id: string; asset_id?: string; is_hidden: number; from?: string; to?: string; limit?: number; offset?: number }>) {
        const p = ctx.params;
        const { function_id } = await this.functionInScope(ctx, p.function_id, MSG.functionDoesNotExist);
        const r = this.range(p);
        const { rows, total } = await repo.listAlerts(this.db, { ...p, function_id, asset_id: p.asset_id?.toLowerCase(), ...r, scope: this.scope(ctx) });
        setTotal(ctx, total);
        const now = Date.now();
        return rows.map((row) => alertView(row, now));
      },
    },

    /** Op 9: by function or by trigger (the spec's requests use one of the two). */
    "alerts.trend": {
      params: { function_id: { ...text, optional: true }, trigger_id: { ...text, optional: true }, ...range, $$messages: lists },
      async handler(ctx: Ctx<{ function_id?: string; trigger_id?: string; from?: string; to?: string }>) {
        const p = ctx.params;
        if (p.function_id === undefined && p.trigger_id === undefined) throw new DomainError(400, MSG.insufficientInputs);
        const function_id = p.function_id === undefined ? undefined : (await this.functionInScope(ctx, p.function_id, MSG.functionDoesNotExist)).function_id;
        const r = this.range(p);
        if (bucketCount(r) > MAX_BUCKETS) throw new DomainError(400, MSG.invalidInput("from"));
        const starts = await repo
          .alertStarts(this.db, { function_id, trigger_id: p.trigger_id, ...r, scope: this.scope(ctx) })
          .catch(() => Promise.reject(new DomainError(500, MSG.errorOccurred)));
        return trendOf(starts, r);
      },
    },

    /**
     * Op 10 (PUT /_alerting/alerts/<id> and the alias /_alerting/alert/<id>). Anyone with the module may note an alert.
     * The spec names one error for it, 500 `Something went wrong`: an alert that does not exist
     * (or is outside the caller's scope, answered alike) has no note to add, so it answers that.
     */
    "alerts.note": {
      params: { alert_id: text, note: { type: "string", max: NOTE_MAX } },
      async handler(ctx: Ctx<{ alert_id: string; note: string }>) {
        const unknown = () => new DomainError(500, MSG.somethingWentWrong);
        if (!isId(ctx.params.alert_id)) throw unknown();
        try {
          const alert = await repo.getAlert(this.db, ctx.params.alert_id);
          if (!alert || !inScope(this.scope(ctx), alert)) throw unknown();
          await repo.setNote(this.db, alert.alert_id, ctx.params.note);
        } catch (err) {
          if (err instanceof DomainError) throw err;
          this.logger.error("adding a note failed", err);
          throw new DomainError(500, MSG.somethingWentWrong);
        }
        return MSG.noteAdded;
      },
    },

    /**
     * Internal: evaluates a batch of readings (the readings stream's consumer calls it; so do
     * tests and the benchmark). Idempotent: a batch seen before changes nothing.
     */
    evaluate: {
      visibility: "public",
      params: {
        readings: {
          type: "array",
          max: 100_000,
          items: {
            type: "object",
            props: { monitor_id: "string", tag_id: "string", ts: "number", value: "number" },
          },
        },
      },
      async handler(ctx: Ctx<{ readings: Reading[] }>): Promise<Record<keyof BatchOutcome, number>> {
        const outcome = await this.evaluate(ctx.params.readings);
        return { evaluated: outcome.evaluated, opened: outcome.opened.length, closed: outcome.closed.length };
      },
    },
  },

  /**
   * The hidden watcher of a condition gateway follows the gateway: its monitors' registrations
   * (sent again whenever the pipeline changes) and their thresholds. The same as the spec's
   * query variants of ops 1 and 3, for a pipelines service that does not call them.
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
        const hidden = (await this.db.query(
          `SELECT DISTINCT w.gateway_id FROM trigger_series s JOIN watchers w USING (watcher_id)
            WHERE w.is_hidden = 1 AND s.monitor_id = $1`,
          [ctx.params.monitor_id],
        )) as { gateway_id: string }[];
        for (const { gateway_id } of hidden) await this.syncSystemWatcher(ctx, gateway_id, ctx.params.monitor_id);
      },
    },
  },

  methods: {
    /** Internal callers (another service, no user) act for the system. */
    scope(ctx: AnyCtx): Scope {
      return ctx.meta.user ? scopeOf(ctx.meta.user) : { kind: "all" };
    },

    requireWrite(ctx: AnyCtx) {
      if (ctx.meta.user && !mayWrite(ctx.meta.user, "watcher")) throw new DomainError(403, MSG.unauthorizedOperation);
    },

    async functionInScope(ctx: AnyCtx, function_id: string, message: string) {
      const fn = isId(function_id) ? await resolveFunction(ctx, function_id) : null;
      if (!fn || !inScope(this.scope(ctx), fn)) throw new DomainError(400, message);
      return fn;
    },

    /** Function in scope, plant and site its own, gateway in that plant, conditions on that plant's monitor tags. */
    async checkPlacement(ctx: AnyCtx, body: WatcherBody) {
      const fn = await this.functionInScope(ctx, body.function_id, MSG.invalidFunctionId);
      if (body.plant_id !== fn.plant_id) throw new DomainError(400, MSG.invalidInput("plant_id"));
      if (body.site_id !== fn.site_id) throw new DomainError(400, MSG.invalidInput("site_id"));
      const gateway = await resolveGateway(ctx, this.broker, body.gateway_id).catch(() => undefined);
      // Without a pipelines service to ask (null), the gateway id is taken as given.
      if (gateway === undefined || (gateway === null && this.broker.registry.actions.isAvailable("pipelines.resolve"))) {
        throw new DomainError(400, MSG.invalidInput("gateway_id"));
      }
      if (gateway && gateway.plant_id !== fn.plant_id) throw new DomainError(400, MSG.invalidInput("gateway_id"));
      const monitors = new Map((await resolveMonitors(ctx, monitorIdsOf(body.triggers).filter(isId))).map((m) => [m.monitor_id, m]));
      for (const [i, t] of body.triggers.entries()) {
        for (const [j, c] of (t.condition ?? []).entries()) {
          const m = monitors.get(c.monitor_id);
          if (!m || m.plant_id !== fn.plant_id) throw new DomainError(400, MSG.invalidInput(`triggers[${i}].condition[${j}].monitor_id`));
          if (!m.tags.some((tag) => tag.tag_id === c.tag_id)) throw new DomainError(400, MSG.invalidInput(`triggers[${i}].condition[${j}].tag_id`));
        }
      }
      return fn;
    },

    async watcherInScope(ctx: AnyCtx, watcher_id: string) {
      const w = isId(watcher_id) ? await repo.getWatcher(this.db, watcher_id) : null;
      if (!w || !inScope(this.scope(ctx), w)) throw new DomainError(400, MSG.invalidWatcherId);
      return w;
    },

    async views(ctx: AnyCtx, rows: WatcherRow[]) {
      if (rows.length === 0) return [];
      const [stats, names] = await Promise.all([
        repo.alertStats(this.db, rows.map((r) => r.watcher_id)),
        gatewayNames(ctx, this.broker, rows.map((r) => r.gateway_id)),
      ]);
      return rows.map((r) => watcherView(r, names.get(r.gateway_id) ?? r.gateway_id, stats.get(r.watcher_id) ?? { total: 0, latest: null }));
    },

    /** Writes the watcher and its evaluation rows in one transaction; the gateway's unique index has the last word. */
    async saveWatcher(row: WatcherRow, isNew: boolean, existsMessage: string) {
      try {
        await this.db.transaction(async (tx) => {
          if (isNew) await repo.insertWatcher(tx, row);
          else await repo.updateWatcher(tx, row);
          await repo.syncTriggers(tx, row.watcher_id, row.triggers, Number(row.is_enabled) === 1, Date.now());
        });
      } catch (err) {
        if (isUniqueViolation(err, "watchers_one_per_gateway")) throw new DomainError(400, existsMessage);
        throw err;
      }
    },

    async gatewayInScope(ctx: AnyCtx, pipeline_id: string) {
      const gateway = await resolveGateway(ctx, this.broker, pipeline_id);
      if (!gateway || !inScope(this.scope(ctx), gateway)) throw new DomainError(400, MSG.invalidInput("pipeline_id"));
      return gateway;
    },

    /**
     * The hidden watcher of a condition gateway, its triggers made from the thresholds of the
     * monitors registered to it; with a monitor id, only that monitor's triggers are remade.
     */
    async systemWatcher(ctx: AnyCtx, gateway: GatewaySummary, monitorId: string | null, current: WatcherRow | null) {
      const ids = monitorId ? [monitorId] : (gateway.monitor_ids ?? []);
      const registered = new Set(gateway.monitor_ids ?? []);
      const monitors = (await resolveMonitors(ctx, ids.filter(isId))).filter((m) => registered.has(m.monitor_id));
      const fresh = systemTriggers(monitors);
      const kept: TriggerBody[] = monitorId && current ? current.triggers.filter((t) => !(t.condition ?? []).some((c) => c.monitor_id === monitorId)) : [];
      const now = Date.now();
      return {
        watcher_id: current?.watcher_id ?? newId(),
        watcher_name: current?.watcher_name ?? `${gateway.pipeline_name} (system)`,
        function_id: gateway.function_id ?? monitors[0]?.function_id ?? null,
        plant_id: gateway.plant_id,
        site_id: gateway.site_id,
        gateway_id: gateway.pipeline_id,
        is_enabled: current ? Number(current.is_enabled) : 1,
        is_hidden: 1,
        triggers: [...kept, ...fresh],
        created_at_time: current ? Number(current.created_at_time) : now,
        last_update_time: current ? Math.max(now, Number(current.last_update_time) + 1) : now,
      };
    },

    describer(): Describer {
      return {
        monitors: (ids) => resolveMonitors(this.broker, ids.filter(isId)),
        gatewayDataType: async (id) => (await resolveGateway(this.broker, this.broker, id))?.data_type ?? null,
      };
    },

    /** `buffered`: the clocks of a batch that changed nothing are written with the next flush (the stream path). */
    async evaluate(readings: Reading[], buffered = false) {
      const sink = buffered
        ? (clocks: SeriesClock[], tx: repo.Sql | null) => {
            if (tx) return advanceClocks(tx, clocks);
            for (const c of clocks) {
              const key = `${c.monitor_id}\u0000${c.tag_id}`;
              const known = this.pendingClocks.get(key);
              if (!known || known.ts < c.ts) this.pendingClocks.set(key, c);
            }
          }
        : undefined;
      const outcome = await evaluateBatch(this.tx(), readings, this.describer(), sink);
      for (const a of outcome.opened) countDomain(this.broker, "alerts.opened", { severity: a.severity });
      for (const a of outcome.closed) countDomain(this.broker, "alerts.closed", { severity: a.severity });
      if (outcome.opened.length) void this.drain();
      return outcome;
    },

    async flushClocks() {
      if (this.pendingClocks.size === 0) return;
      const clocks = [...this.pendingClocks.values()];
      this.pendingClocks = new Map();
      await advanceClocks(this.db, clocks).catch((err: Error) => this.logger.warn("series clocks not written", err.message));
    },

    async inPipelineOrder<T>(pipeline_id: string, work: () => Promise<T>): Promise<T> {
      const previous = this.pipelineTails.get(pipeline_id) ?? Promise.resolve();
      const run = previous.then(work, work);
      const tail = run.catch(() => undefined);
      this.pipelineTails.set(pipeline_id, tail);
      try {
        return await run;
      } finally {
        if (this.pipelineTails.get(pipeline_id) === tail) this.pipelineTails.delete(pipeline_id);
      }
    },

    /**
     * Creates, remakes or (gateway gone) deletes a gateway's hidden watcher; one pipeline at a time
     * per replica. `asked`: op 1's no-body variant, which makes the watcher whatever the gateway's
     * data type. Answers the hidden watcher's id, null when there is none.
     */
    async syncSystemWatcher(ctx: AnyCtx, pipeline_id: string, monitorId: string | null, asked = false) {
      return this.inPipelineOrder(`system:${pipeline_id}`, async () => {
        const fresh = { meta: { $cache: false } } as const;
        const gateway = this.broker.registry.actions.isAvailable("pipelines.resolve")
          ? ((await ctx.call("pipelines.resolve", { pipeline_id }, fresh)) as GatewaySummary | null)
          : null;
        for (let attempt = 0; attempt < 2; attempt++) {
          const current = await repo.watcherOnGateway(this.db, pipeline_id, 1);
          if (!gateway) {
            if (current) await this.db.transaction((tx) => repo.deleteWatcher(tx, current.watcher_id, Date.now()));
            return null;
          }
          if (!current && !asked && gateway.data_type !== "Condition") return null;
          const row = await this.systemWatcher(ctx, gateway, monitorId, current);
          try {
            await this.saveWatcher(row, !current, MSG.watcherExistsOnCreate);
            return row.watcher_id;
          } catch (err) {
            // Another replica created it meanwhile: go round once more and update that one.
            if (!(err instanceof DomainError) || current) throw err;
          }
        }
        return null;
      });
    },

    tx(): Transactional {
      const db = this.db;
      // TypeORM's postgres driver keeps node-postgres' pool as `master`; named statements go through it.
      const pool = (db.driver as unknown as { master?: { query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }> } }).master;
      return {
        transaction: (work) => db.transaction((m) => work(m)),
        query: (sql, params) => db.query(sql, params),
        prepared: pool ? async (name, text, values) => (await pool.query({ name, text, values })).rows : undefined,
      };
    },

    /** One drain at a time per replica; replicas share the work through SKIP LOCKED. */
    async drain() {
      if (this.draining) return;
      const run = (async () => {
        const notifierUp = this.broker.registry.actions.isAvailable("notifier.alerts.notify");
        if (!notifierUp) return;
        while ((await drainOutbox(this.tx(), (row) => this.broker.call("notifier.alerts.notify", row.payload as object))) > 0) {
          /* keep draining while rows are due */
        }
      })();
      this.draining = run;
      try {
        await run;
      } catch (err) {
        this.logger.warn("outbox drain failed; retrying", (err as Error).message);
      } finally {
        this.draining = undefined;
      }
    },

    range(params: { from?: string; to?: string }) {
      const r = rangeOf(params.from, params.to);
      if ("invalid" in r) throw new DomainError(400, MSG.invalidInput(r.invalid));
      return r;
    },
  },

  created() {
    this.pipelineTails = new Map();
    this.pendingClocks = new Map();
  },

  started() {
    this.outboxTimer = setInterval(() => void this.drain(), OUTBOX_INTERVAL_MS);
    this.clockTimer = setInterval(() => void this.flushClocks(), CLOCK_FLUSH_MS);
  },

  async stopped() {
    if (this.outboxTimer) clearInterval(this.outboxTimer);
    if (this.clockTimer) clearInterval(this.clockTimer);
    await this.flushClocks();
    await this.draining;
  },
};

export default AlertingService;
