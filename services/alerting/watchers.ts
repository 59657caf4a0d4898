/**
 * Watchers (spec: Watcher, ops 1-6): the body's schema and checks, the row a body makes, the view
 * the API shows, and the operations over the port: create, remove, update, fetch, list, count,
 * the transactional save with its evaluation rows and audit entry, and the hidden (system) watcher
 * that follows a condition gateway.
 */
import type { ValidationSchema } from "fastest-validator";
import { requireWrite } from "../../lib/access";
import { diff, type AuditChange } from "../../lib/audit";
import { DomainError, isUniqueViolation } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { MAX_TEXT, compileParams } from "../../lib/validation";
import type { ResolvedFunction } from "../config/contract";
import type { MonitorRegisteredEvent, ResolvedPipeline } from "../pipelines/contract";
import { alertStats, closeActiveAlerts } from "./alerts.repo";
import { initialState } from "./evaluator";
import { MSG } from "./messages";
import { dueAfter, watchedSeries } from "./nodata";
import { watchSeries } from "./nodata.repo";
import type { AlertingPort } from "./port";
import { functionInScope, gatewayInScope, watcherInScope } from "./scope";
import type { Queryable } from "./sql";
import { windowsOf, type SuppressionView } from "./suppressions";
import { isVelocityTag, zoneThreshold, type ZoneBoundaries } from "../../lib/iso20816";
import {
  checkTriggers,
  compileRule,
  CREATE_TEXTS,
  monitorIdsOf,
  normalizeTriggers,
  systemTriggers,
  TRIGGER_SCHEMA,
  UPDATE_TEXTS,
  zoneBoundariesOf,
  zoneMonitorIdsOf,
  type CheckTexts,
  type TriggerBody,
} from "./triggers";
import { deleteTriggers, insertTrigger, watcherTriggers } from "./triggers.repo";
import * as repo from "./watchers.repo";
import type { WatcherRow } from "./watchers.repo";

export interface WatcherBody {
  watcher_name: string;
  function_id: string;
  plant_id: string;
  site_id: string;
  gateway_id: string;
  is_enabled: 0 | 1;
  triggers: TriggerBody[];
}

/** A watcher as the API shows it (spec: Watcher): as stored, with its gateway's name, times as numbers, and its alerts' figures. */
export type WatcherView = Omit<WatcherRow, "created_at_time" | "last_update_time"> & {
  gateway_name: string;
  created_at_time: number;
  last_update_time: number;
  latest_alert_date: number | null;
  total_alerts: number;
};

const text = { type: "string", max: MAX_TEXT } as const;
const optional = { type: "any", optional: true } as const;

/** The read-only watcher fields a client may send back as it read them; they are ignored. */
const readOnly = {
  watcher_id: optional,
  gateway_name: optional,
  created_at_time: optional,
  last_update_time: optional,
  latest_alert_date: optional,
  total_alerts: optional,
  // The fetch's maintenance windows; changed only through their own routes.
  suppressions: optional,
} as const;

/** Query keys of ops 1 and 3 (the system variants). `is_hidden` is also a read-only body field. */
const queryKeys = {
  pipeline_id: { ...text, optional: true },
  monitor_id: { ...text, optional: true },
  is_hidden: { type: "enum", values: [0, 1, "0", "1"], optional: true },
} as const;

/** The full watcher body (create and update). */
export const WATCHER_BODY: ValidationSchema = {
  watcher_name: text,
  function_id: text,
  plant_id: text,
  site_id: text,
  gateway_id: text,
  is_enabled: { type: "enum", values: [0, 1] },
  triggers: { type: "array", max: 100, items: TRIGGER_SCHEMA },
  ...readOnly,
  ...queryKeys,
};

/** What ops 1 and 3 accept before deciding which variant a request is: every key optional. */
export const WATCHER_PARAMS: ValidationSchema = Object.fromEntries(
  Object.entries(WATCHER_BODY).map(([k, rule]) => [k, Array.isArray(rule) ? rule.map((r) => ({ ...r, optional: true })) : { ...(rule as object), optional: true }]),
);

const BODY_KEYS = ["watcher_name", "function_id", "plant_id", "site_id", "gateway_id", "is_enabled", "triggers"];

