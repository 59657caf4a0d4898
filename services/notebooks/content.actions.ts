/** Not in the spec: a notebook's cells over HTTP, read (or its executed copy) and replaced (content.ts). */
import type { Context } from "moleculer";
import type { RequestMeta } from "../../lib/contract";
import * as content from "./content";
import type { CellInput } from "./files";
import { MSG } from "./messages";
import type { NotebooksActions } from "./notebooks.types";
import { NOTEBOOK_ID_FIELD } from "./openapi";
import { text } from "./params";

const CELLS_EXAMPLE = [
  { cell_type: "markdown", source: "# Bearing vibration, Pune Works" },
  { cell_type: "code", source: "import math\nprint(round(math.sqrt(2.1**2 + 1.4**2), 2))" },
];

export const contentActions: NotebooksActions = {
  /** The notebook's JSON, or with `executed=true` its executed copy. */
  content: {
    http: {
      routes: ["GET /_notebooks/notebooks/:notebook_id/_content"],
      group: "notebooks",
      summary: "A notebook's cells (the executed copy with executed=true)",
      description: "The notebook file as Jupyter writes it (nbformat 4 JSON); with executed=true the copy its last run wrote, outputs included.",
      fields: {
        notebook_id: NOTEBOOK_ID_FIELD,
        executed: { description: "the executed copy of the last run instead of the notebook itself", example: true },
      },
      answer: {
        schema: "object",
        example: { cells: CELLS_EXAMPLE.map((c, i) => ({ ...c, id: `cell-${i}`, metadata: {} })), metadata: {}, nbformat: 4, nbformat_minor: 5 },
      },
      errors: [[400, MSG.invalidId], [400, MSG.retrievalError("<detail>")]],
    },
    params: {
      notebook_id: text,
      executed: { type: "boolean", convert: true, optional: true },
      $$messages: { insufficient: MSG.invalidId, invalid: MSG.invalidInput },
    },
    handler(ctx: Context<{ notebook_id: string; executed?: boolean }, RequestMeta>) {
      return content.readContent(this.use(ctx), ctx.params);
    },
  },

  /** Replaces the notebook's cells (nbformat 4), so a notebook can be written over HTTP. */
  saveContent: {
    http: {
      routes: ["PUT /_notebooks/notebooks/:notebook_id/_content"],
      group: "notebooks",
      summary: "Replace a notebook's cells",
      description: "Writes the notebook file anew from the cells (nbformat 4); cell ids and metadata are filled in as Jupyter would.",
      fields: {
        notebook_id: NOTEBOOK_ID_FIELD,
        cells: { description: "the notebook's cells, in order: cell_type code, markdown or raw, and source", example: CELLS_EXAMPLE },
        metadata: { description: "the notebook's metadata; Python 3 kernel metadata when left out" },
        nbformat: { description: "the nbformat major version, when given: only 4", example: 4 },
        nbformat_minor: { description: "accepted, not kept: the file is written as nbformat 4.5", example: 5 },
      },
      answer: { text: MSG.saved },
      errors: [[400, MSG.notFound], [400, MSG.createFileError("<detail>")]],
    },
    params: {
      notebook_id: text,
      cells: {
        type: "array",
        max: 10_000,
        items: {
          type: "object",
          props: {
            cell_type: { type: "enum", values: ["code", "markdown", "raw"] },
            source: [{ type: "string" }, { type: "array", items: "string" }],
            id: { type: "string", pattern: /^[A-Za-z0-9_-]{1,64}$/, optional: true },
            metadata: { type: "object", optional: true },
            outputs: { type: "array", optional: true },
            execution_count: { type: "number", integer: true, optional: true, nullable: true },
            attachments: { type: "object", optional: true },
          },
        },
      },
      metadata: { type: "object", optional: true },
      nbformat: { type: "equal", value: 4, optional: true },
      nbformat_minor: { type: "number", integer: true, min: 0, optional: true },
      $$messages: { invalid: MSG.invalidInput },
    },
    handler(ctx: Context<{ notebook_id: string; cells: CellInput[]; metadata?: Record<string, unknown> }, RequestMeta>) {
      return content.saveContent(this.use(ctx), ctx.params);
    },
  },
};
