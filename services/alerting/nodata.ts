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
 * The state lives in `no_data_series` (nodata.repo.ts).
 *
 * The job (`openSilentAlerts`): every NO_DATA_TICK_MS, the gateways of the series now due are asked
 * whether they run (pipelines' contract, cached there; outside any transaction), then one
 * transaction claims those due series (FOR UPDATE SKIP LOCKED: a replica's claim is invisible to
 * the others), marks the silent ones and defers the rest, and opens each silent trigger's no_data
 * alert through the evaluation's opening path (history `opened`, notice staged on the alerts
 * stream, follow-ups), all committed together. A crash before the commit leaves the series due;
 * after it, the series is silent and opens nothing again until it is heard.
 */
import type { AlertOpened } from "./contract";
import { describer, openAlert, openingContext, type Describer, type NoticeSink } from "./evaluation";
import type { ConditionRule, TriggerRule } from "./evaluator";
import * as repo from "./nodata.repo";
import type { WatchedSeries } from "./nodata.repo";
import type { AlertingPort } from "./port";
import type { Queryable } from "./sql";
import { triggerRows, type TriggerRow } from "./triggers.repo";

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

/** A trigger whose series fell silent while its pipeline runs (nodata.ts): its no_data alert opens at `start`. */
export interface Silence {
  t: TriggerRow;
  start: number;
  series: { monitor_id: string; tag_id: string }[];
}

/**
 * Opens no_data alerts in the caller's transaction, through the same opening as a condition's
 * (names, suppression windows, notice staged, follow-ups); a trigger with an active no_data alert
 * already opens none (its unique index). Answers the alerts opened.
 */
export async function openNoDataAlerts(tx: Queryable, silences: Silence[], describe: Describer, notices: NoticeSink): Promise<AlertOpened[]> {
  if (silences.length === 0) return [];
  const context = await openingContext(tx, silences.map((s) => s.t), describe, Math.min(...silences.map((s) => s.start)));
  const opened: AlertOpened[] = [];
  for (const s of silences) {
    const silent = silentConditions(s.t.rule, s.series).map((rule) => ({ rule, value: null }));
    const alert = await openAlert(tx, s.t, s.start, silent, context, notices, "no_data");
    if (alert) opened.push(alert);
  }
  return opened;
}

/** How often silent series are looked for: a no_data alert opens at most this late. */
export const NO_DATA_TICK_MS = 1000;
/** The most series one run claims; the rest wait for the next tick. */
const NO_DATA_BATCH = 200;

/** Whether a gateway runs now: null when pipelines cannot say (not deployed, unreachable, unknown id). */
async function running(port: AlertingPort, gateway_id: string): Promise<boolean | null> {
  const gateway = await port.pipelines.resolve(gateway_id).catch(() => null);
  return gateway ? gateway.status === "running" : null;
}

/** One run of the job: answers how many no_data alerts opened. */
export async function openSilentAlerts(port: AlertingPort, now = Date.now()): Promise<number> {
  const gateways = await repo.dueSilentGateways(port.db, now);
  if (gateways.length === 0) return 0;
  const status = new Map<string, boolean | null>();
  for (const g of gateways) status.set(g, await running(port, g));

  const notices: NoticeSink = (tx, alert) => port.stageNotice(tx, alert.alert_id, alert);
  const opened = await port.db.transaction(async (tx) => {
    const claimed = await repo.claimSilentSeries(tx, now, gateways, NO_DATA_BATCH);
    const settled: { s: WatchedSeries; due_at: number | null }[] = [];
    const silences = new Map<string, { start: number; series: WatchedSeries[] }>();
    for (const s of claimed) {
      const d = decideSilence(s, status.get(s.gateway_id) ?? null, now);
      if (d.kind === "defer") {
        settled.push({ s, due_at: d.due_at });
        continue;
      }
      settled.push({ s, due_at: null });
      const key = `${s.watcher_id}\u0000${s.trigger_id}`;
      const found = silences.get(key);
      if (found) {
        found.start = Math.min(found.start, d.start);
        found.series.push(s);
      } else silences.set(key, { start: d.start, series: [s] });
    }
    await repo.settleSeries(tx, settled);
    if (silences.size === 0) return [];
    const keys = [...silences.values()].map((x) => x.series[0]);
    const rows = new Map((await triggerRows(tx, keys)).map((t) => [`${t.watcher_id}\u0000${t.trigger_id}`, t]));
    const list: Silence[] = [];
    // In key order: two replicas' openings on one trigger queue on its unique index, never cross.
    for (const [key, x] of [...silences.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const t = rows.get(key);
      if (t) list.push({ t, start: x.start, series: x.series });
    }
    return openNoDataAlerts(tx, list, describer(port), notices);
  });
  for (const a of opened) port.count("alerts.opened", { severity: a.severity });
  // Committed: publish the notices now rather than at the outbox's next tick.
  if (opened.length) port.flushNotices();
  return opened.length;
}
