/**
 * A job that runs once a day across any number of replicas of a service: every replica checks
 * hourly, and the first to claim the job's row in the service's `jobs` table runs it. The claim
 * is a guarded update under an advisory lock, short and separate from the work, so the work can
 * take its own locks. A run that fails gives its claim back, so the next hourly check retries.
 */
import type { DataSource } from "typeorm";

const DAY_MS = 24 * 3600 * 1000;

/** How often each replica tries to claim a daily job's run (mixins/periodic.mixin.ts, `daily: true`). */
export const DAILY_CHECK_MS = 3600 * 1000;

/** Each service schema that has daily jobs keeps their last runs here. */
export const JOBS_TABLE_DDL = `CREATE TABLE IF NOT EXISTS jobs (name text PRIMARY KEY, last_run bigint NOT NULL DEFAULT 0)`;

export interface DailyJob {
  /** Service name: with `job`, the advisory lock's key, which is database-wide. */
  service: string;
  /** The row in the service's `jobs` table. */
  job: string;
}

/**
 * Claims today's run: true for exactly one caller a day (a minute's slack, so an hourly check
 * drifting a little still runs daily). `force` claims even when the job ran less than a day
 * ago; the lock still keeps two simultaneous forced runs to one. Returns the previous last run
 * on success, undefined when not claimed.
 */
export async function claimDailyRun(db: DataSource, job: DailyJob, now: number, force: boolean): Promise<number | undefined> {
  return db.transaction(async (tx) => {
    const [{ locked }] = (await tx.query(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked`, [`ims:${job.service}:${job.job}`])) as {
      locked: boolean;
    }[];
    if (!locked) return undefined;
    const [row] = (await tx.query(`SELECT last_run::float8 AS last_run FROM jobs WHERE name = $1 FOR UPDATE`, [job.job])) as { last_run: number }[];
    const previous = row?.last_run ?? 0;
    if (!force && previous > now - DAY_MS + 60000) return undefined;
    await tx.query(`INSERT INTO jobs (name, last_run) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET last_run = excluded.last_run`, [
      job.job,
      now,
    ]);
    return previous;
  });
}

/** Runs `work` when today's run is claimed; a throw gives the claim back (unless a later run took it) and is rethrown. */
export async function runDaily<T>(db: DataSource, job: DailyJob, force: boolean, work: (now: number) => Promise<T>): Promise<T | undefined> {
  const now = Date.now();
  const previous = await claimDailyRun(db, job, now, force);
  if (previous === undefined) return undefined;
  try {
    return await work(now);
  } catch (err) {
    await db.query(`UPDATE jobs SET last_run = $2 WHERE name = $1 AND last_run = $3`, [job.job, previous, now]).catch(() => undefined);
    throw err;
  }
}
