/**
 * notebooks: Jupyter notebooks of the analysts (operations 58-66). Files under NOTEBOOKS_DIR, one
 * folder per user (files.ts); metadata, runs and schedules in this service's schema. Runs execute
 * on a Jupyter kernel in their sandbox (kernel.ts, sandbox.ts), queued in the runs table
 * (queue.ts); schedules fire from a croner tick on every replica, once per slot (schedules.ts).
 * Each `<resource>.actions.ts` declares its operations; the module of its name holds the rules.
 */
import os from "node:os";
import { Cron } from "croner";
import type { Context } from "moleculer";
import type { Principal } from "../../lib/access";
import { AUDIT_STREAM } from "../../lib/audit";
import { config } from "../../lib/config";
import type { Caller, RequestMeta } from "../../lib/contract";
import { DomainError } from "../../lib/errors";
import { reachableFolder } from "../../lib/reachable";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin } from "../../mixins/stream.mixin";
import { authClient, type UserEvent } from "../auth/contract";
import { contentActions } from "./content.actions";
import { NotebookFiles } from "./files";
import { HELPERS } from "./kernel";
import { MSG } from "./messages";
import { migrations } from "./migrations";
import { notebookActions } from "./notebooks.actions";
import type { NotebooksSchema, NotebooksThis } from "./notebooks.types";
import { NOTEBOOKS_SCHEMAS } from "./openapi";
import * as owners from "./owners";
import { notebooksPort } from "./port";
import { RunQueue } from "./queue";
import { runActions } from "./runs.actions";
import { localApiUrl, RunRuntime } from "./runtime";
import { prepareRunsDir } from "./sandbox";
import * as schedules from "./schedules";

/** Events, ticks and sweeps act as the service itself: they are not reachable over HTTP. */
const SYSTEM: Principal = { username: "notebooks", user_type: "saas-admin", site_id: null, plant_id: null, modules: [] };

/** The port of a caller, built alike for `use` and `system`. */
function portOf(service: NotebooksThis, user: Principal, source: Partial<Pick<Context<unknown, Partial<RequestMeta>>, "meta" | "requestID">>) {
  return notebooksPort({
    db: service.db,
    user,
    files: service.files,
    source: { requestID: source.requestID, meta: source.meta ?? {} },
    broker: service.broker,
    streams: service.streams,
    jupyterPython: () => service.runtime.python(),
    sandbox: () => service.runtime.sandbox(),
    pumpRuns: () => service.queue.pump(),
    runTimeoutS: config().notebookRunTimeoutS,
    logger: service.logger,
  });
}

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

  events: {
    "auth.user.removed"(ctx: Context<UserEvent>) {
      return owners.userRemoved(this.system(ctx), ctx.params);
    },
  },

  methods: {
    use(ctx: Context<unknown, Partial<RequestMeta>>) {
      const user = ctx.meta.user;
      if (!user) throw new DomainError(401, MSG.invalidCredentials);
      return portOf(this, user, ctx);
    },

    system(caller: Caller & Partial<Pick<Context, "meta" | "requestID">>) {
      return portOf(this, SYSTEM, caller);
    },
  },

  created() {
    const cfg = config();
    // Each run's uid must reach its owner's folder: a NOTEBOOKS_DIR under a private folder is kept where it can (lib/reachable.ts).
    this.files = new NotebookFiles(reachableFolder(cfg.notebooksDir, "ims-notebooks", (msg) => this.logger.info(msg)));
    this.folders = prepareRunsDir(os.tmpdir(), cfg.notebooksDir, HELPERS);
    this.folders.catch(() => undefined);
    this.runtime = new RunRuntime(this.folders, this.logger);
  },

  async started() {
    const cfg = config();
    void this.runtime.python().then((python) => {
      if (python) this.logger.info(`Notebooks run on the Jupyter kernel of ${python}`);
      else this.logger.warn("No Python with nbclient and ipykernel found (set NOTEBOOK_PYTHON): notebook runs will fail");
    });
    void this.runtime.sandbox();
    const { runsDir, helpers } = await this.folders;
    this.queue = new RunQueue({
      db: this.db,
      files: this.files,
      nodeId: this.broker.nodeID,
      concurrency: cfg.notebookConcurrency,
      timeoutS: cfg.notebookRunTimeoutS,
      python: () => this.runtime.python(),
      sandbox: () => this.runtime.sandbox(),
      mode: cfg.notebookSandbox,
      memoryMb: cfg.notebookMemoryMb,
      apiUrl: () => cfg.notebookApiUrl ?? localApiUrl(this.broker),
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
      await schedules.tick(this.system(this.broker)).catch((err) => this.logger.warn("notebook scheduler tick:", err));
    });
    this.queue.pump();
    // Users removed while this service was away (owners.ts): at start, then hourly; a failure waits for the next.
    const sweep = async () => {
      await owners.sweepOwners(this.system(this.broker)).catch((err: unknown) => this.logger.warn("notebook owners sweep:", err));
    };
    this.sweepers = [new Cron(new Date(Date.now() + 10_000), sweep), new Cron("17 * * * *", { timezone: "UTC", protect: true }, sweep)];
  },

  async stopped() {
    for (const sweeper of this.sweepers ?? []) sweeper.stop();
    this.ticker?.stop();
    await this.queue?.close();
  },
};

export default NotebooksService;