/** The no-body variant `?is_hidden=1&pipeline_id=…` (and `&monitor_id=…` on update). */
export function isSystemVariant(params: Record<string, unknown>): boolean {
  return String(params.is_hidden) === "1" && typeof params.pipeline_id === "string" && !BODY_KEYS.some((k) => k in params);
}

export const isHiddenFlag = (value: unknown): 0 | 1 => (String(value) === "1" ? 1 : 0);

/** What a body sets of a watcher: its names, place, switch and triggers (stored normalised). */
function fromBody(body: WatcherBody, function_id: string) {
  return {
    watcher_name: body.watcher_name,
    function_id,
    plant_id: body.plant_id,
    site_id: body.site_id,
    gateway_id: body.gateway_id,
    is_enabled: body.is_enabled,
    triggers: normalizeTriggers(body.triggers),
  };
}

/** A new watcher from its body; `function_id` in config's spelling. */
export function newWatcherRow(watcher_id: string, body: WatcherBody, function_id: string, is_hidden: 0 | 1, now: number): WatcherRow {
  return { watcher_id, ...fromBody(body, function_id), is_hidden, created_at_time: now, last_update_time: now };
}

/** A watcher changed by a body; its update time always moves forward, even within one millisecond. */
export function changedWatcherRow(current: WatcherRow, body: WatcherBody, function_id: string, now: number): WatcherRow {
  return { ...current, ...fromBody(body, function_id), last_update_time: Math.max(now, Number(current.last_update_time) + 1) };
}

export function watcherView(row: WatcherRow, gatewayName: string, stats: { total: number; latest: number | null }): WatcherView {
  return {
    watcher_id: row.watcher_id,
    watcher_name: row.watcher_name,
    function_id: row.function_id,
    plant_id: row.plant_id,
    site_id: row.site_id,
    gateway_id: row.gateway_id,
    gateway_name: gatewayName,
    is_enabled: Number(row.is_enabled),
    is_hidden: Number(row.is_hidden),
    created_at_time: Number(row.created_at_time),
    last_update_time: Number(row.last_update_time),
    latest_alert_date: stats.latest,
    total_alerts: stats.total,
    triggers: row.triggers,
  };
}

/**
 * Brings a watcher's evaluation rows in line with its triggers, in the caller's transaction.
 * A trigger whose rule is unchanged keeps its state (and its active alert); a changed, removed
 * or disabled one starts afresh and its active alert closes now: the rule that opened it is gone.
 */
export async function syncTriggers(
  q: Queryable,
  watcher_id: string,
  triggers: TriggerBody[],
  enabled: boolean,
  now: number,
  zones: ReadonlyMap<string, ZoneBoundaries> = new Map(),
): Promise<void> {
  const existing = new Map((await watcherTriggers(q, watcher_id)).map((r) => [r.trigger_id, r]));
  const wanted = new Map(enabled ? triggers.map((t) => [t.id, compileRule(t, zones)]) : []);
  const stale: string[] = [];
  for (const [id, row] of existing) {
    const rule = wanted.get(id);
    if (!rule || JSON.stringify(rule) !== JSON.stringify(row.rule)) stale.push(id);
  }
  if (stale.length) {
    await closeActiveAlerts(q, watcher_id, stale, now);
    await deleteTriggers(q, watcher_id, stale);
  }
  for (const [id, rule] of wanted) {
    if (existing.has(id) && !stale.includes(id)) continue;
    const series = [...new Map(rule.conditions.map((c) => [`${c.monitor_id}\u0000${c.tag_id}`, { monitor_id: c.monitor_id, tag_id: c.tag_id }])).values()];
    await insertTrigger(q, watcher_id, id, rule, initialState(rule), series);
    const quiet = watchedSeries(rule);
    // A new trigger's silence counts from now: its first reading is due within no_data.
    if (quiet.length) await watchSeries(q, watcher_id, id, quiet, rule.noDataMs ?? 0, now, dueAfter(now, rule.noDataMs ?? 0));
  }
}

// ---- the operations ----------------------------------------------------------------------------

const checkBody = compileParams(WATCHER_BODY);

