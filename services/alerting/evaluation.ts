/**
 * Live evaluation of a batch of readings:
 *
 * 1. readings no newer than their series' clock (the newest timestamp taken) are late or
 *    redelivered and are dropped;
 * 2. fast path, no lock: the triggers the remaining series concern are read and the readings run
 *    through the evaluator in timestamp order; when no trigger changes in what its state must keep
 *    (threshold sides, hold, active alert), only the series clocks move: one more statement;
 * 3. otherwise, in one transaction: the changing triggers are locked (FOR UPDATE, in key order so
 *    replicas never deadlock) and evaluated again from their state as it now stands; states,
 *    clocks, closing alerts, and opening alerts with their notices (staged on the alerts stream)
 *    are written (ON CONFLICT DO NOTHING against the one-active-alert-per-trigger index).
 *
 * A batch delivered twice, or to two replicas at once, opens each alert exactly once: the state
 * is read and written under the row lock, and the evaluator ignores a reading no newer than the
 * last one its condition took. The statements themselves are in the *.repo.ts files.
 */
import { newId } from "../../lib/ids";
import type { AlertingPort } from "./port";
import { closeNoDataAlerts, closeTriggerAlert, insertAlert } from "./alerts.repo";
import { insertFollowups } from "./followups.repo";
import { addHistory } from "./history.repo";
import { heardFrom } from "./nodata.repo";
import type { Queryable, Transactional } from "./sql";
import { suppressionWindows } from "./suppressions.repo";
import { advanceClocks, batchState, lockTriggers, writeTriggerStates, type SeriesClock, type TriggerRow } from "./triggers.repo";
import { watchersById, type WatcherRow } from "./watchers.repo";
import { holdingConditions, step, type ConditionRule, type Reading, type TriggerState } from "./evaluator";
import { severityName } from "./severity";
import { isoWithOffset } from "./time";
import { typeOfData } from "./alerts";
import type { ResolvedMonitor } from "../config/contract";
import type { AlertCondition, AlertOpened, NotifyTo } from "./contract";
import { followupRule, openingFollowups } from "./followups";

/** What an opening needs to know of the world, asked of other services (cached there). */
export interface Describer {
  monitors(ids: string[]): Promise<ResolvedMonitor[]>;
  gatewayDataType(gateway_id: string): Promise<string | null>;
}

/** An alert a batch closed. */
export interface AlertClosed {
  alert_id: string;
  severity: string;
}

export interface BatchOutcome {
  evaluated: number;
  opened: AlertOpened[];
  closed: AlertClosed[];
}

/**
 * Stages an opened alert's notice inside the transaction that opens it, so the alert and its
 * notice commit together (the stream layer's outbox; see port.ts, stageNotice).
 */
export type NoticeSink = (tx: Queryable, alert: AlertOpened) => Promise<void>;

const seriesKey = (monitor_id: string, tag_id: string): string => `${monitor_id}\u0000${tag_id}`;

/**
 * A trigger's readings of the batch in timestamp order. The series' lists are sorted once per batch
 * (inTimeOrder), so a trigger on one series (the common case) takes its list as it is; one on
 * several merges theirs (a stable sort: ties keep their series' order, as before).
 */
function readingsOf(t: TriggerRow, bySeries: Map<string, Reading[]>): Reading[] {
  const keys = new Set(t.rule.conditions.map((c) => seriesKey(c.monitor_id, c.tag_id)));
  if (keys.size === 1) return bySeries.get(keys.values().next().value!) ?? [];
  return [...keys].flatMap((k) => bySeries.get(k) ?? []).sort(byTime);
}

const byTime = (a: Reading, b: Reading): number => a.ts - b.ts;

/** Sorts each series' readings by timestamp, once for the batch's every trigger (stable: equal timestamps keep the batch's order). */
function inTimeOrder(bySeries: Map<string, Reading[]>): void {
  for (const list of bySeries.values()) list.sort(byTime);
}

