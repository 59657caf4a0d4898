/**
 * Alarm management's alert operations (docs/api-tour.md): fetch one alert with its history,
 * acknowledge (one, or many at once), shelve, unshelve, assign. The operations are alerts.ts's,
 * their rules lifecycle.ts's (pure).
 */
import { MAX_TEXT } from "../../lib/validation";
import type { AlertingActions, Ctx } from "./alerting.types";
import * as alerts from "./alerts";
import { SHELVE_MAX_MINUTES, SHELVE_REASON_MAX } from "./lifecycle";
import { MSG } from "./messages";
import { EXAMPLE_ALERT } from "./openapi";

const NOTE_MAX = 4000;
const BULK_MAX = 500;
const alertId = { type: "string", max: MAX_TEXT } as const;

const ALERT_ID_FIELD = { alert_id: { description: "the alert's id (its `_id`)", example: EXAMPLE_ALERT._id } };

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
      return alerts.get(this.use(ctx), ctx.params);
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
      return alerts.acknowledge(this.use(ctx), ctx.params);
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
      return alerts.acknowledgeMany(this.use(ctx), ctx.params);
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
      return alerts.shelve(this.use(ctx), ctx.params);
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
      return alerts.unshelve(this.use(ctx), ctx.params);
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
      return alerts.assign(this.use(ctx), ctx.params);
    },
  },
};
