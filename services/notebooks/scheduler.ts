/**
 * The scheduler tick every replica runs. Each slot is claimed by inserting its run; the unique
 * key on (notebook_id, slot_time) lets exactly one replica win, and a slot that was already
 * claimed (ran, or is running) is never claimed again after a restart.
 */
import type { DataSource } from "typeorm";
import { newId } from "../../lib/ids";
import { DETAIL } from "./messages";
import type { Day } from "./schedule";
import { dueSlot } from "./schedule";

/** The module recorded on runs a schedule started. */
export const SCHEDULE_MODULE = "Notebooks";

interface ScheduledRow {
  notebook_id: string;
  schedule_period: Day | null;
  schedule_time: string;
  schedule_until: string;
  scheduled_at: string;
}

export interface TickResult {
  claimed: number;
  expired: number;
}

export async function schedulerTick(db: DataSource, timeoutS: number, now = Date.now()): Promise<TickResult> {
  // A replica that died mid-run leaves it 'running'; a live one ends every run by its time limit.
  await db.query(`UPDATE runs SET status = 'failed', error = $1, ended_at = $2 WHERE status = 'running' AND started_at < $3`, [
    DETAIL.interrupted,
    now,
    now - timeoutS * 1000 - 60_000,
  ]);

  const rows: ScheduledRow[] = await db.query(
    `SELECT notebook_id, schedule_period, schedule_time, schedule_until, scheduled_at FROM notebooks WHERE until_at IS NOT NULL`,
  );
  let claimed = 0;
  for (const row of rows) {
    const slot = dueSlot(
      { period: row.schedule_period, time: row.schedule_time, until: row.schedule_until },
      Number(row.scheduled_at),
      now,
    );
    if (slot === null) continue;
    try {
      const inserted: unknown[] = await db.query(
        `INSERT INTO runs (run_id, notebook_id, module, slot_time, status, queued_at)
         VALUES ($1, $2, $3, $4, 'queued', $5)
         ON CONFLICT (notebook_id, slot_time) DO NOTHING RETURNING run_id`,
        [newId(), row.notebook_id, SCHEDULE_MODULE, slot, now],
      );
      claimed += inserted.length;
    } catch (err) {
      // The notebook was deleted since it was read: nothing to run.
      if ((err as { driverError?: { code?: string } }).driverError?.code !== "23503") throw err;
    }
  }

  // Past `until` a notebook is Not Scheduled. Cleared after the claims above, with the same
  // `now`, so a last slot at `until` itself is claimed before its schedule goes.
  const [, expired] = (await db.query(
    `UPDATE notebooks SET schedule_period = NULL, schedule_time = NULL, schedule_until = NULL, until_at = NULL, scheduled_at = NULL
      WHERE until_at < $1`,
    [now],
  )) as [unknown[], number];
  return { claimed, expired };
}
