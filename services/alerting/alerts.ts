/**
 * Alerts (spec: Alert; docs/api-tour.md, "Alarm management"): the view the API shows, and the
 * operations over the port: count by class, list, trend, note, fetch with history, and the
 * operator's lifecycle actions (acknowledge, shelve, unshelve, assign), whose rules are
 * lifecycle.ts's; a change is made under the alert's row lock, with its history entry and audit
 * entry, in one transaction.
 */
import { inScope, scopeOf, type Principal } from "../../lib/access";
import type { AuditAction, AuditChange } from "../../lib/audit";
import { DomainError, isDatabaseUnavailable } from "../../lib/errors";
import { isId } from "../../lib/ids";
import type { AlertFilter, AlertFilterParams } from "./alerts.filters";
import * as repo from "./alerts.repo";
import type { AlertRow } from "./alerts.repo";
import { scheduleShelfEnd } from "./followups.repo";
import { kpiOf, kpiRange, type Kpi } from "./kpi";
import { kpiRows, type PlaceColumn } from "./kpi.repo";
import { addHistory, alertHistory } from "./history.repo";
import { isShelved, mayShelve, transition, type Actor, type AckState, type HistoryEntry, type LifecycleAction, type LifecycleState } from "./lifecycle";
import { MSG } from "./messages";
import type { AlertingPort } from "./port";
import { alertInScope, placeInScope, unknownAlert } from "./scope";
import { severityKey, severityName, type SeverityKey, type SeverityName } from "./severity";
import { isoWithOffset, rangeOf, type Range } from "./time";
import { bucketCount, MAX_BUCKETS, trendOf, type Trend } from "./trend";

/** An alert's audit entry: what an operator changed of it (lifecycle fields, note, the words given). */
export const alertChange = (
  action: AuditAction,
  alert: Pick<AlertRow, "alert_id" | "site_id" | "plant_id">,
  changes: AuditChange["changes"],
): AuditChange => ({ action, entity_type: "alert", entity_id: alert.alert_id, site_id: alert.site_id, plant_id: alert.plant_id, changes });

export interface AlertView {
  _id: string;
  asset: string;
  duration: number;
  start_time: string;
  end_time: string | null;
  monitor: string;
  monitor_id: string;
  note: string;
  severity: SeverityName;
  state: string;
  tag: Record<string, string>;
  trigger_id: string;
  trigger_name: string;
  type_of_data: string;
  watcher_id: string;
  watcher_name: string;
  ack_state: AckState;
  acked_by: string | null;
  acked_at: string | null;
  shelved_until: string | null;
  assignee: string | null;
  suppressed: boolean;
  reason: "condition" | "no_data";
}

const msOrNull = (v: string | number | null): number | null => (v === null ? null : Number(v));

/** The lifecycle part of a stored alert (lifecycle.ts works on it). */
export function lifecycleOf(row: AlertRow): LifecycleState {
  return {
    state: row.state,
    ack_state: row.ack_state,
    acked_by: row.acked_by,
    acked_at: msOrNull(row.acked_at),
    shelved_until: msOrNull(row.shelved_until),
    assignee: row.assignee,
  };
}

/** `duration` in seconds (contract): how long it held, or has held so far while active. */
export function alertView(row: AlertRow, now = Date.now()): AlertView {
  const start = Number(row.start_ts);
  const end = row.end_ts === null ? null : Number(row.end_ts);
  return {
    _id: row.alert_id,
    asset: row.asset,
    duration: Math.max(0, Math.round(((end ?? now) - start) / 1000)),
    start_time: isoWithOffset(start),
    end_time: end === null ? null : isoWithOffset(end),
    monitor: row.monitor,
    monitor_id: row.monitor_id,
    note: row.note,
    severity: severityName(row.severity),
    state: row.state,
    tag: row.tag,
    trigger_id: row.trigger_id,
    trigger_name: row.trigger_name,
    type_of_data: row.type_of_data,
    watcher_id: row.watcher_id,
    watcher_name: row.watcher_name,
    ack_state: row.ack_state,
    acked_by: row.acked_by,
    acked_at: row.acked_at === null ? null : isoWithOffset(Number(row.acked_at)),
    // A shelf that has ended reads as none (it expires by itself).
    shelved_until: isShelved({ shelved_until: msOrNull(row.shelved_until) }, now) ? isoWithOffset(Number(row.shelved_until)) : null,
    assignee: row.assignee,
    suppressed: row.suppressed,
    reason: row.reason,
  };
}

