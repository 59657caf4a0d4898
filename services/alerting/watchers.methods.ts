/**
 * The service's methods for watchers: the caller's scope (the write permission is lib/access's
 * `requireWrite`), the checks that place a watcher (function, plant, site, gateway, monitor tags),
 * its views, its transactional save, and the hidden (system) watcher that follows a condition gateway.
 */
import { inScope, scopeOf, type Scope } from "../../lib/access";
import { diff, stageAudit, type AuditChange } from "../../lib/audit";
import { DomainError, isUniqueViolation } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import type { AlertingThis, AnyCtx, WatcherAudit, WatcherMethods } from "./alerting.types";
import { resolveFunction, resolveMonitors } from "../config/contract";
import { pipelinesClient, type ResolvedPipeline } from "../pipelines/contract";
import { gatewayNames, resolveGateway } from "./lookups";
import { MSG } from "./messages";
import { alertStats, closeActiveAlerts } from "./alerts.repo";
import type { Queryable } from "./sql";
import { monitorIdsOf, systemTriggers, type TriggerBody } from "./triggers";
import { syncTriggers, watcherView, type WatcherBody } from "./watchers";
import * as repo from "./watchers.repo";
import type { WatcherRow } from "./watchers.repo";

/** What the audit trail records of a watcher: its body, not its clocks. */
const audited = (w: WatcherRow) => ({
  watcher_name: w.watcher_name,
  function_id: w.function_id,
  gateway_id: w.gateway_id,
  is_enabled: Number(w.is_enabled),
  is_hidden: Number(w.is_hidden),
  triggers: w.triggers,
});

export const watcherChange = (action: AuditChange["action"], w: WatcherRow, changes: AuditChange["changes"]): AuditChange => ({
  action,
  entity_type: "watcher",
  entity_id: w.watcher_id,
  site_id: w.site_id,
  plant_id: w.plant_id,
  changes,
});

/** A watcher's deletion with its audit entry, in the caller's transaction. */
export async function deleteWatcherAudited(self: AlertingThis, tx: Queryable, ctx: AnyCtx, w: WatcherRow): Promise<void> {
  await closeActiveAlerts(tx, w.watcher_id, null, Date.now());
  await repo.deleteWatcher(tx, w.watcher_id);
  await stageAudit(self.streams, tx, ctx, watcherChange("delete", w, diff(audited(w), null)));
}