/** What a state must keep: the sides of the thresholds, the hold and the off-delay; a reading's time alone is not. */
const essence = (s: TriggerState): string => JSON.stringify([s.conditions.map((c) => c.holds), s.holdingSince, s.activeSince, s.clearingSince ?? null]);

/**
 * A trigger's readings of the batch, in timestamp order, through the evaluator. `significant`
 * when the state changed in what it must keep; otherwise the state is not written (the series
 * clocks still move, so a late reading is recognised as late all the same).
 */
function run(t: TriggerRow, readings: Reading[]) {
  let state = t.state;
  const openings: { start: number; state: TriggerState }[] = [];
  const closings: number[] = [];
  for (const reading of readings) {
    const s = step(t.rule, state, reading);
    if (!s.changed) continue;
    state = s.state;
    if (s.transition?.kind === "open") openings.push({ start: s.transition.start, state });
    if (s.transition?.kind === "close") closings.push(s.transition.end);
  }
  const significant = openings.length > 0 || closings.length > 0 || essence(state) !== essence(t.state);
  return { state, openings, closings, significant };
}

/** The newest timestamp of each series of a batch. */
function newestOf(bySeries: Map<string, Reading[]>): SeriesClock[] {
  return [...bySeries.values()].map((l) => ({ monitor_id: l[0].monitor_id, tag_id: l[0].tag_id, ts: Math.max(...l.map((r) => r.ts)) }));
}

/**
 * Where a batch's series clocks go: with a transaction, written in it (a batch that changed a
 * state); without, to a buffer the caller writes a little later. Losing the buffer in a crash is
 * harmless: those batches changed no state, so evaluated again they change none either.
 */
export type ClockSink = (clocks: SeriesClock[], tx: Queryable | null) => Promise<void> | void;

export async function evaluateBatch(
  db: Transactional,
  readings: Reading[],
  describe: Describer,
  notices: NoticeSink,
  sink?: ClockSink,
): Promise<BatchOutcome> {
  const clocks: ClockSink = sink ?? ((c, tx) => advanceClocks(tx ?? db, c));
  const outcome: BatchOutcome = { evaluated: 0, opened: [], closed: [] };
  const bySeries = new Map<string, Reading[]>();
  for (const r of readings) {
    const key = seriesKey(r.monitor_id, r.tag_id);
    const list = bySeries.get(key);
    if (list) list.push(r);
    else bySeries.set(key, [r]);
  }
  if (bySeries.size === 0) return outcome;
  const monitors = [...bySeries.values()].map((l) => l[0].monitor_id);
  const tags = [...bySeries.values()].map((l) => l[0].tag_id);
  // One round trip: the series' clocks and the triggers they concern, with rule and state.
  const { clocks: known, triggers: seen } = await batchState(db, monitors, tags);
  for (const c of known) {
    const key = seriesKey(c.monitor_id, c.tag_id);
    const fresh = (bySeries.get(key) ?? []).filter((x) => x.ts > c.ts);
    if (fresh.length) bySeries.set(key, fresh);
    else bySeries.delete(key);
  }
  // no_data: the series heard again (not late) are due again, and a silence they end closes its alert.
  if (bySeries.size && seen.some((t) => t.rule.noDataMs)) outcome.closed.push(...(await heard(db, bySeries)));
  if (bySeries.size === 0 || seen.length === 0) {
    await clocks(newestOf(bySeries), null);
    return outcome;
  }
  inTimeOrder(bySeries);
  const significant: TriggerRow[] = [];
  for (const t of seen) {
    const mine = readingsOf(t, bySeries);
    outcome.evaluated += mine.length;
    if (run(t, mine).significant) significant.push(t);
  }
  if (significant.length === 0) {
    await clocks(newestOf(bySeries), null);
    return outcome;
  }

  return db.transaction(async (tx) => {
    // Slow path: the triggers whose state would change, locked in key order (replicas never
    // deadlock) and evaluated again from the state as it now stands.
    const locked = await lockTriggers(tx, significant);

    const changed: TriggerRow[] = [];
    const openings: { t: TriggerRow; start: number; state: TriggerState }[] = [];
    const closings: { t: TriggerRow; end: number }[] = [];
    for (const t of locked) {
      const r = run(t, readingsOf(t, bySeries));
      openings.push(...r.openings.map((o) => ({ t, ...o })));
      closings.push(...r.closings.map((end) => ({ t, end })));
      if (r.significant) changed.push({ ...t, state: r.state });
    }
    // The clocks move in the transaction that writes the states: a batch whose transaction
    // failed is not taken for late when it comes again.
    await clocks(newestOf(bySeries), tx);
    if (changed.length === 0) return outcome;

    await writeTriggerStates(tx, changed);

    // Transitions in the order they happened per trigger: a close always precedes a later open.
    const events = [
      ...closings.map((c) => ({ kind: "close" as const, at: c.end, c })),
      ...openings.map((o) => ({ kind: "open" as const, at: o.start, o })),
    ].sort((a, b) => a.at - b.at || (a.kind === "close" ? -1 : 1));
    const context = openings.length
      ? await openingContext(tx, openings.map((o) => o.t), describe, Math.min(...openings.map((o) => o.start)))
      : null;
    for (const e of events) {
      if (e.kind === "close") {
        const closed = await closeTriggerAlert(tx, e.c.t.watcher_id, e.c.t.trigger_id, e.c.end);
        outcome.closed.push(...closed.map((r) => ({ alert_id: r.alert_id, severity: severityName(r.severity) })));
      } else if (context) {
        const opened = await openAlert(tx, e.o.t, e.o.start, holdingConditions(e.o.t.rule, e.o.state), context, notices);
        if (opened) outcome.opened.push(opened);
      }
    }
    return outcome;
  });
}

