/** Not in the spec: a notebook's cells, read (or its executed copy) and replaced. */
import { DomainError } from "../../lib/errors";
import { fsDetail, notebookOf, type CellInput } from "./files";
import { MSG } from "./messages";
import { notebookChange, visibleNotebook } from "./notebooks";
import * as notebooks from "./notebooks.repo";
import type { NotebooksPort } from "./port";

/** The notebook's JSON, or with `executed` its executed copy. */
export async function readContent(port: NotebooksPort, params: { notebook_id: string; executed?: boolean }): Promise<unknown> {
  const row = await visibleNotebook(port, params.notebook_id);
  if (!row) throw new DomainError(400, MSG.invalidId);
  const file = params.executed ? port.files.executed(row.owner, row.notebook_name) : port.files.source(row.owner, row.notebook_name);
  try {
    return await port.files.read(file);
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
    throw new DomainError(400, MSG.retrievalError(missing && params.executed ? "The notebook has no executed copy yet" : fsDetail(err)));
  }
}

/** Replaces the notebook's cells (nbformat 4), so a notebook can be written over HTTP. */
export async function saveContent(port: NotebooksPort, params: { notebook_id: string; cells: CellInput[]; metadata?: Record<string, unknown> }) {
  const row = await visibleNotebook(port, params.notebook_id);
  if (!row) throw new DomainError(400, MSG.notFound);
  try {
    await port.files.write(row.owner, row.notebook_name, notebookOf(params.cells, params.metadata));
  } catch (err) {
    throw new DomainError(400, MSG.createFileError(fsDetail(err)));
  }
  // The cells are the file's: the entry says that they were replaced, and how many there are now.
  const change = notebookChange("update", row, { cells: [null, params.cells.length] });
  await port.audited(change, (q) => notebooks.touch(q, [row.notebook_id], port.user.username, Date.now()));
  return MSG.saved;
}
