/**
 * The alert operations: count by class, list, trend, and adding a note. Each action carries its
 * route and docs (`http`), its params and a short handler; views and buckets are in alerts.ts
 * and trend.ts, the SQL in alerts.repo.ts.
 */
import { inScope } from "../../lib/access";
import { auditedWrite } from "../../lib/audit";
import { DomainError, isDatabaseUnavailable } from "../../lib/errors";
import { isId } from "../../lib/ids";
import { PAGE_FIELDS, PAGE_PARAMS, setTotal } from "../../lib/paging";
import { MAX_TEXT } from "../../lib/validation";
import type { AlertingActions, Ctx } from "./alerting.types";
import { alertChange, alertView } from "./alerts";
import { ALERT_FILTER_FIELDS, ALERT_FILTER_PARAMS, alertFilter, PLACE_ERRORS, type AlertFilterParams } from "./alerts.filters";
import { MSG } from "./messages";
import { EXAMPLE_ALERT, FUNCTION_FIELD, RANGE_FIELDS } from "./openapi";
import * as repo from "./alerts.repo";
import { severityKey } from "./severity";
import { rangeOf, type Range } from "./time";
import { bucketCount, MAX_BUCKETS, trendOf } from "./trend";

const text = { type: "string", max: MAX_TEXT } as const;
const range = { from: { ...text, optional: true }, to: { ...text, optional: true } } as const;
const lists = { unknown: MSG.excessInputs } as const;
const NOTE_MAX = 4000;

/** `from` and `to` (default: the last 7 days, spec: Limits); a value that does not parse names itself. */
function rangeParams(params: { from?: string; to?: string }): Range {
  const r = rangeOf(params.from, params.to);
  if ("invalid" in r) throw new DomainError(400, MSG.invalidInput(r.invalid));
  return r;
}

const failed = () => Promise.reject(new DomainError(500, MSG.errorOccurred));

const COUNT_EXAMPLE = { high: 2, medium: 5, low: 11 };
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
      const { limit: _limit, offset: _offset, from, to, ...filters } = ctx.params;
      const filter = await alertFilter(this, ctx, filters);
      const r = rangeParams({ from, to });
      const counts = await repo.countAlerts(this.db, { ...filter, ...r, scope: this.scope(ctx) }).catch(failed);
      const result = { high: 0, medium: 0, low: 0 };
      for (const c of counts) result[severityKey(c.severity)] += c.n;
      return result;
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
      const { function_id, plant_id, site_id, state, ack_state, severity, ...p } = ctx.params;
      const filter = await alertFilter(this, ctx, { function_id, plant_id, site_id, state, ack_state, severity });
      const r = rangeParams(p);
      const { rows, total } = await repo.listAlerts(this.db, { ...p, ...filter, asset_id: p.asset_id?.toLowerCase(), ...r, scope: this.scope(ctx) });
      setTotal(ctx, total);
      const now = Date.now();
      return rows.map((row) => alertView(row, now));
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
      const p = ctx.params;
      if (p.function_id === undefined && p.trigger_id === undefined) throw new DomainError(400, MSG.insufficientInputs);
      const function_id = p.function_id === undefined ? undefined : (await this.functionInScope(ctx, p.function_id, MSG.functionDoesNotExist)).function_id;
      const r = rangeParams(p);
      if (bucketCount(r) > MAX_BUCKETS) throw new DomainError(400, MSG.invalidInput("from"));
      const starts = await repo.alertStarts(this.db, { function_id, trigger_id: p.trigger_id, ...r, scope: this.scope(ctx) }).catch(failed);
      return trendOf(starts, r);
    },
  },

  /**
   * Anyone with the module may note an alert. The spec names one error for it, 500 `Something
   * went wrong`: an alert that does not exist (or is outside the caller's scope, answered alike)
   * has no note to add, so it answers that.
   */
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
      const unknown = () => new DomainError(500, MSG.somethingWentWrong);
      if (!isId(ctx.params.alert_id)) throw unknown();
      try {
        const alert = await repo.getAlert(this.db, ctx.params.alert_id);
        if (!alert || !inScope(this.scope(ctx), alert)) throw unknown();
        await auditedWrite(this.db, this.streams, ctx, alertChange("note", alert, { note: [alert.note, ctx.params.note] }), (q) =>
          repo.setNote(q, alert.alert_id, ctx.params.note, ctx.meta.user?.username ?? null),
        );
      } catch (err) {
        // The database away: 503 (lib/errors.ts), which the caller may retry.
        if (err instanceof DomainError || isDatabaseUnavailable(err)) throw err;
        this.logger.error("adding a note failed", err);
        throw new DomainError(500, MSG.somethingWentWrong);
      }
      return MSG.noteAdded;
    },
  },
};
