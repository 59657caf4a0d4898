/** Alerts as stored and as the API shows them (spec: Alert). Pure. */
import type { AuditAction, AuditChange } from "../../lib/audit";
import type { AlertRow } from "./alerts.repo";
import { isShelved, type AckState, type LifecycleState } from "./lifecycle";
import { severityName, type SeverityName } from "./severity";
import { isoWithOffset } from "./time";

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