/** The body as its schema and then the spec's own rules (whom to notify, and how) accept it. */
function watcherBodyOf(params: Record<string, unknown>, texts: CheckTexts, hidden: boolean): WatcherBody {
  const invalid = checkBody(params);
  if (invalid !== true) throw new DomainError(400, invalid.message, invalid.field);
  const body = params as unknown as WatcherBody;
  const rule = checkTriggers(body.triggers, texts, hidden);
  if (rule) throw new DomainError(400, rule);
  return body;
}

/** What the audit trail records of a watcher: its body, not its clocks. */
const audited = (w: WatcherRow) => ({
  watcher_name: w.watcher_name,
  function_id: w.function_id,
  gateway_id: w.gateway_id,
  is_enabled: Number(w.is_enabled),
  is_hidden: Number(w.is_hidden),
  triggers: w.triggers,
});

const watcherChange = (action: AuditChange["action"], w: WatcherRow, changes: AuditChange["changes"]): AuditChange => ({
  action,
  entity_type: "watcher",
  entity_id: w.watcher_id,
  site_id: w.site_id,
  plant_id: w.plant_id,
  changes,
});

/** Function in scope, plant and site its own, gateway in that plant, conditions on that plant's monitor tags. */
async function checkPlacement(port: AlertingPort, body: WatcherBody): Promise<ResolvedFunction> {
  const fn = await functionInScope(port, body.function_id, MSG.invalidFunctionId);
  if (body.plant_id !== fn.plant_id) throw new DomainError(400, MSG.invalidInput("plant_id"));
  if (body.site_id !== fn.site_id) throw new DomainError(400, MSG.invalidInput("site_id"));
  const gateway = await port.pipelines.resolve(body.gateway_id).catch(() => undefined);
  // Without a pipelines service to ask (null), the gateway id is taken as given.
  if (gateway === undefined || (gateway === null && port.pipelines.available())) throw new DomainError(400, MSG.invalidInput("gateway_id"));
  if (gateway && gateway.plant_id !== fn.plant_id) throw new DomainError(400, MSG.invalidInput("gateway_id"));
  const monitors = await port.config.monitors(monitorIdsOf(body.triggers));
  for (const [i, t] of body.triggers.entries()) {
    for (const [j, c] of (t.condition ?? []).entries()) {
      const m = monitors.get(c.monitor_id);
      if (!m || m.plant_id !== fn.plant_id) throw new DomainError(400, MSG.invalidInput(`triggers[${i}].condition[${j}].monitor_id`));
      const tag = m.tags.find((x) => x.tag_id === c.tag_id);
      if (!tag) throw new DomainError(400, MSG.invalidInput(`triggers[${i}].condition[${j}].tag_id`));
      // A zone is read from a velocity tag only (ISO 20816-3: mm/s RMS).
      if (zoneThreshold(String(c.threshold)) && !isVelocityTag(m.monitor_type, tag.tag_unit)) {
        throw new DomainError(400, MSG.invalidInput(`triggers[${i}].condition[${j}].threshold`));
      }
    }
  }
  return fn;
}

/** Gateway names by id; an id stands for its name when pipelines cannot say. */
async function gatewayNames(port: AlertingPort, ids: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  if (!port.pipelines.available()) return new Map(unique.map((id) => [id, id]));
  const found = await Promise.all(unique.map((id) => port.pipelines.resolve(id).catch(() => null)));
  return new Map(unique.map((id, i) => [id, found[i]?.pipeline_name ?? id]));
}

async function views(port: AlertingPort, rows: WatcherRow[]): Promise<WatcherView[]> {
  if (rows.length === 0) return [];
  const [stats, names] = await Promise.all([
    alertStats(port.db, rows.map((r) => r.watcher_id)),
    gatewayNames(port, rows.map((r) => r.gateway_id)),
  ]);
  return rows.map((r) => watcherView(r, names.get(r.gateway_id) ?? r.gateway_id, stats.get(r.watcher_id) ?? { total: 0, latest: null }));
}

/**
 * Writes the watcher and its evaluation rows, and its audit entry, in one transaction; the
 * gateway's unique index has the last word. A system watcher remade the same is no change.
 */
