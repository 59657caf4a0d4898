/**
 * The alarm-system performance figures of a function, a plant or a site (docs/api-tour.md,
 * "Alarm management"; ISA-18.2 section 16 / EEMUA 191). Definitions in kpi.ts, the SQL in
 * kpi.repo.ts.
 */
import { inScope } from "../../lib/access";
import { DomainError } from "../../lib/errors";
import { MAX_TEXT } from "../../lib/validation";
import { resolvePlant, resolveSite } from "../config/contract";
import type { AlertingActions, AlertingThis, Ctx } from "./alerting.types";
import { kpiOf, kpiRange } from "./kpi";
import { EXAMPLE_KPI } from "./kpi.openapi";
import { kpiRows, type PlaceColumn } from "./kpi.repo";
import { MSG } from "./messages";
import { transactional } from "./sql";
import { FUNCTION_FIELD } from "./openapi";

const text = { type: "string", max: MAX_TEXT, optional: true } as const;

interface KpiParams {
  function_id?: string;
  plant_id?: string;
  site_id?: string;
  from?: string;
  to?: string;
}

const PLACES: PlaceColumn[] = ["function_id", "plant_id", "site_id"];

/** The one place the request names, checked like the alert list checks its function: unknown and out of scope answer alike. */
async function placeOf(self: AlertingThis, ctx: Ctx<KpiParams>): Promise<{ column: PlaceColumn; place_id: string }> {
  const named = PLACES.filter((k) => ctx.params[k] !== undefined);
  if (named.length === 0) throw new DomainError(400, MSG.insufficientInputs);
  if (named.length > 1) throw new DomainError(400, MSG.excessInputs, named[1]);
  const column = named[0];
  const id = ctx.params[column] ?? "";
  const scope = self.scope(ctx);
  if (column === "function_id") return { column, place_id: (await self.functionInScope(ctx, id, MSG.functionDoesNotExist)).function_id };
  if (column === "plant_id") {
    const plant = await resolvePlant(ctx, id);
    if (!plant || !inScope(scope, plant)) throw new DomainError(400, MSG.plantDoesNotExist, column);
    return { column, place_id: plant.plant_id };
  }
  const site = await resolveSite(ctx, id);
  if (!site || !inScope(scope, { site_id: site.site_id })) throw new DomainError(400, MSG.siteDoesNotExist, column);
  return { column, place_id: site.site_id };
}

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
    async handler(ctx: Ctx<KpiParams>) {
      const place = await placeOf(this, ctx);
      const now = Date.now();
      const r = kpiRange(ctx.params.from, ctx.params.to, now);
      if ("invalid" in r) throw new DomainError(400, r.unparsed ? MSG.invalidDateFormat : MSG.invalidInput(r.invalid), r.invalid);
      const rows = await kpiRows(transactional(this.db), { ...place, ...r, scope: this.scope(ctx) }, now);
      return kpiOf(r, rows, now);
    },
  },
};
