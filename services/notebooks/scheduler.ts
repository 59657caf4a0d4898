/**
 * The scheduler tick every replica runs. Each slot is claimed by inserting its run; the unique
 * key on (notebook_id, slot_time) lets exactly one replica win, and a slot that was already
 * claimed (ran, or is running) is never claimed again after a restart.
 */
import type { DataSource } from "typeorm";
import { DETAIL } from "./messages";
import { expireSchedules, scheduledNotebooks } from "./repo";
import { claimSlot, failStaleRuns } from "./runs.repo";
import { dueSlot } from "./schedule";

/** The module recorded on runs a schedule started. */
export const SCHEDULE_MODULE = "Notebooks";

export interface TickResult {
  claimed: number;
  expired: number;
}

export async function schedulerTick(db: DataSource, timeoutS: number, now = Date.now()): Promise<TickResult> {
  // A replica that died mid-run leaves it 'running'; a live one ends every run by its time limit.
  await failStaleRuns(db, now - timeoutS * 1000 - 60_000, DETAIL.interrupted, now);

  let claimed = 0;
  for (const row of await scheduledNotebooks(db)) {
    const slot = dueSlot(
      { period: row.schedule_period, time: row.schedule_time, until: row.schedule_until },
      Number(row.scheduled_at),
      now,
    );
    if (slot === null) continue;
    claimed += await claimSlot(db, row.notebook_id, SCHEDULE_MODULE, slot, now);
  }

  // Past `until` a notebook is Not Scheduled. Cleared after the claims above, with the same
  // `now`, so a last slot at `until` itself is claimed before its schedule goes.
  const expired = await expireSchedules(db, now);
  return { claimed, expired };
}
