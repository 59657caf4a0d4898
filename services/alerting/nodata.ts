/**
 * `no_data` (docs/api-tour.md, "Alarm management"), pure: a trigger with `no_data` watches each
 * series (monitor, tag) its conditions read. A series is heard when one of its readings reaches
 * alerting (arrival time, not the gateway's clock: a gateway that sends old readings late is still
 * heard); it is due `no_data` after it was last heard. A due series whose pipeline is `running`
 * falls silent and opens the trigger's `no_data` alert (one per trigger, beside any condition
 * alert), which starts when the silence reached `no_data`. A pipeline that is not running (stopped,
 * starting, in error, or unknown to alerting) is not expected to send: the silence is counted again
 * from now, so a pipeline just started gets a whole `no_data` before its first reading is missed.
 * The next reading of a silent series closes the alert once none of the trigger's series is silent.
 * The state lives in `no_data_series` (nodata.repo.ts); the job is nodata.job.ts.
 */
import type { ConditionRule, TriggerRule } from "./evaluator";
import type { WatchedSeries } from "./nodata.repo";

export type SilenceDecision =
  /** Silent while running: open the trigger's no_data alert, started at `start`. */
  | { kind: "open"; start: number }
  /** Not expected to send now: due again at `due_at`. */
  | { kind: "defer"; due_at: number };

/** A due series at `now`; `running`: its pipeline's status is `running` (false or null: not running, or not known). */
export function decideSilence(s: Pick<WatchedSeries, "due_at" | "no_data_ms">, running: boolean | null, now: number): SilenceDecision {
  if (running === true) return { kind: "open", start: s.due_at };
  return { kind: "defer", due_at: now + s.no_data_ms };
}

/** When a series heard at `heardAt` is due (goes silent) if nothing more comes. */
export const dueAfter = (heardAt: number, noDataMs: number): number => heardAt + noDataMs;

/** The distinct series a rule's conditions read, when it has `no_data`; none otherwise. */
export function watchedSeries(rule: TriggerRule): { monitor_id: string; tag_id: string }[] {
  if (!rule.noDataMs || rule.noDataMs <= 0) return [];
  const seen = new Map<string, { monitor_id: string; tag_id: string }>();
  for (const c of rule.conditions) seen.set(`${c.monitor_id}\u0000${c.tag_id}`, { monitor_id: c.monitor_id, tag_id: c.tag_id });
  return [...seen.values()];
}

/** The conditions a no_data alert names: those reading the silent series, in rule order. */
export function silentConditions(rule: TriggerRule, silent: { monitor_id: string; tag_id: string }[]): ConditionRule[] {
  return rule.conditions.filter((c) => silent.some((s) => s.monitor_id === c.monitor_id && s.tag_id === c.tag_id));
}