/** A batch's series heard at arrival: due again, and the no_data alerts of silences they ended closed. */
async function heard(db: Queryable, bySeries: Map<string, Reading[]>): Promise<AlertClosed[]> {
  const now = Date.now();
  const series = [...bySeries.values()].map((l) => l[0]);
  const ended = await heardFrom(
    db,
    series.map((r) => r.monitor_id),
    series.map((r) => r.tag_id),
    now,
  );
  if (ended.length === 0) return [];
  const closed = await closeNoDataAlerts(db, ended, now);
  return closed.map((r) => ({ alert_id: r.alert_id, severity: severityName(r.severity) }));
}

/** The opening notice's `notified` detail, short like the follow-ups' ("tier 1: …", "re-notification 2"). */
function openingNoticeDetail(n: NotifyTo): string {
  const media = (["email", "sms", "whatsapp"] as const).filter((m) => n[m]);
  return `opening: ${n.users.length} ${n.users.length === 1 ? "recipient" : "recipients"} by ${media.join(", ")}`;
}

export interface OpeningContext {
  watchers: Map<string, WatcherRow>;
  monitors: Map<string, ResolvedMonitor>;
  dataTypes: Map<string, string | null>;
  /** The watchers' maintenance windows that end at or after the earliest opening's start. */
  windows: { watcher_id: string; from: number; to: number }[];
}

export async function openingContext(tx: Queryable, triggers: TriggerRow[], describe: Describer, since: number): Promise<OpeningContext> {
  const watcherIds = [...new Set(triggers.map((t) => t.watcher_id))];
  const watchers = await watchersById(tx, watcherIds);
  const windows = await suppressionWindows(tx, watcherIds, since);
  const monitorIds = [...new Set(triggers.flatMap((t) => t.rule.conditions.map((c) => c.monitor_id)))];
  // An alert must open even when config cannot name its monitor right now: ids stand in for names.
  const monitors = await describe.monitors(monitorIds).catch(() => [] as ResolvedMonitor[]);
  const gateways = [...new Set(watchers.map((w) => w.gateway_id))];
  const dataTypes = new Map<string, string | null>();
  for (const g of gateways) dataTypes.set(g, await describe.gatewayDataType(g).catch(() => null));
  return {
    watchers: new Map(watchers.map((w) => [w.watcher_id, w])),
    monitors: new Map(monitors.map((m) => [m.monitor_id, m])),
    dataTypes,
    windows,
  };
}

