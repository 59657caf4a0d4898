/**
 * Running notebooks now: a run of each is queued (the runs table is the queue, queue.ts executes
 * them) and the answer is at once; the run records tell how it went. Never unconfined.
 */
import { DomainError } from "../../lib/errors";
import { DETAIL, MSG } from "./messages";
import { notebookChange, unique, visibleOrFail } from "./notebooks";
import type { NotebooksPort } from "./port";
import { queueRuns } from "./runs.repo";

/** Op 64: `module` is the application module the run is made for; it is recorded on the run. */
export async function runNotebooks(port: NotebooksPort, params: { nbkIds?: string[]; module?: string }) {
  const ids = unique(params.nbkIds ?? []);
  if (ids.length === 0) throw new DomainError(400, MSG.runIdsRequired, "nbkIds");
  const module = params.module?.trim();
  if (!module) throw new DomainError(400, MSG.insufficientInputs, "module");
  if (!(await port.jupyterPython())) throw new DomainError(500, MSG.executionError(MSG.runtimeMissing));
  // Never unconfined (docs/security.md, Notebooks).
  if (!(await port.sandbox()).ok) throw new DomainError(500, MSG.executionError(MSG.sandboxMissing));
  const rows = await visibleOrFail(port, ids, (id) => new DomainError(400, MSG.executionError(DETAIL.notFound(id))));
  const changes = rows.map((r) => notebookChange("run", r, { module: [null, module] }));
  await port.audited(changes, (q) => queueRuns(q, ids, module, port.user.username, Date.now()));
  port.pumpRuns();
  return {};
}
