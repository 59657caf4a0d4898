/** The notebooks themselves: create, delete, rename, fetch, list and count (notebooks.ts). */
import type { Context } from "moleculer";
import type { RequestMeta } from "../../lib/contract";
import { PAGE_FIELDS, PAGE_PARAMS } from "../../lib/paging";
import { MAX_TEXT } from "../../lib/validation";
import { MSG } from "./messages";
import * as notebooks from "./notebooks";
import type { NotebooksActions } from "./notebooks.types";
import { CREATED_EXAMPLE, NBK_IDS_FIELD, NOTEBOOK_EXAMPLE, NOTEBOOK_ID_FIELD } from "./openapi";
import { idList, text } from "./params";

/** Unknown query keys on list and count operations. */
const listMessages = { unknown: MSG.excessInputs };

export const notebookActions: NotebooksActions = {
  /** A new empty notebook, named like Jupyter names them. */
  create: {
    http: {
      op: 58,
      routes: ["POST /_notebooks/notebooks"],
      group: "notebooks",
      summary: "Create a notebook",
      description: "An empty notebook in the caller's folder, named as Jupyter names new ones: Untitled.ipynb, then Untitled1.ipynb, … No body.",
      answer: { schema: "$NotebookCreated", example: CREATED_EXAMPLE },
      errors: [[400, MSG.createFileError("<detail>")], [400, MSG.ownershipError("<detail>")]],
    },
    params: {},
    handler(ctx: Context<unknown, RequestMeta>) {
      return notebooks.createNotebook(this.use(ctx));
    },
  },

  /** Deletes the caller's notebooks among the ids; none deleted is the spec's envelope 200. */
  remove: {
    http: {
      op: 59,
      routes: ["DELETE /_notebooks/notebooks"],
      group: "notebooks",
      summary: "Delete notebooks",
      description: "Deletes each listed notebook the caller may change, its file and executed copy included; ids of others are passed over.",
      fields: { nbk_ids: NBK_IDS_FIELD },
      answer: { text: MSG.success },
      errors: [
        [400, MSG.idsRequired],
        [400, MSG.deleteFileError("<detail>")],
        [400, MSG.deleteError("<detail>")],
        [200, MSG.noneDeleted],
      ],
    },
    params: {
      nbk_ids: idList,
      $$messages: { insufficient: MSG.idsRequired, invalid: MSG.idsRequired, unknown: MSG.invalidInput },
    },
    handler(ctx: Context<{ nbk_ids: string[] }, RequestMeta>) {
      return notebooks.removeNotebooks(this.use(ctx), ctx.params.nbk_ids);
    },
  },

  /** Body `{"notebook_name": "<new name>"}` (contract); `.ipynb` added when missing. */
  rename: {
    http: {
      op: 60,
      // Without the id, so that the spec's `Notebook ID is missing` is what it answers (not 405).
      routes: ["PUT /_notebooks/notebooks/:notebook_id", "PUT /_notebooks/notebooks"],
      group: "notebooks",
      summary: "Rename a notebook",
      description: "Renames the notebook's file; `.ipynb` is added when the new name lacks it.",
      fields: {
        notebook_id: NOTEBOOK_ID_FIELD,
        notebook_name: { required: true, description: "the new name, a plain file name; .ipynb is added when missing", example: "Bearing vibration" },
      },
      answer: { text: MSG.renamed },
      errors: [
        [400, MSG.idMissing],
        [400, MSG.notFound],
        [400, MSG.missingNewName],
        [400, MSG.invalidInput("notebook_name")],
        [404, MSG.renameFileError("<detail>")],
      ],
    },
    params: {
      notebook_id: { ...text, optional: true },
      notebook_name: { type: "string", max: MAX_TEXT, optional: true },
      $$messages: { invalid: MSG.invalidInput },
    },
    handler(ctx: Context<{ notebook_id?: string; notebook_name?: string | null }, RequestMeta>) {
      return notebooks.renameNotebook(this.use(ctx), ctx.params);
    },
  },

  get: {
    http: {
      op: 61,
      routes: ["GET /_notebooks/notebooks/:notebook_id"],
      group: "notebooks",
      summary: "Fetch a notebook",
      fields: { notebook_id: NOTEBOOK_ID_FIELD },
      answer: { schema: "$Notebook", example: NOTEBOOK_EXAMPLE },
      errors: [[400, MSG.invalidId], [400, MSG.retrievalError("<detail>")]],
    },
    params: {
      notebook_id: text,
      $$messages: { insufficient: MSG.invalidId, invalid: MSG.invalidId },
    },
    handler(ctx: Context<{ notebook_id: string }, RequestMeta>) {
      return notebooks.getNotebook(this.use(ctx), ctx.params.notebook_id);
    },
  },

  /** Every notebook the caller sees, oldest first. */
  all: {
    http: {
      op: 62,
      routes: ["GET /_notebooks/notebooks/_all"],
      group: "notebooks",
      summary: "List notebooks",
      description: "Every notebook the caller sees (its own; an admin's also those of its site's or plant's users), oldest first.",
      fields: PAGE_FIELDS,
      answer: { schema: "$Notebook[]", example: [NOTEBOOK_EXAMPLE] },
      errors: [[400, MSG.listError("<detail>")], [400, MSG.excessInputs]],
    },
    params: {
      ...PAGE_PARAMS,
      $$messages: listMessages,
    },
    handler(ctx: Context<{ limit?: number; offset?: number }, RequestMeta>) {
      return notebooks.listNotebooks(this.use(ctx), ctx.params);
    },
  },

  count: {
    http: {
      op: 63,
      routes: ["GET /_notebooks/notebooks/_count"],
      group: "notebooks",
      summary: "Count notebooks",
      description: "The notebooks the caller sees, in all and by status.",
      answer: { schema: "$NotebookCount", example: { "Total Notebooks": 12, "Not Scheduled": 9, Scheduled: 3 } },
      errors: [[400, MSG.countError("<detail>")], [400, MSG.excessInputs]],
    },
    params: { $$messages: listMessages },
    handler(ctx: Context<unknown, RequestMeta>) {
      return notebooks.countNotebooks(this.use(ctx));
    },
  },
};
