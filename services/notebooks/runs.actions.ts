/** Running notebooks now (runs.ts) or on a schedule (schedules.ts). */
import type { Context } from "moleculer";
import type { RequestMeta } from "../../lib/contract";
import { MSG } from "./messages";
import type { NotebooksActions } from "./notebooks.types";
import { NBK_IDS_FIELD } from "./openapi";
import { idList, text } from "./params";
import * as runs from "./runs";
import { DAYS } from "./schedule";
import * as schedules from "./schedules";
import type { ScheduleParams } from "./schedules";

const requestFailed = (field: string) => MSG.requestError(MSG.invalidInput(field));

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
    handler(ctx: Context<{ nbkIds?: string[]; module?: string }, RequestMeta>) {
      return runs.runNotebooks(this.use(ctx), ctx.params);
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
    handler(ctx: Context<ScheduleParams, RequestMeta>) {
      return schedules.scheduleNotebooks(this.use(ctx), ctx.params);
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
    handler(ctx: Context<{ nbk_ids: string[] }, RequestMeta>) {
      return schedules.unscheduleNotebooks(this.use(ctx), ctx.params.nbk_ids);
    },
  },
};
