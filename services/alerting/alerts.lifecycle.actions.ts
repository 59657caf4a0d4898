/**
 * Alarm management's alert operations (docs/api-tour.md): fetch one alert with its history,
 * acknowledge (one, or many at once), shelve, unshelve, assign. The rules are lifecycle.ts's
 * (pure); a change is made under the alert's row lock, with its history entry, in one transaction.
 */
import { inScope, scopeOf, type Principal } from "../../lib/access";
import { stageAudit, type AuditAction, type AuditChange } from "../../lib/audit";
import { DomainError } from "../../lib/errors";
import { isId } from "../../lib/ids";
import { MAX_TEXT } from "../../lib/validation";
import { authClient } from "../auth/contract";
import type { AlertingActions, AlertingThis, Ctx } from "./alerting.types";
import { alertChange, alertView, lifecycleOf } from "./alerts";
import { mayShelve, SHELVE_MAX_MINUTES, SHELVE_REASON_MAX, transition, type Actor, type HistoryEntry, type LifecycleAction } from "./lifecycle";
import { MSG } from "./messages";
import { EXAMPLE_ALERT } from "./openapi";
import * as repo from "./alerts.repo";
import type { AlertRow } from "./alerts.repo";
import { scheduleShelfEnd } from "./followups.repo";
import { addHistory, alertHistory } from "./history.repo";
import { isoWithOffset } from "./time";

const NOTE_MAX = 4000;
const BULK_MAX = 500;
const alertId = { type: "string", max: MAX_TEXT } as const;

const ALERT_ID_FIELD = { alert_id: { description: "the alert's id (its `_id`)", example: EXAMPLE_ALERT._id } };
const unknownAlert = (alert_id: string) => new DomainError(400, MSG.invalidAlertId(alert_id));
const actorOf = (ctx: Ctx): Actor | null => (ctx.meta.user ? { username: ctx.meta.user.username, user_type: ctx.meta.user.user_type } : null);

/** The audit trail's word for an operator's action. */
const AUDIT_ACTION: Record<Exclude<LifecycleAction["action"], "close">, AuditAction> = {
  acknowledge: "acknowledge",
  shelve: "shelve",
  unshelve: "unshelve",
  assign: "assign",
};

/** The alert, if it exists and the caller's scope covers it; unknown and out of scope answer alike. */
async function alertInScope(self: AlertingThis, ctx: Ctx, alert_id: string): Promise<AlertRow> {
  const row = isId(alert_id) ? await repo.getAlert(self.db, alert_id) : null;
  if (!row || !inScope(self.scope(ctx), row)) throw unknownAlert(alert_id);
  return row;
}

/**
 * Applies an operator's action to one alert: the row locked (an evaluator closing it waits, or is
 * waited for), the rule of lifecycle.ts, then the change and its history entry, or nothing.
 */
