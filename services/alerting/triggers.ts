/**
 * A watcher's triggers (spec: Watcher): the trigger body and its schema, the checks the spec names
 * messages for, the rule a trigger compiles to (evaluator.ts), and the system triggers of a hidden
 * watcher. Pure: no database, no bus.
 */
import { machineClassOf, zoneBoundaries, zoneFloor, zoneThreshold, type ZoneBoundaries } from "../../lib/iso20816";
import { MAX_TEXT } from "../../lib/validation";
import type { ResolvedMonitor } from "../config/contract";
import type { NotifyTo } from "./contract";
import { parseDuration } from "./duration";
import { COMPARISONS, type Comparison, type Relation, type TriggerRule } from "./evaluator";
import { MSG } from "./messages";

export interface ConditionBody {
  comparison: Comparison;
  monitor_id: string;
  tag_id: string;
  threshold: string;
}

export interface TriggerBody {
  id: string;
  name: string;
  minimum_duration: string;
  condition?: ConditionBody[];
  notifyTo: NotifyTo;
  severity: number;
  trigger_relation: Relation;
  /** Hysteresis on clear (docs/api-tour.md, "Alarm management"): a number ≥ 0 written as text, in the tags' units. Absent: none. */
  deadband?: string;
  /** Off-delay before an active alert closes, a duration like `minimum_duration`. Absent: none. */
  clear_delay?: string;
  /** A running pipeline sending no reading of a condition's tag this long opens a `no_data` alert (nodata.ts). Absent: none. */
  no_data?: string;
  /** Notify again every period while active, unacknowledged and not shelved (followups.ts). Absent: once. */
  renotify_every?: string;
  /** Tiers told when the alert is still unacknowledged `after` its opening, once each (followups.ts). Absent: none. */
  escalation?: EscalationTier[];
}

/** An escalation tier of a trigger (docs/api-tour.md, "Alarm management"). */
export interface EscalationTier {
  after: string;
  users: string[];
  email?: boolean;
  sms?: boolean;
  whatsapp?: boolean;
}

const text = { type: "string", max: MAX_TEXT } as const;
const conditionSchema = {
  type: "object",
  strict: true,
  props: {
    comparison: { type: "enum", values: [...COMPARISONS] },
    monitor_id: text,
    tag_id: text,
    // The spec's threshold is a string; a JSON number is taken as the same value.
    threshold: [{ type: "string", max: 64 }, { type: "number" }],
  },
} as const;

export const TRIGGER_SCHEMA = {
  type: "object",
  strict: true,
  props: {
    id: text,
    name: text,
    minimum_duration: { type: "string", max: 32 },
    condition: { type: "array", optional: true, max: 50, items: conditionSchema },
    notifyTo: {
      type: "object",
      strict: true,
      props: {
        email: "boolean",
        sms: "boolean",
        whatsapp: "boolean",
        users: { type: "array", max: 200, items: { type: "string", max: 320 } },
      },
    },
    severity: { type: "number", integer: true, min: 1, max: 1000 },
    trigger_relation: { type: "enum", values: ["AND", "OR"] },
    deadband: [
      { type: "string", max: 64, optional: true },
      { type: "number", optional: true },
    ],
    clear_delay: { type: "string", max: 32, optional: true },
    no_data: { type: "string", max: 32, optional: true },
    renotify_every: { type: "string", max: 32, optional: true },
    escalation: {
      type: "array",
      optional: true,
      max: 10,
      items: {
        type: "object",
        strict: true,
        props: {
          after: { type: "string", max: 32 },
          users: { type: "array", max: 200, items: { type: "string", max: 320 } },
          email: { type: "boolean", optional: true },
          sms: { type: "boolean", optional: true },
          whatsapp: { type: "boolean", optional: true },
        },
      },
    },
  },
} as const;

export interface CheckTexts {
  noUser: string;
  noMedium: string;
}

export const CREATE_TEXTS: CheckTexts = { noUser: MSG.noUserOnCreate, noMedium: MSG.noMedium };
export const UPDATE_TEXTS: CheckTexts = { noUser: MSG.noUserOnUpdate, noMedium: MSG.noMedium };

