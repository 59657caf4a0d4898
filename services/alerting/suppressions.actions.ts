/**
 * Maintenance windows of a watcher (docs/api-tour.md, "Alarm management"): add one, remove one. Who
 * may: as for a watcher update. The watcher fetch shows them (watchers.actions.ts); evaluation.ts
 * suppresses the alerts that open inside one. Rules and writes in suppressions.ts, SQL in suppressions.repo.ts.
 */
import { MAX_TEXT } from "../../lib/validation";
import type { AlertingActions, Ctx } from "./alerting.types";
import { MSG } from "./messages";
import { EXAMPLE_WATCHER } from "./openapi";
import * as suppressions from "./suppressions";
import { EXAMPLE_SUPPRESSION } from "./suppressions.openapi";

const text = { type: "string", max: MAX_TEXT } as const;
const REASON_MAX = 500;

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
      return suppressions.suppress(this.use(ctx), ctx.params);
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
      return suppressions.unsuppress(this.use(ctx), ctx.params);
    },
  },
};