async function saveWatcher(port: AlertingPort, row: WatcherRow, before: WatcherRow | null, existsMessage: string): Promise<void> {
  const isNew = before === null;
  const changes = diff(before && audited(before), audited(row));
  // Zone conditions compile in the boundaries of their monitor's asset as it is now.
  const zoneIds = zoneMonitorIdsOf(row.triggers);
  const zones = zoneIds.length ? zoneBoundariesOf((await port.config.monitors(zoneIds)).values()) : new Map<string, ZoneBoundaries>();
  try {
    await port.db.transaction(async (tx) => {
      if (isNew) await repo.insertWatcher(tx, row);
      else await repo.updateWatcher(tx, row);
      await syncTriggers(tx, row.watcher_id, row.triggers, Number(row.is_enabled) === 1, Date.now(), zones);
      if (isNew || Object.keys(changes).length) await port.audit(tx, watcherChange(isNew ? "create" : "update", row, changes));
    });
  } catch (err) {
    if (isUniqueViolation(err, "watchers_one_per_gateway")) throw new DomainError(400, existsMessage);
    throw err;
  }
}

/** A watcher's deletion: its active alerts close now, and its audit entry, in one transaction. */
async function deleteWatcher(port: AlertingPort, w: WatcherRow): Promise<void> {
  await port.db.transaction(async (tx) => {
    await closeActiveAlerts(tx, w.watcher_id, null, Date.now());
    await repo.deleteWatcher(tx, w.watcher_id);
    await port.audit(tx, watcherChange("delete", w, diff(audited(w), null)));
  });
}

/**
 * The hidden watcher of a condition gateway, its triggers made from the thresholds of the
 * monitors registered to it; with a monitor id, only that monitor's triggers are remade.
 */
async function systemWatcher(port: AlertingPort, gateway: ResolvedPipeline, monitorId: string | null, current: WatcherRow | null): Promise<WatcherRow> {
  const ids = monitorId ? [monitorId] : (gateway.monitor_ids ?? []);
  const registered = new Set(gateway.monitor_ids ?? []);
  const monitors = [...(await port.config.monitors(ids)).values()].filter((m) => registered.has(m.monitor_id));
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
}

/**
 * Creates, remakes or (gateway gone) deletes a gateway's hidden watcher; one pipeline at a time
 * per replica. `asked`: the create operation's no-body variant, which makes the watcher whatever
 * the gateway's data type. Answers the hidden watcher's id, null when there is none.
 */
export async function syncSystemWatcher(port: AlertingPort, pipeline_id: string, monitorId: string | null, asked = false): Promise<string | null> {
  return port.inOrder(`system:${pipeline_id}`, async () => {
    const gateway = await port.pipelines.resolve(pipeline_id, true);
    for (let attempt = 0; attempt < 2; attempt++) {
      const current = await repo.watcherOnGateway(port.db, pipeline_id, 1);
      if (!gateway) {
        if (current) await deleteWatcher(port, current);
        return null;
      }
      if (!current && !asked && gateway.data_type !== "Condition") return null;
      const row = await systemWatcher(port, gateway, monitorId, current);
      try {
        await saveWatcher(port, row, current, MSG.watcherExistsOnCreate);
        return row.watcher_id;
      } catch (err) {
        // Another replica created it meanwhile: go round once more and update that one.
        if (!(err instanceof DomainError) || current) throw err;
      }
    }
    return null;
  });
}

/** A monitor's thresholds changed: the hidden watchers with triggers on it remake them. */
export async function followMonitor(port: AlertingPort, monitor_id: string): Promise<void> {
  for (const gateway_id of await repo.hiddenGatewaysWatching(port.db, monitor_id)) await syncSystemWatcher(port, gateway_id, monitor_id);
}