/** The spec's `type_of_data` (a pipeline data type) from a monitor type, when no gateway says it. */
export function typeOfData(gatewayDataType: string | null | undefined, monitorType: string | null | undefined): string {
  if (gatewayDataType) return gatewayDataType;
  switch (monitorType) {
    case "condition-monitor":
      return "Condition";
    case "process-monitor":
      return "Process";
    case "energy-monitor":
      return "Energy";
    case "production-monitor":
      return "Production";
    default:
      return "Others";
  }
}

// ---- the operations ----------------------------------------------------------------------------

/** `from` and `to` (default: the last 7 days, spec: Limits); a value that does not parse names itself. */
function rangeParams(params: { from?: string; to?: string }): Range {
  const r = rangeOf(params.from, params.to);
  if ("invalid" in r) throw new DomainError(400, MSG.invalidInput(r.invalid));
  return r;
}

const failed = () => Promise.reject(new DomainError(500, MSG.errorOccurred));

/** The place named, in the caller's scope (an unknown one and one outside answer alike), with the other filters. */
async function filterOf(port: AlertingPort, p: AlertFilterParams): Promise<AlertFilter> {
  const { function_id, plant_id, site_id, ...rest } = p;
  if (plant_id !== undefined) return { ...rest, plant_id: await placeInScope(port, "plant_id", plant_id) };
  if (site_id !== undefined) return { ...rest, site_id: await placeInScope(port, "site_id", site_id) };
  return { ...rest, function_id: await placeInScope(port, "function_id", function_id ?? "") };
}

type RangeParams = { from?: string; to?: string };

/** Alerts by class that started in the range (hidden watchers' included); a count is not paged. */
export async function count(port: AlertingPort, p: AlertFilterParams & RangeParams & { limit?: number; offset?: number }): Promise<Record<"high" | "medium" | "low", number>> {
  const { limit: _limit, offset: _offset, from, to, ...filters } = p;
  const filter = await filterOf(port, filters);
  const r = rangeParams({ from, to });
  const counts = await repo.countAlerts(port.db, { ...filter, ...r, scope: port.scope }).catch(failed);
  const result = { high: 0, medium: 0, low: 0 };
  for (const c of counts) result[severityKey(c.severity)] += c.n;
  return result;
}

export async function list(
  port: AlertingPort,
  params: AlertFilterParams & RangeParams & { asset_id?: string; is_hidden: number; limit?: number; offset?: number },
): Promise<AlertView[]> {
  const { function_id, plant_id, site_id, state, ack_state, severity, ...p } = params;
  const filter = await filterOf(port, { function_id, plant_id, site_id, state, ack_state, severity });
  const r = rangeParams(p);
  const { rows, total } = await repo.listAlerts(port.db, { ...p, ...filter, asset_id: p.asset_id?.toLowerCase(), ...r, scope: port.scope });
  port.setTotal(total);
  const now = Date.now();
  return rows.map((row) => alertView(row, now));
}

/** At most this many active alerts are listed by `active` (its counts count them all). */
export const ACTIVE_LIST_MAX = 500;

/** An active alert as the alarm summary lists it: the alert and where it stands. */
export type PlacedAlertView = AlertView & Pick<AlertRow, "asset_id" | "function_id" | "plant_id" | "site_id">;

/**
 * The alarm summary of the caller's whole scope (docs/api-tour.md, "The alarm summary"): the
 * active alerts by severity, those still unacknowledged, the shelved apart (a shelved alert is not
 * counted as active), and the active alerts themselves, newest first.
 */
export interface ActiveAlerts {
  unacknowledged: Record<SeverityKey, number>;
  active: Record<SeverityKey, number>;
  shelved: number;
  alerts: PlacedAlertView[];
}

export async function active(port: AlertingPort): Promise<ActiveAlerts> {
  const now = Date.now();
  const [counts, found] = await Promise.all([repo.activeCounts(port.db, port.scope, now), repo.activeAlerts(port.db, port.scope, ACTIVE_LIST_MAX)]).catch(failed);
  const result: ActiveAlerts = { unacknowledged: { high: 0, medium: 0, low: 0 }, active: { high: 0, medium: 0, low: 0 }, shelved: 0, alerts: [] };
  for (const c of counts) {
    if (c.shelved) {
      result.shelved += c.n;
      continue;
    }
    result.active[severityKey(c.severity)] += c.n;
    if (c.unacknowledged) result.unacknowledged[severityKey(c.severity)] += c.n;
  }
  result.alerts = found.map((row) => ({ ...alertView(row, now), asset_id: row.asset_id, function_id: row.function_id, plant_id: row.plant_id, site_id: row.site_id }));
  return result;
}

