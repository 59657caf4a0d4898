/**
 * The daily job mixin: a job a service runs once a day whatever its number of replicas (claimed
 * through lib/daily-job). Each replica checks hourly; `<job>.run` runs it now (operators, tests;
 * `force: false` runs it only when a day has passed since the last run). The service needs the
 * DbMixin and a `jobs` table in its schema (JOBS_TABLE_DDL).
 *
 *   mixins: [StreamMixin(), DbMixin({ schema: "cm", migrations }), DailyJobMixin("retention", runRetention)],
 */
import type { Context, Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import { runDaily } from "../lib/daily-job";

const HOUR_MS = 3600 * 1000;

/** What a job gets: the service's database, a caller for other services' actions, its logger. */
export interface DailyJobEnv {
  db: DataSource;
  caller: Pick<Context, "call">;
  logger: Service["logger"];
}

/** `ran: false` when another run has today's claim; the job's own report otherwise. */
export type DailyJobReport<R> = { ran: false } | ({ ran: true } & R);

interface JobLocals {
  db: DataSource;
  dailyJobTimer?: NodeJS.Timeout;
}
type JobService = Service & JobLocals;

export function DailyJobMixin<R extends object>(job: string, work: (env: DailyJobEnv, now: number) => Promise<R>): Partial<ServiceSchema> {
  async function run(service: JobService, caller: DailyJobEnv["caller"], force: boolean): Promise<DailyJobReport<R>> {
    const env = { db: service.db, caller, logger: service.logger };
    const report = await runDaily(service.db, { service: service.name, job }, force, (now) => work(env, now));
    return report === undefined ? { ran: false } : { ran: true, ...report };
  }

  const mixin: Partial<ServiceSchema<ServiceSettingSchema, object, JobLocals>> = {
    actions: {
      [`${job}.run`]: {
        visibility: "public",
        params: { force: { type: "boolean", optional: true, default: true } },
        handler(ctx: Context<{ force: boolean }>) {
          return run(this, ctx, ctx.params.force);
        },
      },
    },
    started() {
      this.dailyJobTimer = setInterval(() => {
        run(this, this.broker, false).catch((err: unknown) => this.logger.warn(`${job} failed:`, err));
      }, HOUR_MS);
      this.dailyJobTimer.unref();
    },
    stopped() {
      clearInterval(this.dailyJobTimer);
    },
  };
  return mixin as Partial<ServiceSchema>;
}
