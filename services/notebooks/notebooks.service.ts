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
import type { Server } from "node:http";
import os from "node:os";
import { Cron } from "croner";
import type { Context } from "moleculer";
import type { Principal } from "../../lib/access";
import { AUDIT_STREAM } from "../../lib/audit";
import { config } from "../../lib/config";
import type { DomainError } from "../../lib/errors";
import { isId } from "../../lib/ids";
import { reachableFolder } from "../../lib/reachable";
import { authClient, type UserEvent } from "../auth/contract";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin } from "../../mixins/stream.mixin";
import { contentActions } from "./content.actions";
import type { NotebooksSchema } from "./context";
import { NotebookFiles } from "./files";
import { HELPERS, findJupyterPython } from "./kernel";
import { migrations } from "./migrations";
import { notebookActions } from "./notebooks.actions";
import { NOTEBOOKS_SCHEMAS } from "./openapi";
import { removeOwner, sweepOwners } from "./owners";
import { RunQueue, type SandboxState } from "./queue";
import * as repo from "./repo";
import { runActions } from "./runs.actions";
import { prepareRunsDir, probeSandbox } from "./sandbox";
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

    sandbox(): Promise<SandboxState> {
      const probe = this.sandboxProbe;
      if (probe && Date.now() - probe.at < NEGATIVE_PROBE_MS) return probe.state;
      const cfg = config();
      const previous = probe?.state;
      const state = (async (): Promise<SandboxState> => {
        const found = await previous;
        if (found?.ok) return found;
        const python = await this.jupyterPython();
        if (!python) return { ok: false, reason: "no Python with nbclient and ipykernel" };
        const { runsDir, helpers } = await this.runtime;
        const probed = await probeSandbox({ mode: cfg.notebookSandbox, python, helpers, runsDir, memoryMb: cfg.notebookMemoryMb });
        if (probed.ok) this.logger.info(`Notebook runs are sandboxed (${cfg.notebookSandbox}) with the Python of ${probed.executable}`);
        else this.logger.warn(`Notebook runs cannot be sandboxed here, so none will run (${probed.reason})`);
        return probed;
      })();
      this.sandboxProbe = { at: Date.now(), state };
      return state;
    },

    /** The api of this process where it runs here (its port may have been any free one), else PORT on this machine. */
    localApiUrl(): string {
      const server = (this.broker.getLocalService("api") as unknown as { server?: Server } | undefined)?.server;
      const address = server?.address();
      const port = address && typeof address === "object" ? address.port : config().port;
      return `http://127.0.0.1:${port}`;
    },

    async ownerSince(username: string): Promise<number | null> {
      try {
        return (await authClient.call(this.broker, "users.resolve", { username }))?.created_at ?? null;
      } catch (err) {
        this.logger.warn(`the record of ${username} could not be read from auth; its notebook keeps its name only:`, err);
        return null;
      }
    },

    async sweepOwners() {
      const removed = await sweepOwners({ db: this.db, files: this.files }, async (owner) => {
        const user = await authClient.call(this.broker, "users.resolve", { username: owner });
        return user && { created_at: user.created_at };
      });
      if (removed > 0) this.logger.info(`${removed} notebook(s) of removed users deleted`);
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

  events: {
    /** The user's record is gone: so are its notebooks, their files, runs and schedules (owners.ts). */
    async "auth.user.removed"(ctx: Context<UserEvent>) {
      const removed = await removeOwner({ db: this.db, files: this.files }, ctx.params.username, ctx.params.created_at ?? null);
      if (removed > 0) this.logger.info(`${removed} notebook(s) of the removed user ${ctx.params.username} deleted`);
    },
  },

  created() {
    const cfg = config();
    // Each run's uid must reach its owner's folder: a NOTEBOOKS_DIR under a private folder is kept where it can (lib/reachable.ts).
    this.files = new NotebookFiles(reachableFolder(cfg.notebooksDir, "ims-notebooks", (msg) => this.logger.info(msg)));
    this.runtime = prepareRunsDir(os.tmpdir(), cfg.notebooksDir, HELPERS);
    this.runtime.catch(() => undefined);
  },

  async started() {
    const cfg = config();
    void this.jupyterPython().then((python) => {
      if (python) this.logger.info(`Notebooks run on the Jupyter kernel of ${python}`);
      else this.logger.warn("No Python with nbclient and ipykernel found (set NOTEBOOK_PYTHON): notebook runs will fail");
    });
    void this.sandbox();
    const { runsDir, helpers } = await this.runtime;
    this.queue = new RunQueue({
      db: this.db,
      files: this.files,
      nodeId: this.broker.nodeID,
      concurrency: cfg.notebookConcurrency,
      timeoutS: cfg.notebookRunTimeoutS,
      python: () => this.jupyterPython(),
      sandbox: () => this.sandbox(),
      mode: cfg.notebookSandbox,
      memoryMb: cfg.notebookMemoryMb,
      apiUrl: () => cfg.notebookApiUrl ?? this.localApiUrl(),
      runsDir,
      helpers,
      tokens: {
        issue: (owner, ownerSince, ttlS) =>
          authClient.call(this.broker, "tokens.issueForRun", { username: owner, ...(ownerSince === null ? {} : { owner_since: ownerSince }), ttl_s: ttlS }),
        revoke: async (tokenId) => {
          await authClient.call(this.broker, "tokens.revokeForRun", { token_id: tokenId });
        },
      },
      logger: this.logger,
    });
    // Every 5 s on every replica; `protect` skips a tick while the previous one still runs.
    this.ticker = new Cron("*/5 * * * * *", { timezone: "UTC", protect: true }, async () => {
      await this.tick().catch((err) => this.logger.warn("notebook scheduler tick:", err));
    });
    this.queue.pump();
    // Users removed while this service was away (owners.ts): at start, then hourly; a failure waits for the next.
    const sweep = () => this.sweepOwners().catch((err: unknown) => this.logger.warn("notebook owners sweep:", err));
    this.sweepers = [new Cron(new Date(Date.now() + 10_000), sweep), new Cron("17 * * * *", { timezone: "UTC", protect: true }, sweep)];
  },

  async stopped() {
    for (const sweeper of this.sweepers ?? []) sweeper.stop();
    this.ticker?.stop();
    await this.queue?.close();
  },
};

export default NotebooksService;
