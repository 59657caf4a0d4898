/**
 * Maintenance windows of a watcher (docs/api-tour.md, "Alarm management"): add one, remove one. Who
 * may: as for a watcher update. The watcher fetch shows them (watchers.actions.ts); evaluation.ts
 * suppresses the alerts that open inside one. Rules in suppressions.ts, SQL in suppressions.repo.ts.
 */
import { requireWrite } from "../../lib/access";
import { auditedWrite, diff, type AuditChange } from "../../lib/audit";
import { DomainError } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { MAX_TEXT } from "../../lib/validation";
import type { AlertingActions, Ctx } from "./alerting.types";
import { MSG } from "./messages";
import { EXAMPLE_WATCHER } from "./openapi";
import * as repo from "./suppressions.repo";
import { EXAMPLE_SUPPRESSION } from "./suppressions.openapi";
import { suppressionView, windowOf } from "./suppressions";
import type { WatcherRow } from "./watchers.repo";

const text = { type: "string", max: MAX_TEXT } as const;
const REASON_MAX = 500;

/** A window's entry, in its watcher's place. */
const suppressionChange = (action: AuditChange["action"], w: WatcherRow, id: string, changes: AuditChange["changes"]): AuditChange => ({
  action,
  entity_type: "suppression",
  entity_id: id,
  site_id: w.site_id,
  plant_id: w.plant_id,
  changes,
});

const WATCHER_ID_FIELD = { watcher_id: { description: "the watcher's id", example: EXAMPLE_WATCHER.watcher_id } };

export const SUPPRESSION_ACTIONS: AlertingActions = {
  "watchers.suppress": {
    http: {
      routes: ["POST /_alerting/watchers/:watcher_id/_suppress"],
      group: "watchers",
      summary: "Add a maintenance window to a watcher",
      description:
        "Alerts of the watcher that start inside the window open with `suppressed: true` and notify nobody. " +
        "The watcher fetch lists its windows. Who may: as for updating the watcher.",
      fields: {
        ...WATCHER_ID_FIELD,
        from: { description: "start of the window, ISO 8601 (no offset: UTC)", example: "2026-02-01T07:30:00+05:30" },
        to: { description: "end of the window, ISO 8601, after `from`", example: "2026-02-01T11:30:00+05:30" },
        reason: { description: "why alerts are suppressed meanwhile (1-500 characters)", example: EXAMPLE_SUPPRESSION.reason },
      },
      answer: { id: true },
      errors: [
        [400, MSG.insufficientInputs],
        [400, MSG.invalidWatcherId],
        [400, MSG.invalidDateFormat],
        [400, MSG.invalidInput("<field>")],
        [403, MSG.unauthorizedOperation],
      ],
    },
    params: {
      watcher_id: text,
      from: { type: "string", max: 64 },
      to: { type: "string", max: 64 },
      reason: { type: "string", min: 1, max: REASON_MAX },
    },
    async handler(ctx: Ctx<{ watcher_id: string; from: string; to: string; reason: string }>) {
      const w = await this.watcherInScope(ctx, ctx.params.watcher_id);
      requireWrite(ctx.meta.user, "watcher", MSG.unauthorizedOperation);
      const window = windowOf(ctx.params.from, ctx.params.to);
      if ("error" in window) throw new DomainError(400, window.error, window.field);
      const id = newId();
      const row = {
        id,
        watcher_id: w.watcher_id,
        from_ts: window.from,
        to_ts: window.to,
        reason: ctx.params.reason,
        created_by: ctx.meta.user?.username ?? null,
        created_at: Date.now(),
      };
      const { from, to, reason } = suppressionView(row);
      await auditedWrite(this.db, this.streams, ctx, suppressionChange("create", w, id, diff(null, { watcher_id: w.watcher_id, from, to, reason })), (q) => repo.insertSuppression(q, row));
      return { id };
    },
  },

  "watchers.unsuppress": {
    http: {
      routes: ["DELETE /_alerting/watchers/:watcher_id/_suppress/:id"],
      group: "watchers",
      summary: "Remove a maintenance window of a watcher",
      description: "Alerts already opened inside it stay suppressed; later ones are notified again.",
      fields: { ...WATCHER_ID_FIELD, id: { description: "the window's id", example: EXAMPLE_SUPPRESSION.id } },
      answer: { text: MSG.suppressionRemoved },
      errors: [[400, MSG.invalidWatcherId], [400, MSG.invalidSuppressionId("<id>")], [403, MSG.unauthorizedOperation]],
    },
    params: { watcher_id: text, id: text },
    async handler(ctx: Ctx<{ watcher_id: string; id: string }>) {
      const w = await this.watcherInScope(ctx, ctx.params.watcher_id);
      requireWrite(ctx.meta.user, "watcher", MSG.unauthorizedOperation);
      const removed =
        isId(ctx.params.id) &&
        (await auditedWrite(
          this.db,
          this.streams,
          ctx,
          (found: boolean) => (found ? suppressionChange("delete", w, ctx.params.id.toLowerCase(), diff({ watcher_id: w.watcher_id }, null)) : null),
          (q) => repo.deleteSuppression(q, w.watcher_id, ctx.params.id),
        ));
      if (!removed) throw new DomainError(400, MSG.invalidSuppressionId(ctx.params.id));
      return MSG.suppressionRemoved;
    },
  },
};