/** Opens an alert in the caller's transaction (names, suppression windows, notice staged, follow-ups); null when the trigger has an active one already. */
export async function openAlert(
  tx: Queryable,
  t: TriggerRow,
  start: number,
  holding: { rule: ConditionRule; value: number | null }[],
  opening: OpeningContext,
  notices: NoticeSink,
  reason: "condition" | "no_data" = "condition",
): Promise<AlertOpened | null> {
  const w = opening.watchers.get(t.watcher_id);
  const trigger = w?.triggers.find((x) => x.id === t.trigger_id);
  if (!w || !trigger) return null;
  const conditions: AlertCondition[] = holding.map(({ rule, value }) => {
    const m = opening.monitors.get(rule.monitor_id);
    const tag = m?.tags.find((x) => x.tag_id === rule.tag_id);
    return {
      monitor_id: rule.monitor_id,
      monitor: m?.monitor_name ?? rule.monitor_id,
      tag_id: rule.tag_id,
      tag: tag?.tag_name ?? rule.tag_id,
      tag_unit: tag?.tag_unit ?? "",
      comparison: rule.comparison,
      threshold: rule.threshold,
      value,
    };
  });
  const first = conditions[0];
  const monitor = first ? opening.monitors.get(first.monitor_id) : undefined;
  const alert_id = newId();
  // Opened inside a maintenance window of its watcher (its start, the alert's start_time, in [from, to]).
  const suppressed = opening.windows.some((x) => x.watcher_id === w.watcher_id && x.from <= start && start <= x.to);
  const tagMap = Object.fromEntries(conditions.map((c) => [c.tag_id, c.tag]));
  const details = {
    function_name: monitor?.function_name ?? "",
    plant_name: monitor?.plant_name ?? "",
    site_name: monitor?.site_name ?? "",
    conditions,
  };
  const inserted = await insertAlert(tx, {
    alert_id,
    watcher_id: w.watcher_id,
    watcher_name: w.watcher_name,
    trigger_id: trigger.id,
    trigger_name: trigger.name,
    is_hidden: w.is_hidden,
    // Alerts are listed by function: the monitor's own function, for a plant-wide gateway's watcher too.
    function_id: monitor?.function_id ?? w.function_id,
    plant_id: w.plant_id,
    site_id: w.site_id,
    asset_id: monitor?.asset_id ?? null,
    asset: monitor?.asset_name ?? "",
    monitor_id: first?.monitor_id ?? "",
    monitor: first?.monitor ?? "",
    tag: tagMap,
    type_of_data: typeOfData(opening.dataTypes.get(w.gateway_id), monitor?.monitor_type),
    severity: trigger.severity,
    start_ts: start,
    details,
    opened_at: Date.now(),
    reason,
    suppressed,
  });
  if (!inserted) return null;
  const payload: AlertOpened = {
    alert_id,
    watcher_id: w.watcher_id,
    watcher_name: w.watcher_name,
    trigger_id: trigger.id,
    trigger_name: trigger.name,
    severity: severityName(trigger.severity),
    start_time: isoWithOffset(start),
    start_ts: start,
    site: details.site_name,
    plant: details.plant_name,
    site_id: w.site_id,
    plant_id: w.plant_id,
    // The notifier shows times in the site's zone; a notice without one is read as UTC (or asks config).
    ...(monitor?.timezone ? { timezone: monitor.timezone } : {}),
    function: details.function_name,
    asset: monitor?.asset_name ?? "",
    monitor: first?.monitor ?? "",
    tag: first?.tag ?? "",
    value: first?.value ?? null,
    threshold: first?.threshold ?? null,
    comparison: first?.comparison ?? "",
    unit: first?.tag_unit ?? "",
    conditions,
    notifyTo: trigger.notifyTo,
    // A silence, not a value: the notifier says which tag went quiet and for how long.
    ...(reason === "no_data" ? { reason, no_data: trigger.no_data ?? "" } : {}),
  };
  const wantsNotice = trigger.notifyTo.users.length > 0 && (trigger.notifyTo.email || trigger.notifyTo.sms || trigger.notifyTo.whatsapp);
  // A suppressed alert is recorded, not notified: no notice is staged, no `notified`, and no follow-up.
  if (wantsNotice && !suppressed) {
    await notices(tx, payload);
    // The notice is part of the opening: at the opening's time, so opened → notified → closed keep
    // their order whatever clock the readings carry (a backfilled batch, a late series).
    await addHistory(tx, alert_id, { at: start, by: null, action: "notified", detail: openingNoticeDetail(trigger.notifyTo) });
  }
  // Re-notifications and escalations are due from the opening; the notice is kept for them and a shelf's end.
  const followups = openingFollowups(alert_id, start, followupRule(trigger));
  if (!suppressed && (wantsNotice || followups.length > 0)) await insertFollowups(tx, alert_id, payload, followups);
  return payload;
}