export async function create(port: AlertingPort, p: Record<string, unknown>): Promise<string> {
  if (isSystemVariant(p)) {
    requireWrite(port.user, "watcher", MSG.unauthorizedOperation);
    const gateway = await gatewayInScope(port, String(p.pipeline_id));
    // The spec makes this call right after a condition gateway is created, but the service
    // has made that gateway's system watcher already (its events): it is remade from the
    // gateway's monitors and its id answered, so the call reads the same whichever came first.
    const id = await syncSystemWatcher(port, gateway.pipeline_id, null, true);
    if (!id) throw new DomainError(400, MSG.invalidInput("pipeline_id"));
    return MSG.watcherCreated(id);
  }
  const hidden = isHiddenFlag(p.is_hidden);
  const body = watcherBodyOf(p, CREATE_TEXTS, hidden === 1);
  requireWrite(port.user, "watcher", MSG.unauthorizedOperation);
  const fn = await checkPlacement(port, body);
  if (await repo.watcherOnGateway(port.db, body.gateway_id, hidden)) throw new DomainError(400, MSG.watcherExistsOnCreate);
  const row = newWatcherRow(newId(), body, fn.function_id, hidden, Date.now());
  await saveWatcher(port, row, null, MSG.watcherExistsOnCreate);
  return MSG.watcherCreated(row.watcher_id);
}

export async function remove(port: AlertingPort, p: { watcher_id: string }): Promise<string> {
  const w = await watcherInScope(port, p.watcher_id);
  requireWrite(port.user, "watcher", MSG.unauthorizedOperation);
  await deleteWatcher(port, w);
  return MSG.watcherDeleted(w.watcher_id);
}

export async function update(port: AlertingPort, p: Record<string, unknown>): Promise<string> {
  const current = await watcherInScope(port, String(p.watcher_id));
  requireWrite(port.user, "watcher", MSG.unauthorizedOperation);
  if (isSystemVariant(p)) {
    const gateway = await gatewayInScope(port, String(p.pipeline_id));
    if (current.is_hidden !== 1 || current.gateway_id !== gateway.pipeline_id) throw new DomainError(400, MSG.invalidWatcherId);
    const monitorId = typeof p.monitor_id === "string" ? p.monitor_id : null;
    const row = await systemWatcher(port, gateway, monitorId, current);
    await saveWatcher(port, row, current, MSG.watcherExistsOnUpdate);
    return MSG.watcherUpdated(row.watcher_id);
  }
  const body = watcherBodyOf(p, UPDATE_TEXTS, Number(current.is_hidden) === 1);
  const fn = await checkPlacement(port, body);
  const other = await repo.watcherOnGateway(port.db, body.gateway_id, Number(current.is_hidden));
  if (other && other.watcher_id !== current.watcher_id) throw new DomainError(400, MSG.watcherExistsOnUpdate);
  const row = changedWatcherRow(current, body, fn.function_id, Date.now());
  await saveWatcher(port, row, current, MSG.watcherExistsOnUpdate);
  return MSG.watcherUpdated(row.watcher_id);
}

/** The watcher as listed, plus its maintenance windows; only the fetch shows them. */
export async function get(port: AlertingPort, p: { watcher_id: string }): Promise<WatcherView & { suppressions: SuppressionView[] }> {
  const w = await watcherInScope(port, p.watcher_id);
  const [view] = await views(port, [w]);
  return { ...view, suppressions: await windowsOf(port, w.watcher_id) };
}

export interface ListParams {
  function_id: string;
  is_hidden?: number;
  limit?: number;
  offset?: number;
}

/** `is_hidden=1` lists the system watchers, which the plain list leaves out; the total in X-Total-Count. */
export async function list(port: AlertingPort, p: ListParams): Promise<WatcherView[]> {
  // Queries take config's spelling of the id: a caller's upper-case UUID names the same function.
  const { function_id } = await functionInScope(port, p.function_id, MSG.invalidFunctionId);
  const { rows, total } = await repo.listWatchers(port.db, { ...p, function_id, is_hidden: p.is_hidden ?? 0 });
  port.setTotal(total);
  return views(port, rows);
}

export async function count(port: AlertingPort, p: Omit<ListParams, "limit" | "offset">): Promise<number> {
  const { function_id } = await functionInScope(port, p.function_id, MSG.invalidFunctionId);
  return (await repo.listWatchers(port.db, { ...p, function_id, is_hidden: p.is_hidden ?? 0, limit: 0 })).total;
}

/** A monitor registered to a gateway: a condition gateway's hidden watcher follows it. */
export async function gatewayRegistered(port: AlertingPort, e: MonitorRegisteredEvent): Promise<void> {
  if (e.data_type !== "Condition") return;
  await syncSystemWatcher(port, e.pipeline_id, null);
}
