/**
 * notebooks: Jupyter notebooks of the analysts (operations 58-66). Files under NOTEBOOKS_DIR,
 * one folder per user; metadata, run records and schedules in this service's schema. Runs
 * execute on a real Jupyter kernel in a child process (kernel.ts), queued in the runs table
 * (queue.ts); schedules fire from a croner tick on every replica, once per slot (scheduler.ts).
 *
 * The actions, each with its route, params and docs: notebooks.actions.ts (create, remove,
 * rename, get, all, count), runs.actions.ts (run, schedule, unschedule), content.actions.ts
 * (content, saveContent: not in the spec).
 */
import { Cron } from "croner";
import type { Principal } from "../../lib/access";
import { AUDIT_STREAM } from "../../lib/audit";
import { config } from "../../lib/config";
import type { DomainError } from "../../lib/errors";
import { isId } from "../../lib/ids";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin } from "../../mixins/stream.mixin";
import { contentActions } from "./content.actions";
import type { NotebooksSchema } from "./context";
import { NotebookFiles } from "./files";
import { findJupyterPython } from "./kernel";
import { migrations } from "./migrations";
import { notebookActions } from "./notebooks.actions";
import { NOTEBOOKS_SCHEMAS } from "./openapi";
import { RunQueue } from "./queue";
import * as repo from "./repo";
import { runActions } from "./runs.actions";
import { schedulerTick } from "./scheduler";

/** A probe that found no Jupyter is retried after this long: someone may be installing it. */
const NEGATIVE_PROBE_MS = 60_000;

const NotebooksService: NotebooksSchema = {
  name: "notebooks",
  // The stream mixin first (the database opens before it): its outbox stages the audit entries of notebook changes (lib/audit.ts).
  mixins: [StreamMixin({ outbox: true, batched: [AUDIT_STREAM] }), DbMixin({ schema: "notebooks", migrations })],
  settings: { openapi: { schemas: NOTEBOOKS_SCHEMAS } },

  actions: {
    ...notebookActions,
    ...runActions,
    ...contentActions,
  },

  methods: {
    /** The interpreter with nbclient (NOTEBOOK_PYTHON, or probed once); null: no Jupyter on this machine. */
    jupyterPython() {
      const probe = this.pythonProbe;
      if (probe && Date.now() - probe.at < NEGATIVE_PROBE_MS) return probe.python;
      if (probe) {
        // A found interpreter is kept; only a failed probe is retried.
        const retry = probe.python.then((found) => found ?? findJupyterPython(config().notebookPython));
        this.pythonProbe = { at: Date.now(), python: retry };
        return retry;
      }
      const python = findJupyterPython(config().notebookPython);
      this.pythonProbe = { at: Date.now(), python };
      return python;
    },

    async tick() {
      const { claimed } = await schedulerTick(this.db, config().notebookRunTimeoutS);
      if (claimed > 0) this.logger.info(`${claimed} scheduled notebook run(s) queued`);
      // Also picks up runs another replica queued but had no free slot for.
      this.queue.pump();
    },

    /** The notebooks of the ids, all of them visible to the user; the first that is not answers with `fail`. */
    async visibleOrFail(user: Principal, ids: string[], fail: (id: string) => DomainError) {
      const valid = ids.filter(isId);
      const rows = await repo.findVisible(this.db, user, valid);
      const found = new Set(rows.map((r) => r.notebook_id));
      const missing = ids.find((id) => !found.has(id));
      if (missing !== undefined) throw fail(missing);
      return rows;
    },
  },

  created() {
    this.files = new NotebookFiles(config().notebooksDir);
  },

  async started() {
    const cfg = config();
    void this.jupyterPython().then((python) => {
      if (python) this.logger.info(`Notebooks run on the Jupyter kernel of ${python}`);
      else this.logger.warn("No Python with nbclient and ipykernel found (set NOTEBOOK_PYTHON): notebook runs will fail");
    });
    this.queue = new RunQueue({
      db: this.db,
      files: this.files,
      nodeId: this.broker.nodeID,
      concurrency: cfg.notebookConcurrency,
      timeoutS: cfg.notebookRunTimeoutS,
      python: () => this.jupyterPython(),
      logger: this.logger,
    });
    // Every 5 s on every replica; `protect` skips a tick while the previous one still runs.
    this.ticker = new Cron("*/5 * * * * *", { timezone: "UTC", protect: true }, async () => {
      await this.tick().catch((err) => this.logger.warn("notebook scheduler tick:", err));
    });
    this.queue.pump();
  },

  async stopped() {
    this.ticker?.stop();
    await this.queue?.close();
  },
};

export default NotebooksService;