const isNumeric = (v: string): boolean => v.trim() !== "" && Number.isFinite(Number(v));

/**
 * The checks beyond the schema, in the order a user fixes a form: whom to notify and how, then
 * the values a trigger compiles from. System (hidden) watchers notify nobody by design.
 */
export function checkTriggers(triggers: TriggerBody[], texts: CheckTexts, hidden: boolean): string | null {
  const ids = new Set<string>();
  for (const [i, t] of triggers.entries()) {
    if (!hidden && t.notifyTo.users.length === 0) return texts.noUser;
    if (!hidden && !t.notifyTo.email && !t.notifyTo.sms && !t.notifyTo.whatsapp) return texts.noMedium;
    if (ids.has(t.id)) return MSG.invalidInput(`triggers[${i}].id`);
    ids.add(t.id);
    if (parseDuration(t.minimum_duration) === null) return MSG.invalidInput(`triggers[${i}].minimum_duration`);
    if (t.deadband !== undefined && !(isNumeric(String(t.deadband)) && Number(t.deadband) >= 0)) return MSG.invalidInput(`triggers[${i}].deadband`);
    if (t.clear_delay !== undefined && parseDuration(t.clear_delay) === null) return MSG.invalidInput(`triggers[${i}].clear_delay`);
    // A silence of 0 would hold between any two readings.
    if (t.no_data !== undefined && !((parseDuration(t.no_data) ?? 0) > 0)) return MSG.invalidInput(`triggers[${i}].no_data`);
    // A period of 0 would notify on every tick of the follow-up job.
    if (t.renotify_every !== undefined && !((parseDuration(t.renotify_every) ?? 0) > 0)) return MSG.invalidInput(`triggers[${i}].renotify_every`);
    for (const [j, e] of (t.escalation ?? []).entries()) {
      if (parseDuration(e.after) === null) return MSG.invalidInput(`triggers[${i}].escalation[${j}].after`);
      if (e.users.length === 0) return MSG.invalidInput(`triggers[${i}].escalation[${j}].users`);
      if (!e.email && !e.sms && !e.whatsapp) return MSG.invalidInput(`triggers[${i}].escalation[${j}]`);
    }
    for (const [j, c] of (t.condition ?? []).entries()) {
      // A zone holds at or above its level, or exactly at it: `>=` and `==` only.
      const zone = zoneThreshold(String(c.threshold));
      if (zone ? c.comparison !== ">=" && c.comparison !== "==" : !isNumeric(String(c.threshold))) {
        return MSG.invalidInput(`triggers[${i}].condition[${j}].threshold`);
      }
    }
  }
  return null;
}

/** Stored as the spec shows it: thresholds as strings, users without duplicates. */
export function normalizeTriggers(triggers: TriggerBody[]): TriggerBody[] {
  return triggers.map((t) => ({
    id: t.id,
    name: t.name,
    minimum_duration: t.minimum_duration.trim(),
    ...(t.condition ? { condition: t.condition.map((c) => ({ ...c, threshold: String(c.threshold).trim() })) } : {}),
    notifyTo: { email: t.notifyTo.email, sms: t.notifyTo.sms, whatsapp: t.notifyTo.whatsapp, users: [...new Set(t.notifyTo.users)] },
    severity: t.severity,
    trigger_relation: t.trigger_relation,
    ...(t.deadband !== undefined ? { deadband: String(t.deadband).trim() } : {}),
    ...(t.clear_delay !== undefined ? { clear_delay: t.clear_delay.trim() } : {}),
    ...(t.no_data !== undefined ? { no_data: t.no_data.trim() } : {}),
    ...(t.renotify_every !== undefined ? { renotify_every: t.renotify_every.trim() } : {}),
    ...(t.escalation !== undefined
      ? {
          escalation: t.escalation.map((e) => ({
            after: e.after.trim(),
            users: [...new Set(e.users)],
            email: e.email ?? false,
            sms: e.sms ?? false,
            whatsapp: e.whatsapp ?? false,
          })),
        }
      : {}),
  }));
}

/** The monitors of the triggers' zone conditions (their asset's ISO 20816-3 boundaries are compiled in). */
export function zoneMonitorIdsOf(triggers: TriggerBody[]): string[] {
  return [...new Set(triggers.flatMap((t) => (t.condition ?? []).filter((c) => zoneThreshold(String(c.threshold))).map((c) => c.monitor_id)))];
}