/** By function or by trigger (the spec's requests use one of the two). */
export async function trend(port: AlertingPort, p: RangeParams & { function_id?: string; trigger_id?: string }): Promise<Trend> {
  if (p.function_id === undefined && p.trigger_id === undefined) throw new DomainError(400, MSG.insufficientInputs);
  const function_id = p.function_id === undefined ? undefined : await placeInScope(port, "function_id", p.function_id);
  const r = rangeParams(p);
  if (bucketCount(r) > MAX_BUCKETS) throw new DomainError(400, MSG.invalidInput("from"));
  const starts = await repo.alertStarts(port.db, { function_id, trigger_id: p.trigger_id, ...r, scope: port.scope }).catch(failed);
  return trendOf(starts, r);
}

/**
 * Anyone with the module may note an alert. The spec names one error for it, 500 `Something
 * went wrong`: an alert that does not exist (or is outside the caller's scope, answered alike)
 * has no note to add, so it answers that.
 */
export async function note(port: AlertingPort, p: { alert_id: string; note: string }): Promise<string> {
  const unknown = () => new DomainError(500, MSG.somethingWentWrong);
  if (!isId(p.alert_id)) throw unknown();
  try {
    const alert = await repo.getAlert(port.db, p.alert_id);
    if (!alert || !inScope(port.scope, alert)) throw unknown();
    await port.auditedWrite(alertChange("note", alert, { note: [alert.note, p.note] }), (q) => repo.setNote(q, alert.alert_id, p.note, port.user?.username ?? null));
  } catch (err) {
    // The database away: 503 (lib/errors.ts), which the caller may retry.
    if (err instanceof DomainError || isDatabaseUnavailable(err)) throw err;
    port.logger.error("adding a note failed", err);
    throw new DomainError(500, MSG.somethingWentWrong);
  }
  return MSG.noteAdded;
}

const actorOf = (port: AlertingPort): Actor | null => (port.user ? { username: port.user.username, user_type: port.user.user_type } : null);

/** The audit trail's word for an operator's action. */
const AUDIT_ACTION: Record<Exclude<LifecycleAction["action"], "close">, AuditAction> = {
  acknowledge: "acknowledge",
  shelve: "shelve",
  unshelve: "unshelve",
  assign: "assign",
};

/**
 * Applies an operator's action to one alert: the row locked (an evaluator closing it waits, or is
 * waited for), the rule of lifecycle.ts, then the change and its history entry, or nothing.
 */
async function act(port: AlertingPort, alert_id: string, action: LifecycleAction): Promise<void> {
  await alertInScope(port, alert_id);
  await port.db.transaction(async (tx) => {
    const row = await repo.lockAlert(tx, alert_id);
    if (!row) throw unknownAlert(alert_id);
    const t = transition(lifecycleOf(row), action, actorOf(port), Date.now());
    if (t.kind === "refused") throw new DomainError(403, MSG.unauthorizedOperation);
    if (t.kind === "changed") {
      await repo.writeLifecycle(tx, alert_id, t.state);
      await addHistory(tx, alert_id, t.entry);
      if (action.action !== "close") {
        const before = lifecycleOf(row);
        const changes: AuditChange["changes"] = {};
        // A shelf's end as an instant people read, not epoch ms.
        const shown = (v: string | number | null) => (typeof v === "number" ? new Date(v).toISOString() : v);
        for (const key of ["ack_state", "acked_by", "shelved_until", "assignee"] as const) {
          if (before[key] !== t.state[key]) changes[key] = [shown(before[key]), shown(t.state[key])];
        }
        // The operator's words (an acknowledgement's note, a shelf's reason); an assignment's detail is the assignee.
        if (t.entry.detail !== null && action.action !== "assign") changes.detail = [null, t.entry.detail];
        await port.audit(tx, alertChange(AUDIT_ACTION[action.action], row, changes));
      }
    }
    // A shelf's end is due when it ends (followups.ts); unshelving by hand cancels it.
    if (t.kind === "changed" && (t.entry.action === "shelved" || t.entry.action === "unshelved")) {
      await scheduleShelfEnd(tx, alert_id, t.entry.action === "shelved" ? t.state.shelved_until : null);
    }
  });
}

