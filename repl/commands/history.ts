/** A tag's past at a glance: `pipelines.readings.history` (docs/api-tour.md, "Looking back") as a small table. */
import type { HistoryAnswer } from "../../services/pipelines/readings";
import { callAs } from "../call";
import { requireId, requireText, table } from "../format";
import { UsageError, type AdminCommand } from "../types";

/** Rows fit a terminal: a month comes back as days, a day as half hours, ten minutes of a gateway raw. */
const DEFAULT_POINTS = 50;
const MAX_POINTS = 10_000;

const UNITS: [number, string][] = [
  [86_400_000, "d"],
  [3_600_000, "h"],
  [60_000, "min"],
  [1000, "s"],
];

/** A bucket size in its largest whole unit: 3600000 → `1 h`; raw readings have none. */
export function bucketText(ms: number): string {
  if (ms === 0) return "raw readings";
  const [size, unit] = UNITS.find(([u]) => ms % u === 0) ?? [1, "ms"];
  return `buckets of ${ms / size} ${unit}`;
}

/** Means have long tails of digits; seven significant ones keep a counter's (12783.202) and drop the noise. */
const shown = (x: number): number => Number(x.toPrecision(7));

export const history: AdminCommand = {
  command: "history <monitorId> <tag> <from> <to>",
  description:
    "A tag's history as a table: each reading when the range holds few, else buckets with mean, min and max (from and to ISO 8601, e.g. 2026-11-01T00:00:00Z).",
  options: [{ option: "--points <n>", description: `at most n rows, 1 to ${MAX_POINTS} (default ${DEFAULT_POINTS})` }],
  async run(ctx, args) {
    const monitor_id = requireId(args.monitorId, "monitorId");
    const tag = requireText(args.tag, "tag");
    const from = requireText(args.from, "from");
    const to = requireText(args.to, "to");
    const points = args.options.points === undefined ? DEFAULT_POINTS : Number(args.options.points);
    if (!Number.isInteger(points) || points < 1 || points > MAX_POINTS) throw new UsageError(`--points must be an integer from 1 to ${MAX_POINTS}`);
    const res = await callAs<HistoryAnswer>(ctx, "pipelines.readings.history", { monitor_id, tag, from, to, points });
    const unit = res.tag_unit ? ` [${res.tag_unit}]` : "";
    const head = `${res.tag}${unit} of ${res.monitor_id}: ${res.points.length} point(s), ${bucketText(res.bucket_ms)}`;
    if (res.points.length === 0) return `${head}\nno readings in the range`;
    const rows = res.points.map((p) => [new Date(p.timestamp).toISOString(), shown(p.value), shown(p.min), shown(p.max), p.count]);
    return `${head}\n${table(["timestamp", "value", "min", "max", "count"], rows)}`;
  },
};
