/** Running notebooks now or on a schedule. */
import type { Context } from "moleculer";
import { auditedWrite, diff } from "../../lib/audit";
import type { RequestMeta } from "../../lib/contract";
import { DomainError } from "../../lib/errors";
import { idList, notebookChange, text, unique, type NotebooksActions } from "./context";
import { DETAIL, MSG } from "./messages";
import { NBK_IDS_FIELD } from "./openapi";
import * as repo from "./repo";
import type { NotebookRow } from "./repo";
import { queueRuns } from "./runs.repo";
import { DAYS, DEFAULT_TIME, parsePeriod, parseTime, parseUntil, type Schedule } from "./schedule";

const requestFailed = (field: string) => MSG.requestError(MSG.invalidInput(field));

/** A schedule's change as the audit trail shows it (null: not scheduled). */
const scheduleChanges = (row: NotebookRow, next: Schedule | null) =>
  diff(
    { period: row.schedule_period, time: row.schedule_time, until: row.schedule_until },
    { period: next?.period ?? null, time: next?.time ?? null, until: next?.until ?? null },
  );

export const runActions: NotebooksActions = {
  /**
   * Queues a run of each notebook and answers at once; the run records (and the notebook's
   * no_of_runs, last_run, attributes.last_run_status) tell how it went. `module` is the
   * application module the run is made for; it is recorded on the run.
   */
  run: {
    http: {
      op: 64,
      // The spec documents GET with a JSON body; POST on the same path is accepted too (contract).
      routes: ["GET /_notebooks/notebooks/_run", "POST /_notebooks/notebooks/_run"],
      group: "notebooks",
      summary: "Run notebooks",
      description:
        "Queues a run of each notebook on a Jupyter kernel and answers at once. The notebook's no_of_runs, last_run and " +
        "attributes.last_run_status tell how the run went; its executed copy is kept beside it. The body is read on GET too.",
      fields: {
        nbkIds: { in: "body", required: true, description: "ids of the notebooks to run", example: ["6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b"] },
        module: { in: "body", required: true, description: "the application module the run is made for, recorded on the run", example: "Condition Monitoring" },
      },
      answer: { schema: "object", example: {} },
      errors: [
        [400, MSG.runIdsRequired],
        [400, MSG.executionError("<detail>")],
        [500, MSG.executionError(MSG.runtimeMissing)],
        [500, MSG.executionError(MSG.sandboxMissing)],
        [500, MSG.requestError("<detail>")],
      ],
    },
    params: {
      nbkIds: { ...idList, optional: true },
      module: { ...text, optional: true },
      $$messages: { invalid: MSG.invalidInput },
    },
    async handler(ctx: Context<{ nbkIds?: string[]; module?: string }, RequestMeta>) {
      const ids = unique(ctx.params.nbkIds ?? []);
      if (ids.length === 0) throw new DomainError(400, MSG.runIdsRequired, "nbkIds");
      const module = ctx.params.module?.trim();
      if (!module) throw new DomainError(400, MSG.insufficientInputs, "module");
      if (!(await this.jupyterPython())) throw new DomainError(500, MSG.executionError(MSG.runtimeMissing));
      // Never unconfined (docs/security.md, Notebooks).
      if (!(await this.sandbox()).ok) throw new DomainError(500, MSG.executionError(MSG.sandboxMissing));
      const rows = await this.visibleOrFail(ctx.meta.user, ids, (id) => new DomainError(400, MSG.executionError(DETAIL.notFound(id))));
      const changes = rows.map((r) => notebookChange("run", r, { module: [null, module] }));
      await auditedWrite(this.db, this.streams, ctx, changes, (q) => queueRuns(q, ids, module, ctx.meta.user.username, Date.now()));
      this.queue.pump();
      return {};
    },
  },

  /** Period a day of the week (none: every day), time HH:MM UTC (default 00:00), until. */
  schedule: {
    http: {
      op: 65,
      // POST is the declared method; a request form of the spec shows GET, accepted too (contract).
      routes: ["POST /_notebooks/notebooks/_schedule", "GET /_notebooks/notebooks/_schedule"],
      group: "notebooks",
      summary: "Schedule notebooks",
      description:
        "Runs each notebook at `time` (UTC) on the `period` day of every week, or every day, until `until`. A slot runs once " +
        "however many replicas run; an `until` already past leaves the notebooks Not Scheduled. The body is read on GET too.",
      fields: {
        nbk_ids: NBK_IDS_FIELD,
        until: { in: "body", description: "the last moment a run may start, YYYY-MM-DD HH:MM in UTC", example: "2026-06-30 18:00" },
        period: {
          in: "body",
          enum: [...DAYS],
          description: "the day of the week to run on (a three-letter abbreviation and any case are accepted); left out or null: every day",
          example: "Monday",
        },
        time: { in: "body", description: "the time of day to run, HH:MM in UTC; 00:00 when left out", example: "06:30" },
      },
      answer: { text: MSG.success },
      errors: [[400, MSG.requestError("<detail>")]],
    },
    params: {
      nbk_ids: { ...idList, min: 1 },
      until: text,
      period: { ...text, optional: true, nullable: true },
      time: { ...text, optional: true, nullable: true },
      $$messages: { invalid: requestFailed },
    },
    async handler(ctx: Context<{ nbk_ids: string[]; until: string; period?: string | null; time?: string | null }, RequestMeta>) {
      const fail = (detail: string, field?: string) => new DomainError(400, MSG.requestError(detail), field);
      const untilAt = parseUntil(ctx.params.until);
      if (untilAt === undefined) throw fail(DETAIL.badUntil, "until");
      const time = ctx.params.time ?? DEFAULT_TIME;
      if (!parseTime(time)) throw fail(DETAIL.badTime, "time");
      const period = parsePeriod(ctx.params.period);
      if (period === undefined) throw fail(DETAIL.badPeriod, "period");
      const ids = unique(ctx.params.nbk_ids);
      const rows = await this.visibleOrFail(ctx.meta.user, ids, (id) => fail(DETAIL.notFound(id)));
      const now = Date.now();
      const by = ctx.meta.user.username;
      // An `until` already past leaves nothing to run: the notebooks are Not Scheduled.
      const next: Schedule | null = untilAt < now ? null : { period, time: time.trim(), until: ctx.params.until.trim() };
      const changes = rows.map((r) => notebookChange("schedule", r, scheduleChanges(r, next)));
      await auditedWrite(this.db, this.streams, ctx, changes, (q) =>
        next ? repo.setSchedule(q, ids, next, untilAt, by, now) : repo.clearSchedule(q, ids, by, now),
      );
      return MSG.success;
    },
  },

  unschedule: {
    http: {
      op: 66,
      routes: ["POST /_notebooks/notebooks/_unschedule"],
      group: "notebooks",
      summary: "Unschedule notebooks",
      description: "Clears the schedule of each notebook: they are Not Scheduled.",
      fields: { nbk_ids: NBK_IDS_FIELD },
      answer: { text: MSG.success },
      // The spec gives unschedule one error, at 500.
      errors: [[500, MSG.requestError("<detail>")]],
    },
    params: {
      nbk_ids: { ...idList, min: 1 },
      $$messages: { invalid: requestFailed },
    },
    async handler(ctx: Context<{ nbk_ids: string[] }, RequestMeta>) {
      const ids = unique(ctx.params.nbk_ids);
      const rows = await this.visibleOrFail(ctx.meta.user, ids, (id) => new DomainError(500, MSG.requestError(DETAIL.notFound(id))));
      const changes = rows.map((r) => notebookChange("unschedule", r, scheduleChanges(r, null)));
      await auditedWrite(this.db, this.streams, ctx, changes, (q) => repo.clearSchedule(q, ids, ctx.meta.user.username, Date.now()));
      return MSG.success;
    },
  },
};
