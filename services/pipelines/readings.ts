/**
 * A tag's history at any zoom and a monitor's readings as CSV (docs/api-tour.md, "Looking back"),
 * answered by the raw readings' owner under the CM routes: the monitor in the caller's scope, the
 * range, and which tier answers. The rules are in history.ts, the SQL in history.repo.ts.
 */
import { Readable } from "node:stream";
import { DomainError } from "../../lib/errors";
import { MINUTE_MS } from "../../lib/time";
import type { ResolvedMonitor } from "../config/contract";
import { csvHeader, csvRows } from "./history.csv";
import { bucketSize, DEFAULT_POINTS, freshFrom, historyRange, historyTiers, MAX_EXPORT_DAYS, MAX_HISTORY_DAYS, pointsOf, rawPoint, type HistoryPoint, type Part, type RangeProblem } from "./history";
import { exportRows, historyParts, rawReadings } from "./history.repo";
import { MSG } from "./messages";
import type { PipelinesPort } from "./port";

export interface HistoryParams {
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
async function monitorOf(port: PipelinesPort, monitor_id: string): Promise<ResolvedMonitor> {
  const monitor = await port.visibleMonitor(monitor_id);
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

export async function history(port: PipelinesPort, params: HistoryParams): Promise<HistoryAnswer> {
  const monitor = await monitorOf(port, params.monitor_id);
  if (params.tag === undefined || params.tag === "") throw new DomainError(400, MSG.insufficientInputs, "tag");
  const tag = monitor.tags.find((t) => t.tag_name === params.tag);
  if (!tag) throw new DomainError(400, MSG.invalidTag, "tag");
  const r = rangeOf(params, MAX_HISTORY_DAYS);
  const points = params.points ?? DEFAULT_POINTS;
  let bucket = bucketSize(r, points);
  const answer = { monitor_id: monitor.monitor_id, tag: tag.tag_name, tag_unit: tag.tag_unit };
  const fresh = freshFrom(Date.now());
  let parts = await historyParts(port.db, monitor.monitor_id, tag.tag_id, historyTiers(r, bucket, fresh), bucket);
  if (bucket < MINUTE_MS) {
    // Buckets under a minute are read from raw readings only; where retention took them, the minute
    // rollups still hold the range. A minute is a multiple of every smaller size: no more buckets.
    const byMinute = await historyParts(port.db, monitor.monitor_id, tag.tag_id, historyTiers(r, MINUTE_MS, fresh), MINUTE_MS);
    if (heldIn(byMinute) > heldIn(parts)) [bucket, parts] = [MINUTE_MS, byMinute];
  }
  const held = heldIn(parts);
  if (held <= points) {
    // Few enough to show each; where retention took raw readings the rollups still hold, buckets.
    const raw = await rawReadings(port.db, monitor.monitor_id, tag.tag_id, r, points);
    if (raw.length >= held) return { ...answer, bucket_ms: 0, points: raw.map((x) => rawPoint(x.ts, x.value)) };
  }
  return { ...answer, bucket_ms: bucket, points: pointsOf(parts, r) };
}

/** The export's file name and its CSV, streamed from the readings' cursor. */
export async function exportCsv(port: PipelinesPort, params: { monitor_id: string; from?: string; to?: string }): Promise<{ name: string; csv: Readable }> {
  const monitor = await monitorOf(port, params.monitor_id);
  const r = rangeOf(params, MAX_EXPORT_DAYS);
  const name = `${monitor.monitor_name.replace(/[^\w.-]+/g, "_")}_${new Date(r.from).toISOString().slice(0, 10)}.csv`;
  const tags = monitor.tags.map((t) => ({ tag_id: t.tag_id, tag_name: t.tag_name }));
  const db = port.db;
  async function* csv(): AsyncGenerator<Buffer> {
    yield Buffer.from(csvHeader(tags));
    yield* csvRows(exportRows(db, monitor.monitor_id, r), tags);
  }
  return { name, csv: Readable.from(csv(), { objectMode: false }) };
}