async function act(self: AlertingThis, ctx: Ctx, alert_id: string, action: LifecycleAction): Promise<void> {
  await alertInScope(self, ctx, alert_id);
  await self.db.transaction(async (tx) => {
    const row = await repo.lockAlert(tx, alert_id);
    if (!row) throw unknownAlert(alert_id);
    const t = transition(lifecycleOf(row), action, actorOf(ctx), Date.now());
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
        await stageAudit(self.streams, tx, ctx, alertChange(AUDIT_ACTION[action.action], row, changes));
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
function requireShelver(ctx: Ctx): void {
  if (!mayShelve(actorOf(ctx))) throw new DomainError(403, MSG.unauthorizedOperation);
}

const EXAMPLE_FETCHED = {
  ...EXAMPLE_ALERT,
  history: [
    { at: "2026-01-31T08:15:02+00:00", by: null, action: "opened", detail: null },
    { at: "2026-01-31T08:15:40+00:00", by: "asha.patil", action: "acknowledged", detail: "Checking the bearing" },
    { at: "2026-01-31T08:16:37+00:00", by: null, action: "closed", detail: null },
  ],
};

export const LIFECYCLE_ACTIONS: AlertingActions = {
  "alerts.get": {
    http: {
      routes: ["GET /_alerting/alerts/:alert_id"],
      group: "alerts",
      summary: "Fetch an alert with its history",
      description: "The alert as listed, plus its history (opened, notified, acknowledged, assigned, shelved, unshelved, escalated, noted, closed), oldest first.",
      fields: ALERT_ID_FIELD,
      answer: { schema: "$AlertWithHistory", example: EXAMPLE_FETCHED },
      errors: [[400, MSG.invalidAlertId("<alert_id>")]],
    },
    params: { alert_id: alertId },
    async handler(ctx: Ctx<{ alert_id: string }>) {
      const row = await alertInScope(this, ctx, ctx.params.alert_id);
      const history = await alertHistory(this.db, row.alert_id);
      return { ...alertView(row), history: history.map(historyView) };
    },
  },

  "alerts.acknowledge": {
    http: {
      routes: ["POST /_alerting/alerts/:alert_id/_ack"],
      group: "alerts",
      summary: "Acknowledge an alert",
      description:
        "An operator has seen it (active, or closed while unacknowledged). Acknowledging an acknowledged alert answers the same and changes nothing.",
      fields: {
        ...ALERT_ID_FIELD,
        note: { description: `what the operator says, up to ${NOTE_MAX} characters; kept as the detail of the history entry`, example: "Checking the bearing" },
      },
      answer: { text: MSG.alertAcknowledged },
      errors: [[400, MSG.invalidAlertId("<alert_id>")], [400, MSG.invalidInput("<field>")]],
    },
    params: { alert_id: alertId, note: { type: "string", max: NOTE_MAX, optional: true } },
    async handler(ctx: Ctx<{ alert_id: string; note?: string }>) {
      await act(this, ctx, ctx.params.alert_id, { action: "acknowledge", note: ctx.params.note });
      return MSG.alertAcknowledged;
    },
  },

  "alerts.acknowledgeMany": {
    http: {
      routes: ["POST /_alerting/alerts/_ack"],
      group: "alerts",
      summary: "Acknowledge alerts",
      description:
        "Acknowledges each of the alerts that exists, is in the caller's scope and is unacknowledged; answers how many became acknowledged " +
        "(already acknowledged, unknown or out-of-scope ids are not counted).",
      fields: {
        alert_ids: { description: `the alerts' ids, 1 to ${BULK_MAX}`, example: [EXAMPLE_ALERT._id] },
      },
      answer: { schema: "$AlertsAcknowledged", example: { acknowledged: 1 } },
      errors: [[400, MSG.insufficientInputs], [400, MSG.invalidInput("<field>")]],
    },
    params: { alert_ids: { type: "array", items: alertId, min: 1, max: BULK_MAX } },
    async handler(ctx: Ctx<{ alert_ids: string[] }>) {
      const ids = [...new Set(ctx.params.alert_ids.filter(isId).map((id) => id.toLowerCase()))];
      if (ids.length === 0) return { acknowledged: 0 };
      const by = actorOf(ctx)?.username ?? null;
      // One entry per alert acknowledged, in the transaction that acknowledges them.
      const acked = await this.db.transaction(async (tx) => {
        const rows = await repo.acknowledgeAlerts(tx, ids, this.scope(ctx), by, Date.now());
        await stageAudit(this.streams, tx, ctx, rows.map((r) => alertChange("acknowledge", r, { ack_state: ["unacknowledged", "acknowledged"], acked_by: [null, by] })));
        return rows;
      });
      return { acknowledged: acked.length };
    },
  },

  "alerts.shelve": {
    http: {
      routes: ["POST /_alerting/alerts/:alert_id/_shelve"],
      group: "alerts",
      summary: "Shelve an alert",
      description:
        "Silences the alert for a while: no notifications or escalations until the shelf ends (by itself, or by unshelve). " +
        "Shelving a shelved alert replaces its shelf. Plant-admins and above.",
      fields: {
        ...ALERT_ID_FIELD,
        minutes: { description: `how long the shelf lasts, 1 to ${SHELVE_MAX_MINUTES} (a week)`, unit: "min", example: 60 },
        reason: { description: `why it is shelved, 1 to ${SHELVE_REASON_MAX} characters; kept as the detail of the history entry`, example: "Known sensor fault, work order 4711" },
      },
      answer: { text: MSG.alertShelved },
      errors: [[400, MSG.invalidAlertId("<alert_id>")], [400, MSG.insufficientInputs], [400, MSG.invalidInput("<field>")], [403, MSG.unauthorizedOperation]],
    },
    params: {
      alert_id: alertId,
      minutes: { type: "number", integer: true, min: 1, max: SHELVE_MAX_MINUTES },
      reason: { type: "string", min: 1, max: SHELVE_REASON_MAX },
    },
    async handler(ctx: Ctx<{ alert_id: string; minutes: number; reason: string }>) {
      requireShelver(ctx);
      await act(this, ctx, ctx.params.alert_id, { action: "shelve", minutes: ctx.params.minutes, reason: ctx.params.reason });
      return MSG.alertShelved;
    },
  },

  "alerts.unshelve": {
    http: {
      routes: ["POST /_alerting/alerts/:alert_id/_unshelve"],
      group: "alerts",
      summary: "Unshelve an alert",
      description: "Ends the alert's shelf now; an alert that is not shelved answers the same and nothing changes. Plant-admins and above.",
      fields: ALERT_ID_FIELD,
      answer: { text: MSG.alertUnshelved },
      errors: [[400, MSG.invalidAlertId("<alert_id>")], [403, MSG.unauthorizedOperation]],
    },
    params: { alert_id: alertId },
    async handler(ctx: Ctx<{ alert_id: string }>) {
      requireShelver(ctx);
      await act(this, ctx, ctx.params.alert_id, { action: "unshelve" });
      return MSG.alertUnshelved;
    },
  },

  "alerts.assign": {
    http: {
      routes: ["POST /_alerting/alerts/:alert_id/_assign"],
      group: "alerts",
      summary: "Assign an alert",
      description: "Makes a user responsible for the alert; the user must be able to see it (its site or plant).",
      fields: {
        ...ALERT_ID_FIELD,
        username: { description: "the user the alert is assigned to", example: "asha.patil" },
      },
      answer: { text: MSG.alertAssigned },
      errors: [[400, MSG.invalidAlertId("<alert_id>")], [400, MSG.invalidUser("<username>")], [400, MSG.insufficientInputs], [400, MSG.invalidInput("<field>")]],
    },
    params: { alert_id: alertId, username: { type: "string", min: 1, max: MAX_TEXT } },
    async handler(ctx: Ctx<{ alert_id: string; username: string }>) {
      const row = await alertInScope(this, ctx, ctx.params.alert_id);
      const user = await authClient.call(ctx, "users.resolve", { username: ctx.params.username });
      // Modules do not matter here: the user is who is responsible, and sees it by its place.
      const sees = user && inScope(scopeOf({ ...user, modules: [] } as Principal), row);
      if (!user || !sees) throw new DomainError(400, MSG.invalidUser(ctx.params.username), "username");
      await act(this, ctx, row.alert_id, { action: "assign", username: user.username });
      return MSG.alertAssigned;
    },
  },
};
