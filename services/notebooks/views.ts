/** The Notebook object of the spec, made from a row and what its runs tell. Pure. */
import type { NotebookRow, NotebookWithRuns } from "./notebooks.repo";
import { executedName, relativePath } from "./names";
import type { Day } from "./schedule";

export type NotebookStatus = "Scheduled" | "Not Scheduled";

export interface NotebookView {
  notebook_id: string;
  notebook_name: string;
  status: NotebookStatus;
  created_at: number;
  updated_at: number;
  created_by: string;
  updated_by: string;
  last_run: string | null;
  no_of_runs: number;
  schedule: { period: Day | null; until: string | null; time: string | null };
  attributes: {
    path: string;
    executed_path: string | null;
    last_run_status: string | null;
    last_run_error: string | null;
  };
}

/** A schedule whose `until` has passed is over even before a scheduler tick clears it. */
export function isScheduled(row: Pick<NotebookRow, "until_at">, now = Date.now()): boolean {
  return row.until_at !== null && Number(row.until_at) >= now;
}

export function notebookView(row: NotebookWithRuns, now = Date.now()): NotebookView {
  const scheduled = isScheduled(row, now);
  const ran = row.last_status === "succeeded" || row.last_status === "failed" || row.no_of_runs > 0;
  return {
    notebook_id: row.notebook_id,
    notebook_name: row.notebook_name,
    status: scheduled ? "Scheduled" : "Not Scheduled",
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    created_by: row.created_by,
    updated_by: row.updated_by,
    last_run: row.last_run_at === null ? null : new Date(Number(row.last_run_at)).toISOString(),
    no_of_runs: row.no_of_runs,
    schedule: scheduled
      ? { period: row.schedule_period, until: row.schedule_until, time: row.schedule_time }
      : { period: null, until: null, time: null },
    attributes: {
      path: relativePath(row.owner, row.notebook_name),
      executed_path: ran ? relativePath(row.owner, executedName(row.notebook_name)) : null,
      last_run_status: row.last_status,
      last_run_error: row.last_error,
    },
  };
}
