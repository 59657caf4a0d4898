/** The resources notebooks answers with, and the field docs its operations share (announced in the service's `openapi` setting). */
import { int, measured, nullable, obj } from "../../lib/openapi-schema";
import type { FieldDoc } from "../../lib/operations";
import { DAYS } from "./schedule";

const described = (schema: Record<string, unknown>, description: string, example?: unknown) => ({
  ...schema,
  description,
  ...(example !== undefined ? { examples: [example] } : {}),
});
const text = (description: string, example?: unknown) => described({ type: "string" }, description, example);
const nullableText = (description: string, example?: unknown) => described(nullable("string"), description, example);

const NOTEBOOK_ID = "6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b";

export const NOTEBOOKS_SCHEMAS = {
  Notebook: obj({
    notebook_id: text("the notebook's id", NOTEBOOK_ID),
    notebook_name: text("the file name, ending in .ipynb", "Bearing vibration.ipynb"),
    status: described({ type: "string", enum: ["Scheduled", "Not Scheduled"] }, "whether a schedule with an `until` still ahead is set"),
    created_at: measured("integer", "epoch ms", "when the notebook was created"),
    updated_at: measured("integer", "epoch ms", "when it was last renamed, saved or (un)scheduled"),
    created_by: text("the username of its creator (the owner)", "analyst@puneworks.example"),
    updated_by: text("the username of whoever changed it last", "analyst@puneworks.example"),
    last_run: nullableText("the start of its last finished run, ISO 8601 UTC; null when it never ran", "2026-01-15T06:30:00.000Z"),
    no_of_runs: described(int, "how many runs finished (succeeded or failed)", 3),
    schedule: described(
      obj({
        period: described({ type: ["string", "null"], enum: [...DAYS, null] }, "the day of the week it runs on; null: every day"),
        until: nullableText("the last moment it runs, YYYY-MM-DD HH:MM in UTC", "2026-06-30 18:00"),
        time: nullableText("the time of day it runs, HH:MM in UTC", "06:30"),
      }),
      "the schedule; every field null when the notebook is not scheduled",
    ),
    attributes: obj({
      path: text("the file, relative to the notebooks folder: <owner folder>/<notebook_name>", "analyst@puneworks.example/Bearing vibration.ipynb"),
      executed_path: nullableText("the executed copy of its last run; null when it never ran"),
      last_run_status: described({ type: ["string", "null"], enum: ["queued", "running", "succeeded", "failed", null] }, "the latest run's state; null when never run"),
      last_run_error: nullableText("why the latest run failed (the failing cell's error, a time limit); null otherwise", "ZeroDivisionError: division by zero"),
    }),
  }),
  NotebookCreated: obj({
    notebook_id: text("the new notebook's id", NOTEBOOK_ID),
    username: text("its owner, the caller", "analyst@puneworks.example"),
    notebook_name: text("the name it was given: Untitled.ipynb, Untitled1.ipynb, … as Jupyter names them", "Untitled.ipynb"),
    path: text("the file, relative to the notebooks folder", "analyst@puneworks.example/Untitled.ipynb"),
  }),
  NotebookCount: obj({
    "Total Notebooks": described(int, "every notebook the caller sees", 12),
    "Not Scheduled": described(int, "those without a schedule still running", 9),
    Scheduled: described(int, "those with a schedule whose `until` is still ahead", 3),
  }),
};

/** `notebook_id` in the path of the operations on one notebook. */
export const NOTEBOOK_ID_FIELD: FieldDoc = { description: "the notebook's id", example: NOTEBOOK_ID };

/** The `nbk_ids` body field of delete, schedule and unschedule (a body even where the method is GET or DELETE). */
export const NBK_IDS_FIELD: FieldDoc = { in: "body", description: "ids of the caller's notebooks", example: [NOTEBOOK_ID] };

export const NOTEBOOK_EXAMPLE = {
  notebook_id: NOTEBOOK_ID,
  notebook_name: "Bearing vibration.ipynb",
  status: "Scheduled",
  created_at: 1767225600000,
  updated_at: 1768458600000,
  created_by: "analyst@puneworks.example",
  updated_by: "analyst@puneworks.example",
  last_run: "2026-01-15T06:30:00.000Z",
  no_of_runs: 3,
  schedule: { period: "Monday", until: "2026-06-30 18:00", time: "06:30" },
  attributes: {
    path: "analyst@puneworks.example/Bearing vibration.ipynb",
    executed_path: "analyst@puneworks.example/Bearing vibration.executed.ipynb",
    last_run_status: "succeeded",
    last_run_error: null,
  },
};

export const CREATED_EXAMPLE = {
  notebook_id: NOTEBOOK_ID,
  username: "analyst@puneworks.example",
  notebook_name: "Untitled.ipynb",
  path: "analyst@puneworks.example/Untitled.ipynb",
};