/** The zone boundaries of each monitor's asset (its machine_group and foundation, else from kw). */
export function zoneBoundariesOf(monitors: Iterable<Pick<ResolvedMonitor, "monitor_id" | "asset_attributes">>): Map<string, ZoneBoundaries> {
  return new Map([...monitors].map((m) => [m.monitor_id, zoneBoundaries(machineClassOf(m.asset_attributes))]));
}

/**
 * A trigger's rule. A zone condition takes its monitor's boundaries from `zones` (a monitor
 * missing there: those of an asset without attributes, group 2 rigid).
 */
export function compileRule(t: TriggerBody, zones: ReadonlyMap<string, ZoneBoundaries> = new Map()): TriggerRule {
  return {
    conditions: (t.condition ?? []).map((c) => {
      const level = zoneThreshold(String(c.threshold));
      if (!level) return { monitor_id: c.monitor_id, tag_id: c.tag_id, comparison: c.comparison, threshold: Number(c.threshold) };
      const bounds = zones.get(c.monitor_id) ?? zoneBoundaries(machineClassOf({}));
      return { monitor_id: c.monitor_id, tag_id: c.tag_id, comparison: c.comparison, threshold: zoneFloor(level, bounds), zone: { level, bounds } };
    }),
    relation: t.trigger_relation,
    minimumMs: parseDuration(t.minimum_duration) ?? 0,
    // Only when set: a rule without them compiles to the same JSON as before, so its state is kept.
    ...(t.deadband !== undefined ? { deadband: Number(t.deadband) } : {}),
    ...(t.clear_delay !== undefined ? { clearDelayMs: parseDuration(t.clear_delay) ?? 0 } : {}),
    ...(t.no_data !== undefined ? { noDataMs: parseDuration(t.no_data) ?? 0 } : {}),
  };
}

/** What the system watcher needs of a monitor. */
export type MonitorThresholds = Pick<ResolvedMonitor, "monitor_id" | "monitor_name" | "tags">;

const LEVELS = [
  { key: "operational", severity: 3 },
  { key: "caution", severity: 2 },
  { key: "warning", severity: 1 },
] as const;

/**
 * The hidden watcher of a condition gateway: one trigger per band of each monitor tag's
 * thresholds, the same bands as the CM colours (at `operational` yellow, `caution`
 * orange, `warning` red). Bands do not overlap, so an excursion has one alert at a time and
 * escalating closes the lower band's alert and opens the higher one. Nobody is notified.
 */
export function systemTriggers(monitors: MonitorThresholds[]): TriggerBody[] {
  const triggers: TriggerBody[] = [];
  for (const m of monitors) {
    for (const tag of m.tags) {
      const levels = LEVELS.map((l) => ({ ...l, value: Number(tag.thresholds?.[l.key]) }))
        .filter((l) => tag.thresholds?.[l.key] !== undefined && tag.thresholds?.[l.key] !== "" && Number.isFinite(l.value))
        .sort((a, b) => a.value - b.value);
      levels.forEach((l, i) => {
        const upper = levels[i + 1];
        const condition: ConditionBody[] = [{ comparison: ">=", monitor_id: m.monitor_id, tag_id: tag.tag_id, threshold: String(l.value) }];
        if (upper) condition.push({ comparison: "<", monitor_id: m.monitor_id, tag_id: tag.tag_id, threshold: String(upper.value) });
        triggers.push({
          id: `${m.monitor_id}:${tag.tag_id}:${l.key}`,
          name: `${m.monitor_name} ${tag.tag_name} ${l.key}`,
          minimum_duration: "0s",
          condition,
          notifyTo: { email: false, sms: false, whatsapp: false, users: [] },
          severity: l.severity,
          trigger_relation: "AND",
        });
      });
    }
  }
  return triggers;
}

/** The monitors a watcher's conditions name. */
export function monitorIdsOf(triggers: TriggerBody[]): string[] {
  return [...new Set(triggers.flatMap((t) => (t.condition ?? []).map((c) => c.monitor_id)))];
}

