/**
 * Watchers (spec: Watcher, ops 1-6): the body's schema, the row a body makes, the view the API
 * shows. Pure: no database, no bus.
 */
import type { ValidationSchema } from "fastest-validator";
import { MAX_TEXT } from "../../lib/validation";
import { closeActiveAlerts } from "./alerts.repo";
import { initialState } from "./evaluator";
import { dueAfter, watchedSeries } from "./nodata";
import { watchSeries } from "./nodata.repo";
import type { Queryable } from "./sql";
import { compileRule, normalizeTriggers, TRIGGER_SCHEMA, type TriggerBody } from "./triggers";
import { deleteTriggers, insertTrigger, watcherTriggers } from "./triggers.repo";
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

/** A watcher as the API shows it (spec: Watcher). */
export interface WatcherView {
  watcher_id: string;
  watcher_name: string;
  function_id: string | null;
  plant_id: string;
  site_id: string;
  gateway_id: string;
  gateway_name: string;
  is_enabled: number;
  is_hidden: number;
  created_at_time: number;
  last_update_time: number;
  latest_alert_date: number | null;
  total_alerts: number;
  triggers: TriggerBody[];
}

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
export async function syncTriggers(q: Queryable, watcher_id: string, triggers: TriggerBody[], enabled: boolean, now: number): Promise<void> {
  const existing = new Map((await watcherTriggers(q, watcher_id)).map((r) => [r.trigger_id, r]));
  const wanted = new Map(enabled ? triggers.map((t) => [t.id, compileRule(t)]) : []);
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
