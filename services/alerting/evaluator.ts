/**
 * The rule of a trigger, evaluated one reading at a time.
 *
 * Pure: (rule, state, reading) -> (state, transition). The service keeps the state in PostgreSQL
 * so evaluation survives a restart; this module knows nothing of storage or the bus.
 *
 * - Each condition compares one monitor tag's value with its threshold.
 * - A condition listens to its own series only: a reading older than or as old as the last one it
 *   took is ignored (out of order, or a redelivery), which also makes replays idempotent.
 * - Conditions combine with AND (all hold) or OR (any holds); a condition without a reading yet
 *   does not hold. A trigger without conditions never fires.
 * - Time is the readings' own: the trigger's clock is the newest timestamp it has taken. The
 *   combination "has held" from the clock at which it became true; an alert opens when it has held
 *   for longer than `minimum_duration` (held exactly the minimum: not yet). A minimum of 0 opens on
 *   the first reading that makes it true: there is no shorter hold to wait for.
 * - It closes at the first reading after which the combination no longer holds.
 * - `deadband` (hysteresis, optional): once a condition holds, a `>`/`>=` one stops holding only
 *   when the value is below threshold − deadband (a `<`/`<=` one above threshold + deadband);
 *   exactly at that value it still holds. `==`/`!=` have no side to widen and ignore it.
 * - A zone condition (`zone:C`, docs/api-tour.md "Severity") holds while the value's ISO 20816-3
 *   zone is the one named (`==`) or worse (`>=`), from the boundaries of the monitor's asset as
 *   the rule was compiled; `deadband` does not apply to it.
 * - `clearDelayMs` (off-delay, optional): an active alert closes only once the combination has
 *   not held for at least this long (the clock at which it stopped, kept in the state like the
 *   hold); holding again meanwhile keeps the same alert. Absent: today's close on the first reading.
 * - At most one alert is active per trigger: while one is, the trigger does not open another.
 */
import { ZONES, zoneOf, type Zone, type ZoneBoundaries } from "../../lib/iso20816";
import type { Reading } from "../pipelines/contract";

export const COMPARISONS = ["<", "<=", ">", ">=", "==", "!="] as const;
export type Comparison = (typeof COMPARISONS)[number];
export type Relation = "AND" | "OR";

export interface ConditionRule {
  monitor_id: string;
  tag_id: string;
  comparison: Comparison;
  /** A zone condition's: the lowest value of its zone, what an alert shows as threshold. */
  threshold: number;
  /** A zone condition (`>=` or `==` only): the zone named and the boundaries it is read against. */
  zone?: { level: Zone; bounds: ZoneBoundaries };
}

export interface TriggerRule {
  conditions: ConditionRule[];
  relation: Relation;
  minimumMs: number;
  /** Hysteresis on clear, in the tags' units; absent (or 0): none. Only present when set, so a rule without it compiles as before. */
  deadband?: number;
  /** Off-delay (ms) before an active alert closes; absent (or 0): none. */
  clearDelayMs?: number;
  /** `no_data` (ms): a silent series opens a `no_data` alert (nodata.ts, not this evaluator); absent: none. */
  noDataMs?: number;
}

export interface ConditionState {
  /** Timestamp (epoch ms) of the last reading this condition took, null before the first. */
  ts: number | null;
  value: number | null;
  holds: boolean;
}

export interface TriggerState {
  conditions: ConditionState[];
  /** Newest reading timestamp the trigger has taken. */
  clock: number | null;
  /** Clock at which the combination became true, null while it does not hold. */
  holdingSince: number | null;
  /** Start (epoch ms) of the trigger's active alert, null when none is active. */
  activeSince: number | null;
  /** Clock at which the combination stopped holding while an alert is active (clear_delay running); absent or null otherwise. */
  clearingSince?: number | null;
}

/** A reading as the pipelines publish it. */
export type { Reading };

export type Transition =
  | { kind: "open"; start: number; at: number }
  | { kind: "close"; start: number; end: number };

export interface Step {
  state: TriggerState;
  transition: Transition | null;
  /** False when the reading changed nothing (not for this trigger, stale, or a duplicate). */
  changed: boolean;
}

