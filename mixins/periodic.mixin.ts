/**
 * The periodic-job mixin: work a service repeats while it runs, declared under `jobs`:
 *
 *   mixins: [PeriodicMixin(), StreamMixin(), DbMixin({ schema: "cm", migrations })],
 *   jobs: {
 *     retention: { everyMs: DAILY_CHECK_MS, daily: true, run: deleteOldSpectra },
 *     sweep: { everyMs: 5000, run() { return sweepOverdue(this.env); } },
 *   },
 *
 * The timers start once every `started` of the service (its mixins' and its own) has finished,
 * and stop before any `stopped` runs, waiting for the runs under way: a job always sees the
 * service whole, its database open. A run never overlaps itself (a tick that finds the previous
 * run still going is skipped); a failure is logged as a warning and the next tick tries again.
 * The timers do not keep the process alive.
 *
 * A `daily` job runs once a day whatever the number of replicas: each tick only tries to claim
 * today's run (lib/daily-job: the service needs the DbMixin and JOBS_TABLE_DDL in its
 * migrations). Its action `<job>.run` runs it now (operators, tests; `force: false` runs it only
 * when a day has passed since the last run) and answers `{ ran: true, ...report }`, or
 * `{ ran: false, ...idle }` when another run has today's claim. A job marked `runnable` gets the
 * action too, answering what its run answers.
 */
import type { Context, Service, ServiceSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { Caller } from "../lib/contract";
import { runDaily } from "../lib/daily-job";

/** Who a job calls other services' actions through: the broker on a tick, the caller's context for `<job>.run`. */
export type JobCaller = Caller;

export interface PeriodicJob<S = Service> {
  /** The interval; a function is read when the service starts (an interval from the environment). */
  everyMs: number | (() => number);
  daily?: true;
  /** Gets the action `<job>.run` too, though not daily: it answers what `run` does (operators, tests). */
  runnable?: true;
  /** A daily job: what `<job>.run` answers besides `ran: false` when the job was not run. */
  idle?: object;
  /** The work; a daily job's report (an object) is `<job>.run`'s answer. */
  run(this: S, caller: JobCaller, now: number): Promise<unknown>;
}

export type PeriodicJobs<S = Service> = Record<string, PeriodicJob<S>>;

interface JobTimer {
  timer: NodeJS.Timeout;
  running?: Promise<void>;
}

type JobService = Service & { db?: DataSource; jobTimers?: JobTimer[] };
type Lifecycle = (this: JobService) => unknown;

function runJob(service: JobService, name: string, job: PeriodicJob<JobService>, caller: JobCaller, force: boolean): Promise<unknown> {
  if (!job.daily) return job.run.call(service, caller, Date.now());
  const db = service.db;
  if (!db) throw new Error(`${service.name}: the daily job ${name} needs the DbMixin`);
  return runDaily(db, { service: service.name, job: name }, force, (now) => job.run.call(service, caller, now)).then((report) =>
    report === undefined ? { ran: false, ...job.idle } : { ran: true, ...(report as object) },
  );
}

function startJobs(this: JobService, jobs: PeriodicJobs<JobService>): void {
  this.jobTimers = Object.entries(jobs).map(([name, job]) => {
    const entry = {} as JobTimer;
    const ms = typeof job.everyMs === "function" ? job.everyMs() : job.everyMs;
    entry.timer = setInterval(() => {
      if (entry.running) return;
      entry.running = Promise.resolve()
        .then(() => runJob(this, name, job, this.broker, false))
        .then(
          () => undefined,
          (err: unknown) => this.logger.warn(`${name} failed:`, err),
        )
        .finally(() => (entry.running = undefined));
    }, ms);
    entry.timer.unref();
    return entry;
  });
}

async function stopJobs(this: JobService): Promise<void> {
  const timers = this.jobTimers ?? [];
  this.jobTimers = [];
  for (const t of timers) clearInterval(t.timer);
  await Promise.all(timers.map((t) => t.running));
}

const asList = (hooks: unknown): Lifecycle[] => (Array.isArray(hooks) ? (hooks as Lifecycle[]) : hooks ? [hooks as Lifecycle] : []);

export function PeriodicMixin(): Partial<ServiceSchema> {
  const mixin = {
    /** Runs on the schema with every mixin applied: the timers' hooks go last among `started`, first among `stopped`. */
    merged(schema: Partial<ServiceSchema> & { jobs?: PeriodicJobs<JobService> }) {
      const jobs = schema.jobs ?? {};
      const actions: Record<string, unknown> = { ...schema.actions };
      for (const [name, job] of Object.entries(jobs)) {
        if (!job.daily && !job.runnable) continue;
        actions[`${name}.run`] = {
          visibility: "public",
          params: { force: { type: "boolean", optional: true, default: true } },
          handler(this: JobService, ctx: Context<{ force: boolean }>) {
            return runJob(this, name, job, ctx, ctx.params.force);
          },
        };
      }
      schema.actions = actions as ServiceSchema["actions"];
      schema.started = [
        ...asList(schema.started),
        function (this: JobService) {
          startJobs.call(this, jobs);
        },
      ] as ServiceSchema["started"];
      // Moleculer runs `stopped` hooks last to first.
      schema.stopped = [...asList(schema.stopped), stopJobs] as ServiceSchema["stopped"];
    },
  };
  return mixin as Partial<ServiceSchema>;
}