const historyView = (e: HistoryEntry) => ({ at: isoWithOffset(e.at), by: e.by, action: e.action, detail: e.detail });

/** Shelving silences an alarm: refused before the alert is looked at. */
function requireShelver(port: AlertingPort): void {
  if (!mayShelve(actorOf(port))) throw new DomainError(403, MSG.unauthorizedOperation);
}

/** The alert as listed, plus its history, oldest first. */
export async function get(port: AlertingPort, p: { alert_id: string }): Promise<AlertView & { history: ReturnType<typeof historyView>[] }> {
  const row = await alertInScope(port, p.alert_id);
  const history = await alertHistory(port.db, row.alert_id);
  return { ...alertView(row), history: history.map(historyView) };
}

export async function acknowledge(port: AlertingPort, p: { alert_id: string; note?: string }): Promise<string> {
  await act(port, p.alert_id, { action: "acknowledge", note: p.note });
  return MSG.alertAcknowledged;
}

/** Those of the ids that exist, are in the caller's scope and are unacknowledged: how many became acknowledged. */
export async function acknowledgeMany(port: AlertingPort, p: { alert_ids: string[] }): Promise<{ acknowledged: number }> {
  const ids = [...new Set(p.alert_ids.filter(isId).map((id) => id.toLowerCase()))];
  if (ids.length === 0) return { acknowledged: 0 };
  const by = actorOf(port)?.username ?? null;
  // One entry per alert acknowledged, in the transaction that acknowledges them.
  const acked = await port.db.transaction(async (tx) => {
    const rows = await repo.acknowledgeAlerts(tx, ids, port.scope, by, Date.now());
    await port.audit(tx, rows.map((r) => alertChange("acknowledge", r, { ack_state: ["unacknowledged", "acknowledged"], acked_by: [null, by] })));
    return rows;
  });
  return { acknowledged: acked.length };
}

export async function shelve(port: AlertingPort, p: { alert_id: string; minutes: number; reason: string }): Promise<string> {
  requireShelver(port);
  await act(port, p.alert_id, { action: "shelve", minutes: p.minutes, reason: p.reason });
  return MSG.alertShelved;
}

export async function unshelve(port: AlertingPort, p: { alert_id: string }): Promise<string> {
  requireShelver(port);
  await act(port, p.alert_id, { action: "unshelve" });
  return MSG.alertUnshelved;
}

/** The user must be able to see the alert (its site or plant). */
export async function assign(port: AlertingPort, p: { alert_id: string; username: string }): Promise<string> {
  const row = await alertInScope(port, p.alert_id);
  const user = await port.userNamed(p.username);
  // Modules do not matter here: the user is who is responsible, and sees it by its place.
  const sees = user && inScope(scopeOf({ ...user, modules: [] } as Principal), row);
  if (!user || !sees) throw new DomainError(400, MSG.invalidUser(p.username), "username");
  await act(port, row.alert_id, { action: "assign", username: user.username });
  return MSG.alertAssigned;
}

export interface KpiParams {
  function_id?: string;
  plant_id?: string;
  site_id?: string;
  from?: string;
  to?: string;
}

const PLACES: PlaceColumn[] = ["function_id", "plant_id", "site_id"];

/**
 * The alarm-system performance figures (kpi.ts) of the one place the request names, checked like
 * the alert list checks its function: unknown and out of scope answer alike.
 */
export async function kpi(port: AlertingPort, p: KpiParams): Promise<Kpi> {
  const named = PLACES.filter((k) => p[k] !== undefined);
  if (named.length === 0) throw new DomainError(400, MSG.insufficientInputs);
  if (named.length > 1) throw new DomainError(400, MSG.excessInputs, named[1]);
  const column = named[0];
  const place_id = await placeInScope(port, column, p[column] ?? "", column);
  const now = Date.now();
  const r = kpiRange(p.from, p.to, now);
  if ("invalid" in r) throw new DomainError(400, r.unparsed ? MSG.invalidDateFormat : MSG.invalidInput(r.invalid), r.invalid);
  const rows = await kpiRows(port.db, { column, place_id, ...r, scope: port.scope }, now);
  return kpiOf(r, rows, now);
}
