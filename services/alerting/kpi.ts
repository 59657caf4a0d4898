/**
 * Alarm-system performance (docs/api-tour.md, "Alarm management"; ISA-18.2 section 16 / EEMUA 191):
 * the range of a KPI request and the answer's shape from what kpi.repo.ts aggregates in SQL. Pure.
 *
 * Definitions (docs/api-tour.md, "Alarm management"): every figure but the standing ones counts the alerts
 * that opened in [from, to]. The range is cut into 10-minute windows from `from` (the last one
 * may be shorter); a flood window has 10 or more openings. A trigger chatters when 3 of its
 * openings fall within 60 s; its `count` is its openings in the range. The standing figures
 * (`stale`, `unacknowledged_active`) are as of `to`: alerts active then, whenever they opened.
 * The counts come from rollups kept as alerts are written (migrations/0010-kpi-rollup.ts),
 * exact for any range: whole buckets from the rollup, the edges from the alerts.
 */
import { bucketPlan, type BucketPlan } from "../../lib/buckets";
import { MINUTE_MS } from "../../lib/time";
import { DAY_MS, isoWithOffset, parseIso, type Range } from "./time";

export const WINDOW_MS = 10 * 60_000;
export const FLOOD_OPENINGS = 10;
/** Also in the rollup's SQL (migrations/0010-kpi-rollup.ts, alert_chatter_from): the second predecessor within 60 s. */
export const CHATTER_OPENINGS = 3;
export const CHATTER_WITHIN_MS = 60_000;
export const STALE_AFTER_MS = DAY_MS;
export const TOP_TRIGGERS = 10;
/** The stale list is the longest-standing alerts first, at most this many. */
export const STALE_MAX = 100;
export const DEFAULT_DAYS = 30;

/** from/to of a KPI request (default the last 30 days); else the field at fault: unparsed, or `from` after `to`. */
export function kpiRange(from: string | undefined, to: string | undefined, now = Date.now()): Range | { invalid: "from" | "to"; unparsed: boolean } {
  const toMs = to === undefined || to === "" ? now : parseIso(to);
  if (toMs === null) return { invalid: "to", unparsed: true };
  const fromMs = from === undefined || from === "" ? toMs - DEFAULT_DAYS * DAY_MS : parseIso(from);
  if (fromMs === null) return { invalid: "from", unparsed: true };
  if (fromMs > toMs) return { invalid: "from", unparsed: false };
  return { from: fromMs, to: toMs };
}

/** The 10-minute windows of a range: a partial last one counts, an empty range is one window. */
export function windowCount(r: Range): number {
  return Math.max(1, Math.ceil((r.to - r.from) / WINDOW_MS));
}

/**
 * The 10-minute windows from `from` over per-minute rollups: a minute that a window edge cuts
 * (when `from` is not on a minute, one per window) is read raw with the range's edges; every
 * other whole minute lies in one window. `splitBase`: whole minutes m with (m - splitBase) a
 * multiple of WINDOW_MS are the cut ones (null when none is).
 */
export interface WindowPlan extends BucketPlan {
  splitBase: number | null;
}

export function windowPlan(r: Range): WindowPlan {
  const plan = bucketPlan(r, MINUTE_MS);
  const offset = r.from % MINUTE_MS;
  if (offset === 0 || plan.whole === null) return { ...plan, splitBase: null };
  const base = r.from - offset;
  const raw = [...plan.raw];
  for (let m = base + WINDOW_MS; m < plan.whole.end; m += WINDOW_MS) raw.push({ from: m, to: m + MINUTE_MS - 1 });
  return { ...plan, raw, splitBase: base };
}

/** What kpi.repo.ts answers, numbers as PostgreSQL sends them (bigint and numeric as text). */
export interface KpiRows {
  totals: { alerts: number; high: number; medium: number; low: number; ack_mean_ms: string | number | null; close_mean_ms: string | number | null };
  windows: { peak: number; floods: number };
  top: { watcher_id: string; trigger_id: string; trigger_name: string; count: number }[];
  chattering: { trigger_id: string; trigger_name: string; count: number }[];
  stale: { alert_id: string; trigger_name: string; start_ts: string | number }[];
  unacknowledged_active: number;
}

export interface Kpi {
  from: string;
  to: string;
  alerts: number;
  per_10min_avg: number;
  per_10min_peak: number;
  flood_percent: number;
  priority_distribution: { high: number; medium: number; low: number };
  top_triggers: { trigger_id: string; trigger_name: string; watcher_id: string; count: number; percent: number }[];
  chattering: { trigger_id: string; trigger_name: string; count: number }[];
  stale: { alert_id: string; trigger_name: string; active_hours: number }[];
  mean_time_to_ack_s: number | null;
  mean_time_to_close_s: number | null;
  unacknowledged_active: number;
}

const round2 = (x: number): number => Math.round(x * 100) / 100;
const percent = (part: number, whole: number): number => (whole === 0 ? 0 : round2((100 * part) / whole));
const seconds = (ms: string | number | null): number | null => (ms === null ? null : round2(Number(ms) / 1000));

export function kpiOf(r: Range, rows: KpiRows, now = Date.now()): Kpi {
  const { alerts } = rows.totals;
  const windows = windowCount(r);
  return {
    from: isoWithOffset(r.from),
    to: isoWithOffset(r.to),
    alerts,
    per_10min_avg: round2(alerts / windows),
    per_10min_peak: rows.windows.peak,
    flood_percent: percent(rows.windows.floods, windows),
    priority_distribution: {
      high: percent(rows.totals.high, alerts),
      medium: percent(rows.totals.medium, alerts),
      low: percent(rows.totals.low, alerts),
    },
    top_triggers: rows.top.map((t) => ({ trigger_id: t.trigger_id, trigger_name: t.trigger_name, watcher_id: t.watcher_id, count: t.count, percent: percent(t.count, alerts) })),
    chattering: rows.chattering.map((c) => ({ trigger_id: c.trigger_id, trigger_name: c.trigger_name, count: c.count })),
    stale: rows.stale.map((s) => ({ alert_id: s.alert_id, trigger_name: s.trigger_name, active_hours: round2((now - Number(s.start_ts)) / 3_600_000) })),
    mean_time_to_ack_s: seconds(rows.totals.ack_mean_ms),
    mean_time_to_close_s: seconds(rows.totals.close_mean_ms),
    unacknowledged_active: rows.unacknowledged_active,
  };
}