// ---- the readings stream's evaluation, over the port --------------------------------------------

/** Series clocks of batches that changed no state are written this often. */
export const CLOCK_FLUSH_MS = 200;

const CLOCK_WARN_EVERY_MS = 10_000;
let clockWarnedAt = 0;

/** Buffers series clocks to be written, the latest of each series. */
function keepClocks(pending: Map<string, SeriesClock>, clocks: SeriesClock[]): void {
  for (const c of clocks) {
    const key = seriesKey(c.monitor_id, c.tag_id);
    const known = pending.get(key);
    if (!known || known.ts < c.ts) pending.set(key, c);
  }
}

/** What an opening asks of config and pipelines, through the port. */
export function describer(port: AlertingPort): Describer {
  return {
    monitors: async (ids) => [...(await port.config.monitors(ids)).values()],
    gatewayDataType: async (id) => (await port.pipelines.resolve(id))?.data_type ?? null,
  };
}

/**
 * Evaluates a batch of readings (evaluateBatch), counts what opened and closed, and publishes the
 * notices once committed. `buffered`: the clocks of a batch that changed nothing are written with
 * the next flush (the stream path).
 */
export async function evaluate(port: AlertingPort, readings: Reading[], buffered = false): Promise<BatchOutcome> {
  const sink = buffered
    ? (clocks: SeriesClock[], tx: Queryable | null) => {
        if (tx) return advanceClocks(tx, clocks);
        keepClocks(port.pendingClocks, clocks);
      }
    : undefined;
  const notices: NoticeSink = (tx, alert) => port.stageNotice(tx, alert.alert_id, alert);
  const outcome = await evaluateBatch(port.db, readings, describer(port), notices, sink);
  for (const a of outcome.opened) port.count("alerts.opened", { severity: a.severity });
  for (const a of outcome.closed) port.count("alerts.closed", { severity: a.severity });
  // Committed: publish the notices now rather than at the outbox's next tick.
  if (outcome.opened.length) port.flushNotices();
  return outcome;
}

/** A batch of the readings stream, after the pipeline's batch before it on this replica. */
export function evaluateInOrder(port: AlertingPort, pipeline_id: string, readings: Reading[]): Promise<BatchOutcome> {
  return port.inOrder(pipeline_id, () => evaluate(port, readings, true));
}

/** Writes the buffered series clocks; the database away, they are kept for the next flush. */
export async function flushClocks(port: AlertingPort): Promise<void> {
  if (port.pendingClocks.size === 0) return;
  const clocks = [...port.pendingClocks.values()];
  port.pendingClocks.clear();
  await advanceClocks(port.db, clocks).catch((err: Error) => {
    // Kept for the next flush (a later clock of a series that came meanwhile wins), not dropped.
    keepClocks(port.pendingClocks, clocks);
    // Flushed every CLOCK_FLUSH_MS: one line per outage's stretch, not five a second.
    if (Date.now() - clockWarnedAt < CLOCK_WARN_EVERY_MS) return;
    clockWarnedAt = Date.now();
    port.logger.warn("series clocks not written; kept for the next flush:", err.message);
  });
}
