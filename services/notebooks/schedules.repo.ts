/** The SQL of notebooks' schedules: set, cleared, read by the scheduler tick and expired past `until`. */
import type { Affected, Queryable } from "./notebooks.repo";
import type { Day, Schedule } from "./schedule";

export async function setSchedule(db: Queryable, ids: string[], s: Schedule, untilAt: number, by: string, now: number): Promise<void> {
  await db.query(
    `UPDATE notebooks SET schedule_period = $2, schedule_time = $3, schedule_until = $4, until_at = $5, scheduled_at = $6,
            updated_at = $6, updated_by = $7
      WHERE notebook_id = ANY($1::uuid[])`,
    [ids, s.period, s.time, s.until, untilAt, now, by],
  );
}

export async function clearSchedule(db: Queryable, ids: string[], by: string, now: number): Promise<void> {
  await db.query(
    `UPDATE notebooks SET schedule_period = NULL, schedule_time = NULL, schedule_until = NULL, until_at = NULL,
            scheduled_at = NULL, updated_at = $2, updated_by = $3
      WHERE notebook_id = ANY($1::uuid[])`,
    [ids, now, by],
  );
}

export interface ScheduledRow {
  notebook_id: string;
  schedule_period: Day | null;
  schedule_time: string;
  schedule_until: string;
  scheduled_at: string;
}

export async function scheduledNotebooks(db: Queryable): Promise<ScheduledRow[]> {
  return db.query(
    `SELECT notebook_id, schedule_period, schedule_time, schedule_until, scheduled_at FROM notebooks WHERE until_at IS NOT NULL`,
  );
}

/** Schedules whose `until` is before `now` are cleared: those notebooks are Not Scheduled. */
export async function expireSchedules(db: Queryable, now: number): Promise<number> {
  const [, expired] = (await db.query(
    `UPDATE notebooks SET schedule_period = NULL, schedule_time = NULL, schedule_until = NULL, until_at = NULL, scheduled_at = NULL
      WHERE until_at < $1`,
    [now],
  )) as Affected;
  return expired;
}
