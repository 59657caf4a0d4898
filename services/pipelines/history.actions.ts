/**
 * A tag's history at any zoom and a monitor's readings as CSV (docs/api-tour.md, "Looking back"), served by the
 * raw readings' owner under the CM routes. The domain is in readings.ts, the rules in history.ts, the SQL in history.repo.ts.
 */
import type { FieldDoc } from "../../lib/operations";
import { MAX_TEXT } from "../../lib/validation";
import { DEFAULT_POINTS, MAX_POINTS } from "./history";
import { MSG } from "./messages";
import type { Ctx, PipelinesActions } from "./pipelines.types";
import * as readings from "./readings";

const text = { type: "string", max: MAX_TEXT, optional: true } as const;

const MONITOR_FIELD: FieldDoc = { description: "the monitor's id", example: "6f1d2c3b-4a5e-4f60-8a71-92b3c4d5e6f7" };
const FROM_FIELD: FieldDoc = { description: "start of the range, ISO 8601 (inclusive)", example: "2026-11-01T00:00:00+05:30", required: true };
const TO_FIELD: FieldDoc = { description: "end of the range, ISO 8601 (inclusive)", example: "2026-11-02T00:00:00+05:30", required: true };

export const historyActions: PipelinesActions = {
  "readings.history": {
    http: {
      routes: ["GET /_cm/monitors/:monitor_id/_history"],
      group: "cm",
      summary: "A tag's history at any zoom",
      description:
        "The readings of one tag of a monitor in the range, oldest first: each raw reading when the range holds no more than " +
        "`points` of them (`bucket_ms` 0); else equal buckets of `bucket_ms` (1 s … 12 h, then whole days; aligned on " +
        "multiples of it since the epoch) with the mean as `value` and the bucket's extremes in `min` and `max`, so a spike " +
        "survives the zoom-out. Buckets without readings are left out; a first bucket that begins before `from` is stamped " +
        "`from`. Range up to 400 days.",
      fields: {
        monitor_id: MONITOR_FIELD,
        tag: { description: "the tag's name, as in the monitor's tags", example: "vibration", required: true },
        from: FROM_FIELD,
        to: TO_FIELD,
        points: { description: `most points answered, 1 to ${MAX_POINTS} (default ${DEFAULT_POINTS})`, example: 1000, type: "integer" },
      },
      answer: {
        schema: "$History",
        example: {
          monitor_id: "6f1d2c3b-4a5e-4f60-8a71-92b3c4d5e6f7",
          tag: "vibration",
          tag_unit: "mm/s",
          bucket_ms: 3600000,
          points: [{ timestamp: 1794009600000, value: 2.41, min: 1.98, max: 7.2, count: 3600 }],
        },
      },
      errors: [
        [400, MSG.invalidMonitorId],
        [400, MSG.insufficientInputs],
        [400, MSG.invalidTag],
        [400, MSG.insufficientDates],
        [400, MSG.invalidDateFormat],
        [400, MSG.invalidInput("from")],
        [400, MSG.invalidInput("to")],
        [400, MSG.invalidInput("points")],
      ],
    },
    params: {
      monitor_id: { type: "string", max: MAX_TEXT },
      tag: text,
      from: text,
      to: text,
      points: { type: "number", integer: true, min: 1, max: MAX_POINTS, convert: true, optional: true },
      $$messages: { unknown: MSG.excessInputs },
    },
    handler(ctx: Ctx<readings.HistoryParams>) {
      return readings.history(this.use(ctx), ctx.params);
    },
  },

  "readings.export": {
    http: {
      routes: ["GET /_cm/monitors/:monitor_id/_export"],
      group: "cm",
      summary: "Export a monitor's readings as CSV",
      description:
        "Every reading of the monitor in the range as `text/csv`, streamed: a header row `timestamp,<tag_name>…` (the " +
        "monitor's tags in their order), then one row per timestamp (ISO 8601 UTC), a tag without a reading at that time " +
        "left empty. Range up to 31 days. A text cell that a spreadsheet would run as a formula (a tag name starting with =, +, -, @, " +
        "a tab or a carriage return) is written with a leading ' ; readings stay numbers, negative ones included.",
      fields: { monitor_id: MONITOR_FIELD, from: FROM_FIELD, to: TO_FIELD },
      answer: { text: "timestamp,temperature,vibration\n2026-11-01T00:00:00.000Z,61.5,2.41\n" },
      errors: [
        [400, MSG.invalidMonitorId],
        [400, MSG.insufficientDates],
        [400, MSG.invalidDateFormat],
        [400, MSG.invalidInput("from")],
        [400, MSG.invalidInput("to")],
      ],
    },
    params: { monitor_id: { type: "string", max: MAX_TEXT }, from: text, to: text, $$messages: { unknown: MSG.excessInputs } },
    async handler(ctx: Ctx<{ monitor_id: string; from?: string; to?: string }>) {
      const { name, csv } = await readings.exportCsv(this.use(ctx), ctx.params);
      const meta = ctx.meta as { $responseType?: string; $responseHeaders?: Record<string, string> };
      meta.$responseType = "text/csv; charset=utf-8";
      meta.$responseHeaders = { ...meta.$responseHeaders, "Content-Disposition": `attachment; filename="${name}"` };
      return csv;
    },
  },
};
