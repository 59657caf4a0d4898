/**
 * The alert operations: count by class, list, trend, and adding a note. Each action carries its
 * route and docs (`http`), its params and a handler of a line; the operations and views are in
 * alerts.ts, buckets in trend.ts, the SQL in alerts.repo.ts.
 */
import { PAGE_FIELDS, PAGE_PARAMS } from "../../lib/paging";
import { MAX_TEXT } from "../../lib/validation";
import type { AlertingActions, Ctx } from "./alerting.types";
import * as alerts from "./alerts";
import { ALERT_FILTER_FIELDS, ALERT_FILTER_PARAMS, PLACE_ERRORS, type AlertFilterParams } from "./alerts.filters";
import { MSG } from "./messages";
import { EXAMPLE_ALERT, EXAMPLE_PLACE, FUNCTION_FIELD, RANGE_FIELDS } from "./openapi";

const text = { type: "string", max: MAX_TEXT } as const;
const range = { from: { ...text, optional: true }, to: { ...text, optional: true } } as const;
const lists = { unknown: MSG.excessInputs } as const;
const NOTE_MAX = 4000;

const COUNT_EXAMPLE = { high: 2, medium: 5, low: 11 };
const ACTIVE_EXAMPLE = {
  unacknowledged: { high: 1, medium: 0, low: 0 },
  active: { high: 1, medium: 0, low: 0 },
  shelved: 0,
  alerts: [{ ...EXAMPLE_ALERT, state: "active", end_time: null, ack_state: "unacknowledged", acked_by: null, acked_at: null, ...EXAMPLE_PLACE }],
};
const TREND_EXAMPLE = {
  high: [{ time: 1769817600000, total: 1 }, { time: 1769821200000, total: 0 }],
  medium: [{ time: 1769817600000, total: 0 }, { time: 1769821200000, total: 2 }],
  low: [{ time: 1769817600000, total: 3 }, { time: 1769821200000, total: 1 }],
};