export const WATCHER_METHODS: WatcherMethods & ThisType<AlertingThis> = {
  /** Internal callers (another service, no user) act for the system. */
  scope(ctx: AnyCtx): Scope {
    return ctx.meta.user ? scopeOf(ctx.meta.user) : { kind: "all" };
  },

  async functionInScope(ctx: AnyCtx, function_id: string, message: string) {
    const fn = isId(function_id) ? await resolveFunction(ctx, function_id) : null;
    if (!fn || !inScope(this.scope(ctx), fn)) throw new DomainError(400, message);
    return fn;
  },

  async watcherInScope(ctx: AnyCtx, watcher_id: string) {
    const w = isId(watcher_id) ? await repo.getWatcher(this.db, watcher_id) : null;
    if (!w || !inScope(this.scope(ctx), w)) throw new DomainError(400, MSG.invalidWatcherId);
    return w;
  },

  async gatewayInScope(ctx: AnyCtx, pipeline_id: string) {
    const gateway = await resolveGateway(ctx, this.broker, pipeline_id);
    if (!gateway || !inScope(this.scope(ctx), gateway)) throw new DomainError(400, MSG.invalidInput("pipeline_id"));
    return gateway;
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
    const monitors = await resolveMonitors(ctx, monitorIdsOf(body.triggers));
    for (const [i, t] of body.triggers.entries()) {
      for (const [j, c] of (t.condition ?? []).entries()) {
        const m = monitors.get(c.monitor_id);
        if (!m || m.plant_id !== fn.plant_id) throw new DomainError(400, MSG.invalidInput(`triggers[${i}].condition[${j}].monitor_id`));
        if (!m.tags.some((tag) => tag.tag_id === c.tag_id)) throw new DomainError(400, MSG.invalidInput(`triggers[${i}].condition[${j}].tag_id`));
      }
    }
    return fn;
  },

  async views(ctx: AnyCtx, rows: WatcherRow[]) {
    if (rows.length === 0) return [];
    const [stats, names] = await Promise.all([
      alertStats(this.db, rows.map((r) => r.watcher_id)),
      gatewayNames(ctx, this.broker, rows.map((r) => r.gateway_id)),
    ]);
    return rows.map((r) => watcherView(r, names.get(r.gateway_id) ?? r.gateway_id, stats.get(r.watcher_id) ?? { total: 0, latest: null }));
  },

  /**
   * Writes the watcher and its evaluation rows, and its audit entry, in one transaction; the
   * gateway's unique index has the last word. A system watcher remade the same is no change.
   */
  async saveWatcher(row: WatcherRow, isNew: boolean, existsMessage: string, audit: WatcherAudit) {
    const changes = diff(audit.before && audited(audit.before), audited(row));
    try {
      await this.db.transaction(async (tx) => {
        if (isNew) await repo.insertWatcher(tx, row);
        else await repo.updateWatcher(tx, row);
        await syncTriggers(tx, row.watcher_id, row.triggers, Number(row.is_enabled) === 1, Date.now());
        if (isNew || Object.keys(changes).length) await stageAudit(this.streams, tx, audit.ctx, watcherChange(isNew ? "create" : "update", row, changes));
      });
    } catch (err) {
      if (isUniqueViolation(err, "watchers_one_per_gateway")) throw new DomainError(400, existsMessage);
      throw err;
    }
  },

  /**
   * The hidden watcher of a condition gateway, its triggers made from the thresholds of the
   * monitors registered to it; with a monitor id, only that monitor's triggers are remade.
   */
  async systemWatcher(ctx: AnyCtx, gateway: ResolvedPipeline, monitorId: string | null, current: WatcherRow | null) {
    const ids = monitorId ? [monitorId] : (gateway.monitor_ids ?? []);
    const registered = new Set(gateway.monitor_ids ?? []);
    const monitors = [...(await resolveMonitors(ctx, ids)).values()].filter((m) => registered.has(m.monitor_id));
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

  /**
   * Creates, remakes or (gateway gone) deletes a gateway's hidden watcher; one pipeline at a time
   * per replica. `asked`: the create operation's no-body variant, which makes the watcher whatever
   * the gateway's data type. Answers the hidden watcher's id, null when there is none.
   */
  async syncSystemWatcher(ctx: AnyCtx, pipeline_id: string, monitorId: string | null, asked = false) {
    return this.inPipelineOrder(`system:${pipeline_id}`, async () => {
      const fresh = { meta: { $cache: false } } as const;
      const gateway = this.broker.registry.actions.isAvailable("pipelines.resolve")
        ? await pipelinesClient.call(ctx, "resolve", { pipeline_id }, fresh)
        : null;
      for (let attempt = 0; attempt < 2; attempt++) {
        const current = await repo.watcherOnGateway(this.db, pipeline_id, 1);
        if (!gateway) {
          if (current) await this.db.transaction((tx) => deleteWatcherAudited(this, tx, ctx, current));
          return null;
        }
        if (!current && !asked && gateway.data_type !== "Condition") return null;
        const row = await this.systemWatcher(ctx, gateway, monitorId, current);
        try {
          await this.saveWatcher(row, !current, MSG.watcherExistsOnCreate, { ctx, before: current });
          return row.watcher_id;
        } catch (err) {
          // Another replica created it meanwhile: go round once more and update that one.
          if (!(err instanceof DomainError) || current) throw err;
        }
      }
      return null;
    });
  },
};
