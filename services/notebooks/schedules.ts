/**
 * Schedules: set and cleared by the operations, and the scheduler tick every replica runs. Each
 * slot is claimed by inserting its run; the unique key on (notebook_id, slot_time) lets exactly
 * one replica win, and a slot that was already claimed (ran, or is running) is never claimed
 * again after a restart.
 */
import { diff } from "../../lib/audit";
import { DomainError } from "../../lib/errors";
import { DETAIL, MSG } from "./messages";
import { notebookChange, unique, visibleOrFail } from "./notebooks";
import type { NotebookRow } from "./notebooks.repo";
import type { NotebooksPort } from "./port";
import { claimSlot, failStaleRuns } from "./runs.repo";
import { DEFAULT_TIME, dueSlot, parsePeriod, parseTime, parseUntil, type Schedule } from "./schedule";
import * as schedules from "./schedules.repo";

/** The module recorded on runs a schedule started. */
export const SCHEDULE_MODULE = "Notebooks";

export interface ScheduleParams {
  nbk_ids: string[];
  until: string;
  period?: string | null;
  time?: string | null;
}

/** A schedule's change as the audit trail shows it (null: not scheduled). */
const scheduleChanges = (row: NotebookRow, next: Schedule | null) =>
  diff(
    { period: row.schedule_period, time: row.schedule_time, until: row.schedule_until },
    { period: next?.period ?? null, time: next?.time ?? null, until: next?.until ?? null },
  );

/** Op 65: period a day of the week (none: every day), time HH:MM UTC (default 00:00), until. */
export async function scheduleNotebooks(port: NotebooksPort, params: ScheduleParams) {
  const fail = (detail: string, field?: string) => new DomainError(400, MSG.requestError(detail), field);
  const untilAt = parseUntil(params.until);
  if (untilAt === undefined) throw fail(DETAIL.badUntil, "until");
  const time = params.time ?? DEFAULT_TIME;
  if (!parseTime(time)) throw fail(DETAIL.badTime, "time");
  const period = parsePeriod(params.period);
  if (period === undefined) throw fail(DETAIL.badPeriod, "period");
  const ids = unique(params.nbk_ids);
  const rows = await visibleOrFail(port, ids, (id) => fail(DETAIL.notFound(id)));
  const now = Date.now();
  const by = port.user.username;
  // An `until` already past leaves nothing to run: the notebooks are Not Scheduled.
  const next: Schedule | null = untilAt < now ? null : { period, time: time.trim(), until: params.until.trim() };
  const changes = rows.map((r) => notebookChange("schedule", r, scheduleChanges(r, next)));
  await port.audited(changes, (q) => (next ? schedules.setSchedule(q, ids, next, untilAt, by, now) : schedules.clearSchedule(q, ids, by, now)));
  return MSG.success;
}

/** Op 66: the notebooks are Not Scheduled. */
export async function unscheduleNotebooks(port: NotebooksPort, nbk_ids: string[]) {
  const ids = unique(nbk_ids);
  const rows = await visibleOrFail(port, ids, (id) => new DomainError(500, MSG.requestError(DETAIL.notFound(id))));
  const changes = rows.map((r) => notebookChange("unschedule", r, scheduleChanges(r, null)));
  await port.audited(changes, (q) => schedules.clearSchedule(q, ids, port.user.username, Date.now()));
  return MSG.success;
}

export interface TickResult {
  claimed: number;
  expired: number;
}

/** The scheduler tick: stale runs failed, due slots claimed, schedules past `until` cleared. */
export async function schedulerTick(port: Pick<NotebooksPort, "db" | "runTimeoutS">, now = Date.now()): Promise<TickResult> {
  // A replica that died mid-run leaves it 'running'; a live one ends every run by its time limit.
  await failStaleRuns(port.db, now - port.runTimeoutS * 1000 - 60_000, DETAIL.interrupted, now);

  let claimed = 0;
  for (const row of await schedules.scheduledNotebooks(port.db)) {
    const slot = dueSlot(
      { period: row.schedule_period, time: row.schedule_time, until: row.schedule_until },
      Number(row.scheduled_at),
      now,
    );
    if (slot === null) continue;
    claimed += await claimSlot(port.db, row.notebook_id, SCHEDULE_MODULE, slot, now);
  }

  // Past `until` a notebook is Not Scheduled. Cleared after the claims above, with the same
  // `now`, so a last slot at `until` itself is claimed before its schedule goes.
  const expired = await schedules.expireSchedules(port.db, now);
  return { claimed, expired };
}

/** Every 5 s on every replica: the tick, then the queue picks up runs another replica queued but had no free slot for. */
export async function tick(port: NotebooksPort): Promise<void> {
  const { claimed } = await schedulerTick(port);
  if (claimed > 0) port.logger.info(`${claimed} scheduled notebook run(s) queued`);
  port.pumpRuns();
}