export const ALERT_ACTIONS: AlertingActions = {
  /** Alerts by class that started in the range (hidden watchers' included). */
  "alerts.count": {
    http: {
      op: 7,
      routes: ["GET /_alerting/alerts/_count"],
      group: "alerts",
      summary: "Count alerts by severity",
      description:
        "Alerts of the function (or plant, or site) that started in the range, by class (system watchers' alerts included); " +
        "optionally only those in a state, acknowledgement state or severity class.",
      fields: {
        ...ALERT_FILTER_FIELDS,
        ...RANGE_FIELDS,
        limit: { ...PAGE_FIELDS.limit, description: "accepted like the list's; a count is not paged" },
        offset: { ...PAGE_FIELDS.offset, description: "accepted like the list's; a count is not paged" },
      },
      answer: { schema: "$AlertCount", example: COUNT_EXAMPLE },
      errors: [...PLACE_ERRORS, [400, MSG.invalidInput("<field>")], [500, MSG.errorOccurred]],
    },
    params: { ...ALERT_FILTER_PARAMS, ...range, ...PAGE_PARAMS, $$messages: lists },
    async handler(ctx: Ctx<AlertFilterParams & { from?: string; to?: string; limit?: number; offset?: number }>) {
      return alerts.count(this.use(ctx), ctx.params);
    },
  },

  "alerts.list": {
    http: {
      op: 8,
      routes: ["GET /_alerting/alerts/_list"],
      group: "alerts",
      summary: "List alerts",
      description:
        "Alerts of the function (or plant, or site) that started in the range, newest first; " +
        "optionally only those in a state, acknowledgement state or severity class.",
      fields: {
        ...ALERT_FILTER_FIELDS,
        asset_id: { description: "only the alerts of this asset's monitors", example: "2b3c4d5e-6f70-4a8b-9c0d-1e2f3a4b5c6d" },
        is_hidden: { enum: [0, 1], description: "1: only the alerts of system watchers; 0: only the others", example: 0 },
        ...RANGE_FIELDS,
        ...PAGE_FIELDS,
      },
      answer: { schema: "$Alert[]", example: [EXAMPLE_ALERT] },
      errors: [...PLACE_ERRORS, [400, MSG.invalidInput("<field>")]],
    },
    params: {
      ...ALERT_FILTER_PARAMS,
      asset_id: { ...text, optional: true },
      is_hidden: { type: "number", integer: true, min: 0, max: 1, convert: true },
      ...range,
      ...PAGE_PARAMS,
      $$messages: lists,
    },
    async handler(ctx: Ctx<AlertFilterParams & { asset_id?: string; is_hidden: number; from?: string; to?: string; limit?: number; offset?: number }>) {
      return alerts.list(this.use(ctx), ctx.params);
    },
  },

  /** The console's alarm summary: one request for the caller's whole scope (docs/api-tour.md, "The alarm summary"). */
  "alerts.active": {
    http: {
      routes: ["GET /_alerting/alerts/_active"],
      group: "alerts",
      summary: "Active alerts of the caller's scope",
      description:
        "Every site, plant and function the caller may see, in one answer: the active alerts by severity class (shelved ones not counted), " +
        "those of them not yet acknowledged, how many are shelved, and the active alerts themselves (shelved included), newest first, " +
        `at most ${alerts.ACTIVE_LIST_MAX}, each with its asset, function, plant and site ids. The console's alarm summary reads it.`,
      fields: {},
      answer: { schema: "$ActiveAlerts", example: ACTIVE_EXAMPLE },
      errors: [[400, MSG.excessInputs]],
    },
    params: { $$messages: lists },
    async handler(ctx: Ctx<Record<string, never>>) {
      return alerts.active(this.use(ctx));
    },
  },

  /** By function or by trigger (the spec's requests use one of the two). */
  "alerts.trend": {
    http: {
      op: 9,
      routes: ["GET /_alerting/alerts/_trend"],
      group: "alerts",
      summary: "Alert trend by severity",
      description:
        "Alerts that started in each bucket of the range, by class: hourly buckets when the range is at most 2 days, else daily (UTC). " +
        "Give function_id or trigger_id.",
      fields: {
        function_id: { ...FUNCTION_FIELD, description: "the function whose alerts are counted (or give trigger_id)" },
        trigger_id: { description: "the trigger whose alerts are counted (or give function_id)", example: "t1" },
        ...RANGE_FIELDS,
      },
      answer: { schema: "$AlertTrend", example: TREND_EXAMPLE },
      errors: [
        [400, MSG.insufficientInputs],
        [400, MSG.functionDoesNotExist],
        [400, MSG.invalidInput("<field>")],
        [400, MSG.excessInputs],
        [500, MSG.errorOccurred],
      ],
    },
    params: { function_id: { ...text, optional: true }, trigger_id: { ...text, optional: true }, ...range, $$messages: lists },
    async handler(ctx: Ctx<{ function_id?: string; trigger_id?: string; from?: string; to?: string }>) {
      return alerts.trend(this.use(ctx), ctx.params);
    },
  },

  /** Anyone with the module may note an alert (alerts.ts says why its one error is a 500). */
  "alerts.note": {
    http: {
      op: 10,
      // The spec's endpoint line also reads the singular path: both serve.
      routes: ["PUT /_alerting/alerts/:alert_id", "PUT /_alerting/alert/:alert_id"],
      group: "alerts",
      summary: "Add a note to an alert",
      description: "The note replaces the alert's note.",
      fields: {
        alert_id: { description: "the alert's id (its `_id`)", example: EXAMPLE_ALERT._id },
        note: { description: `the note, up to ${NOTE_MAX} characters`, example: "Bearing greased; watching the trend." },
      },
      answer: { text: MSG.noteAdded },
      errors: [[500, MSG.somethingWentWrong]],
    },
    params: { alert_id: text, note: { type: "string", max: NOTE_MAX } },
    async handler(ctx: Ctx<{ alert_id: string; note: string }>) {
      return alerts.note(this.use(ctx), ctx.params);
    },
  },
};
