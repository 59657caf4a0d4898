/**
 * Maintenance windows of a watcher (docs/api-tour.md, "Alarm management"): while one covers an
 * alert's start, the alert opens `suppressed` and is not notified (evaluation.ts). Pure: the window
 * a body asks for, and a window as the watcher fetch shows it. The SQL is in suppressions.repo.ts.
 */
import type { SuppressionRow } from "./suppressions.repo";
import { MSG } from "./messages";
import { isoWithOffset, parseIso } from "./time";

/** A window as the watcher fetch shows it: times ISO 8601 with offset, like an alert's start_time. */
export interface SuppressionView {
  id: string;
  from: string;
  to: string;
  reason: string;
  created_by: string | null;
}

/** The window of a body `{from, to}` (epoch ms), or the message of what is wrong with it. */
export function windowOf(from: string, to: string): { from: number; to: number } | { error: string; field: string } {
  const fromMs = parseIso(from);
  if (fromMs === null) return { error: MSG.invalidDateFormat, field: "from" };
  const toMs = parseIso(to);
  if (toMs === null) return { error: MSG.invalidDateFormat, field: "to" };
  // A window ends after it starts; an empty one would suppress nothing.
  if (toMs <= fromMs) return { error: MSG.invalidInput("to"), field: "to" };
  return { from: fromMs, to: toMs };
}

export function suppressionView(row: SuppressionRow): SuppressionView {
  return {
    id: row.id,
    from: isoWithOffset(Number(row.from_ts)),
    to: isoWithOffset(Number(row.to_ts)),
    reason: row.reason,
    created_by: row.created_by,
  };
}
