/**
 * Maintenance windows of a watcher (docs/api-tour.md, "Alarm management"): while one covers an
 * alert's start, the alert opens `suppressed` and is not notified (evaluation.ts). The window a
 * body asks for, a window as the watcher fetch shows it, and adding and removing one; who may: as
 * for a watcher update. The SQL is in suppressions.repo.ts.
 */
import { requireWrite } from "../../lib/access";
import { diff, type AuditChange } from "../../lib/audit";
import { DomainError } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { MSG } from "./messages";
import type { AlertingPort } from "./port";
import { watcherInScope } from "./scope";
import * as repo from "./suppressions.repo";
import type { SuppressionRow } from "./suppressions.repo";
import { isoWithOffset, parseIso } from "./time";
import type { WatcherRow } from "./watchers.repo";

/** A window as the watcher fetch shows it: times ISO 8601 with offset, like an alert's start_time. */
export interface SuppressionView {
  id: string;
  from: string;
  to: string;
  reason: string;
  created_by: string | null;
}

/** The window of a body `{from, to}` (epoch ms), or the message of what is wrong with it. */
export function windowOf(from: string, to: string): { from: number; to: number } | { error: string; field: string } {
  const fromMs = parseIso(from);
  if (fromMs === null) return { error: MSG.invalidDateFormat, field: "from" };
  const toMs = parseIso(to);
  if (toMs === null) return { error: MSG.invalidDateFormat, field: "to" };
  // A window ends after it starts; an empty one would suppress nothing.
  if (toMs <= fromMs) return { error: MSG.invalidInput("to"), field: "to" };
  return { from: fromMs, to: toMs };
}

export function suppressionView(row: SuppressionRow): SuppressionView {
  return {
    id: row.id,
    from: isoWithOffset(Number(row.from_ts)),
    to: isoWithOffset(Number(row.to_ts)),
    reason: row.reason,
    created_by: row.created_by,
  };
}

/** A window's entry, in its watcher's place. */
const suppressionChange = (action: AuditChange["action"], w: WatcherRow, id: string, changes: AuditChange["changes"]): AuditChange => ({
  action,
  entity_type: "suppression",
  entity_id: id,
  site_id: w.site_id,
  plant_id: w.plant_id,
  changes,
});

/** A watcher's windows as its fetch shows them, earliest first. */
export async function windowsOf(port: AlertingPort, watcher_id: string): Promise<SuppressionView[]> {
  return (await repo.listSuppressions(port.db, watcher_id)).map(suppressionView);
}

export async function suppress(port: AlertingPort, p: { watcher_id: string; from: string; to: string; reason: string }): Promise<{ id: string }> {
  const w = await watcherInScope(port, p.watcher_id);
  requireWrite(port.user, "watcher", MSG.unauthorizedOperation);
  const window = windowOf(p.from, p.to);
  if ("error" in window) throw new DomainError(400, window.error, window.field);
  const id = newId();
  const row = { id, watcher_id: w.watcher_id, from_ts: window.from, to_ts: window.to, reason: p.reason, created_by: port.user?.username ?? null, created_at: Date.now() };
  const { from, to, reason } = suppressionView(row);
  await port.auditedWrite(suppressionChange("create", w, id, diff(null, { watcher_id: w.watcher_id, from, to, reason })), (q) => repo.insertSuppression(q, row));
  return { id };
}

export async function unsuppress(port: AlertingPort, p: { watcher_id: string; id: string }): Promise<string> {
  const w = await watcherInScope(port, p.watcher_id);
  requireWrite(port.user, "watcher", MSG.unauthorizedOperation);
  const removed =
    isId(p.id) &&
    (await port.auditedWrite(
      (found: boolean) => (found ? suppressionChange("delete", w, p.id.toLowerCase(), diff({ watcher_id: w.watcher_id }, null)) : null),
      (q) => repo.deleteSuppression(q, w.watcher_id, p.id),
    ));
  if (!removed) throw new DomainError(400, MSG.invalidSuppressionId(p.id));
  return MSG.suppressionRemoved;
}
