/**
 * A tag's history at any zoom and a monitor's readings as CSV (docs/api-tour.md, "Looking back"), served by the
 * raw readings' owner under the CM routes. The rules are in history.ts, the SQL in history.repo.ts.
 */
import { Readable } from "node:stream";
import type { FieldDoc } from "../../lib/operations";
import { DomainError } from "../../lib/errors";
import { MINUTE_MS } from "../../lib/time";
import { MAX_TEXT } from "../../lib/validation";
import { visibleMonitor, type ResolvedMonitor } from "../config/contract";
import type { Ctx, PipelinesActions, PipelinesThis } from "./context";
import { csvHeader, csvRows } from "./history.csv";
import {
  bucketSize,
  DEFAULT_POINTS,
  freshFrom,
  historyRange,
  historyTiers,
  MAX_EXPORT_DAYS,
  MAX_HISTORY_DAYS,
  MAX_POINTS,
  pointsOf,
  rawPoint,
  type HistoryPoint,
  type Part,
  type RangeProblem,
} from "./history";
import { exportRows, historyParts, rawReadings } from "./history.repo";
import { MSG } from "./messages";

const text = { type: "string", max: MAX_TEXT, optional: true } as const;

const MONITOR_FIELD: FieldDoc = { description: "the monitor's id", example: "6f1d2c3b-4a5e-4f60-8a71-92b3c4d5e6f7" };
const FROM_FIELD: FieldDoc = { description: "start of the range, ISO 8601 (inclusive)", example: "2026-11-01T00:00:00+05:30", required: true };
const TO_FIELD: FieldDoc = { description: "end of the range, ISO 8601 (inclusive)", example: "2026-11-02T00:00:00+05:30", required: true };

interface HistoryParams {
  monitor_id: string;
  tag?: string;
  from?: string;
  to?: string;
  points?: number;
}

export interface HistoryAnswer {
  monitor_id: string;
  tag: string;
  tag_unit: string;
  bucket_ms: number;
  points: HistoryPoint[];
}

/** The monitor in the caller's scope; unknown and out of scope answer alike. */
async function monitorOf(ctx: Ctx<{ monitor_id: string }>): Promise<ResolvedMonitor> {
  const monitor = await visibleMonitor(ctx, ctx.meta.user, ctx.params.monitor_id);
  if (!monitor) throw new DomainError(400, MSG.invalidMonitorId, "monitor_id");
  return monitor;
}

const RANGE_MESSAGES: Record<RangeProblem, (field: string) => string> = {
  missing: () => MSG.insufficientDates,
  unparsed: () => MSG.invalidDateFormat,
  "from-after-to": (field) => MSG.invalidInput(field),
  "too-long": (field) => MSG.invalidInput(field),
};

function rangeOf(params: { from?: string; to?: string }, maxDays: number) {
  const r = historyRange(params.from, params.to, maxDays);
  if ("problem" in r) throw new DomainError(400, RANGE_MESSAGES[r.problem](r.field), r.field);
  return r;
}

const heldIn = (parts: Part[]): number => parts.reduce((n, p) => n + p.n, 0);

async function history(self: PipelinesThis, ctx: Ctx<HistoryParams>): Promise<HistoryAnswer> {
  const monitor = await monitorOf(ctx);
  if (ctx.params.tag === undefined || ctx.params.tag === "") throw new DomainError(400, MSG.insufficientInputs, "tag");
  const tag = monitor.tags.find((t) => t.tag_name === ctx.params.tag);
  if (!tag) throw new DomainError(400, MSG.invalidTag, "tag");
  const r = rangeOf(ctx.params, MAX_HISTORY_DAYS);
  const points = ctx.params.points ?? DEFAULT_POINTS;
  let bucket = bucketSize(r, points);
  const answer = { monitor_id: monitor.monitor_id, tag: tag.tag_name, tag_unit: tag.tag_unit };
  const fresh = freshFrom(Date.now());
  let parts = await historyParts(self.db, monitor.monitor_id, tag.tag_id, historyTiers(r, bucket, fresh), bucket);
  if (bucket < MINUTE_MS) {
    // Buckets under a minute are read from raw readings only; where retention took them, the minute
    // rollups still hold the range. A minute is a multiple of every smaller size: no more buckets.
    const byMinute = await historyParts(self.db, monitor.monitor_id, tag.tag_id, historyTiers(r, MINUTE_MS, fresh), MINUTE_MS);
    if (heldIn(byMinute) > heldIn(parts)) [bucket, parts] = [MINUTE_MS, byMinute];
  }
  const held = heldIn(parts);
  if (held <= points) {
    // Few enough to show each; where retention took raw readings the rollups still hold, buckets.
    const raw = await rawReadings(self.db, monitor.monitor_id, tag.tag_id, r, points);
    if (raw.length >= held) return { ...answer, bucket_ms: 0, points: raw.map((x) => rawPoint(x.ts, x.value)) };
  }
  return { ...answer, bucket_ms: bucket, points: pointsOf(parts, r) };
}

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
    handler(ctx: Ctx<HistoryParams>) {
      return history(this, ctx);
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
      const monitor = await monitorOf(ctx);
      const r = rangeOf(ctx.params, MAX_EXPORT_DAYS);
      const name = `${monitor.monitor_name.replace(/[^\w.-]+/g, "_")}_${new Date(r.from).toISOString().slice(0, 10)}.csv`;
      const meta = ctx.meta as { $responseType?: string; $responseHeaders?: Record<string, string> };
      meta.$responseType = "text/csv; charset=utf-8";
      meta.$responseHeaders = { ...meta.$responseHeaders, "Content-Disposition": `attachment; filename="${name}"` };
      const tags = monitor.tags.map((t) => ({ tag_id: t.tag_id, tag_name: t.tag_name }));
      const db = this.db;
      async function* csv(): AsyncGenerator<Buffer> {
        yield Buffer.from(csvHeader(tags));
        yield* csvRows(exportRows(db, monitor.monitor_id, r), tags);
      }
      return Readable.from(csv(), { objectMode: false });
    },
  },
};