export function initialState(rule: TriggerRule, activeSince: number | null = null): TriggerState {
  return {
    conditions: rule.conditions.map(() => ({ ts: null, value: null, holds: false })),
    clock: null,
    holdingSince: activeSince,
    activeSince,
  };
}

export function compare(value: number, comparison: Comparison, threshold: number): boolean {
  switch (comparison) {
    case "<":
      return value < threshold;
    case "<=":
      return value <= threshold;
    case ">":
      return value > threshold;
    case ">=":
      return value >= threshold;
    case "==":
      return value === threshold;
    case "!=":
      return value !== threshold;
  }
}

/**
 * Whether a condition holds after a reading: the comparison, widened by the deadband for a
 * condition that held before (hysteresis: it holds down to threshold − deadband inclusive).
 */
export function conditionHolds(c: ConditionRule, value: number, heldBefore: boolean, deadband = 0): boolean {
  if (c.zone) {
    const rank = ZONES.indexOf(zoneOf(value, c.zone.bounds)) - ZONES.indexOf(c.zone.level);
    return c.comparison === "==" ? rank === 0 : rank >= 0;
  }
  if (compare(value, c.comparison, c.threshold)) return true;
  if (!heldBefore || !(deadband > 0)) return false;
  switch (c.comparison) {
    case ">":
    case ">=":
      return value >= c.threshold - deadband;
    case "<":
    case "<=":
      return value <= c.threshold + deadband;
    default:
      return false;
  }
}

export function combined(rule: TriggerRule, conditions: ConditionState[]): boolean {
  if (rule.conditions.length === 0) return false;
  return rule.relation === "AND" ? conditions.every((c) => c.holds) : conditions.some((c) => c.holds);
}

export function step(rule: TriggerRule, state: TriggerState, reading: Reading): Step {
  let touched = false;
  const conditions = rule.conditions.map((c, i) => {
    const prev = state.conditions[i] ?? { ts: null, value: null, holds: false };
    if (c.monitor_id !== reading.monitor_id || c.tag_id !== reading.tag_id) return prev;
    if (prev.ts !== null && reading.ts <= prev.ts) return prev;
    touched = true;
    return { ts: reading.ts, value: reading.value, holds: conditionHolds(c, reading.value, prev.holds, rule.deadband) };
  });
  if (!touched) return { state, transition: null, changed: false };

  const clock = state.clock === null ? reading.ts : Math.max(state.clock, reading.ts);
  const next: TriggerState = { conditions, clock, holdingSince: state.holdingSince, activeSince: state.activeSince };
  if (rule.clearDelayMs) next.clearingSince = state.clearingSince ?? null;
  let transition: Transition | null = null;

  if (combined(rule, conditions)) {
    if (rule.clearDelayMs) next.clearingSince = null;
    next.holdingSince ??= clock;
    const held = clock - next.holdingSince;
    if (next.activeSince === null && (rule.minimumMs === 0 || held > rule.minimumMs)) {
      next.activeSince = next.holdingSince;
      transition = { kind: "open", start: next.holdingSince, at: clock };
    }
  } else {
    next.holdingSince = null;
    if (next.activeSince !== null && rule.clearDelayMs) {
      // Off-delay: the alert stays active until the combination has not held for clear_delay.
      next.clearingSince ??= clock;
      if (clock - next.clearingSince < rule.clearDelayMs) return { state: next, transition: null, changed: true };
      next.clearingSince = null;
    }
    if (next.activeSince !== null) transition = { kind: "close", start: next.activeSince, end: clock };
    next.activeSince = null;
  }
  return { state: next, transition, changed: true };
}

/** The conditions that hold now, in rule order: the ones an alert names (monitor, tag, value). */
export function holdingConditions(rule: TriggerRule, state: TriggerState): { rule: ConditionRule; value: number | null }[] {
  return rule.conditions
    .map((c, i) => ({ rule: c, state: state.conditions[i] }))
    .filter((c) => c.state?.holds)
    .map((c) => ({ rule: c.rule, value: c.state.value }));
}
