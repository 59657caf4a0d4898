/**
 * The alarm-system performance figures of a function, a plant or a site (docs/api-tour.md,
 * "Alarm management"; ISA-18.2 section 16 / EEMUA 191). The operation is alerts.ts's `kpi`, the definitions
 * kpi.ts's, the SQL kpi.repo.ts's.
 */
import { MAX_TEXT } from "../../lib/validation";
import type { AlertingActions, Ctx } from "./alerting.types";
import * as alerts from "./alerts";
import { EXAMPLE_KPI } from "./kpi.openapi";
import { MSG } from "./messages";
import { FUNCTION_FIELD } from "./openapi";

const text = { type: "string", max: MAX_TEXT, optional: true } as const;

export const KPI_ACTIONS: AlertingActions = {
  "alerts.kpi": {
    http: {
      routes: ["GET /_alerting/alerts/_kpi"],
      group: "alerts",
      summary: "Alarm-system performance figures",
      description:
        "ISA-18.2 / EEMUA 191 figures of the alerts of a function, a plant or a site (give exactly one) that opened in the range: " +
        "rate per 10 minutes, floods, priority distribution, most frequent and chattering triggers, mean times to acknowledge " +
        "and to close; and the standing ones now: stale alerts, unacknowledged active alerts.",
      fields: {
        function_id: { ...FUNCTION_FIELD, description: "the function whose alerts are measured (or give plant_id or site_id)" },
        plant_id: { description: "the plant whose alerts are measured (or give function_id or site_id)", example: "5a7d9c2b-1e3f-4a6b-8c9d-0e1f2a3b4c5d" },
        site_id: { description: "the site whose alerts are measured (or give function_id or plant_id)", example: "7c8d9e0f-1a2b-4c3d-9e4f-5a6b7c8d9e0f" },
        from: { description: "start of the range, ISO 8601 (default: 30 days before `to`)", example: "2026-01-01T00:00:00+05:30" },
        to: { description: "end of the range, ISO 8601 (default: now)", example: "2026-01-31T00:00:00+05:30" },
      },
      answer: { schema: "$AlertKpi", example: EXAMPLE_KPI },
      errors: [
        [400, MSG.insufficientInputs],
        [400, MSG.excessInputs],
        [400, MSG.functionDoesNotExist],
        [400, MSG.plantDoesNotExist],
        [400, MSG.siteDoesNotExist],
        [400, MSG.invalidDateFormat],
        [400, MSG.invalidInput("from")],
      ],
    },
    params: { function_id: text, plant_id: text, site_id: text, from: text, to: text, $$messages: { unknown: MSG.excessInputs } },
    async handler(ctx: Ctx<alerts.KpiParams>) {
      return alerts.kpi(this.use(ctx), ctx.params);
    },
  },
};
