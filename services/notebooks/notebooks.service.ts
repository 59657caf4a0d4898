/**
 * notebooks: Jupyter notebooks of the analysts (operations 58-66). Files under NOTEBOOKS_DIR,
 * one folder per user; metadata, run records and schedules in this service's schema. Runs
 * execute on a real Jupyter kernel in a child process (kernel.ts), queued in the runs table
 * (queue.ts); schedules fire from a croner tick on every replica, once per slot (scheduler.ts).
 */
import { Cron } from "croner";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { Principal } from "../../lib/access";
import { config } from "../../lib/config";
import { DomainError, isUniqueViolation } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { MAX_TEXT } from "../../lib/validation";
import { DbMixin } from "../../mixins/db.mixin";
import { fsDetail, NotebookFiles, notebookOf, type CellInput } from "./files";
import { findJupyterPython } from "./kernel";
import { DETAIL, MSG } from "./messages";
import { migrations } from "./migrations";
import { nameProblem, relativePath, untitledName, withExtension } from "./names";
import { RunQueue } from "./queue";
import * as repo from "./repo";
import { DEFAULT_TIME, parsePeriod, parseTime, parseUntil } from "./schedule";
import { schedulerTick } from "./scheduler";
import { PAGE_PARAMS, setTotal } from "../../lib/paging";

type Meta = { user: Principal; $responseHeaders?: Record<string, string> };

interface NotebooksLocals {
  db: DataSource;
  files: NotebookFiles;
  queue: RunQueue;
  ticker: Cron | undefined;
  pythonProbe: { at: number; python: Promise<string | null> } | undefined;
}

interface NotebooksMethods {
  jupyterPython(): Promise<string | null>;
  tick(): Promise<void>;
  visibleOrFail(user: Principal, ids: string[], fail: (id: string) => DomainError): Promise<string[]>;
}

const text = { type: "string", max: MAX_TEXT } as const;
const idList = { type: "array", items: text, max: 1000 } as const;
/** Unknown query keys on list and count operations (contract: HTTP). */
const listMessages = { unknown: MSG.excessInputs };
const invalidField = (field: string) => `Invalid input: ${field}`;
/** A probe that found no Jupyter is retried after this long: someone may be installing it. */
const NEGATIVE_PROBE_MS = 60_000;

const unique = (ids: string[]): string[] => [...new Set(ids)];

const NotebooksService: ServiceSchema<ServiceSettingSchema, NotebooksMethods, NotebooksLocals> = {
  name: "notebooks",
  mixins: [DbMixin({ schema: "notebooks", migrations })],

  actions: {
    /** Op 58: a new empty notebook, named like Jupyter names them. */
    create: {
      params: {},
      async handler(ctx: Context<unknown, Meta>) {
        const user = ctx.meta.user;
        // Names taken on disk or in the table are skipped; the unique index and the exclusive
        // create decide between two creates racing for the same name.
        for (let attempt = 0; attempt < 20; attempt++) {
          let name: string;
          try {
            const taken = new Set([...(await this.files.namesOnDisk(user.username)), ...(await repo.namesOf(this.db, user.username))]);
            name = untitledName(taken);
            await this.files.createEmpty(user.username, name);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
            throw new DomainError(400, MSG.createFileError(fsDetail(err)));
          }
          const notebook_id = newId();
          try {
            await repo.insertNotebook(this.db, {
              notebook_id,
              owner: user.username,
              site_id: user.site_id,
              plant_id: user.plant_id,
              notebook_name: name,
              now: Date.now(),
            });
          } catch (err) {
            await this.files.remove(user.username, name).catch(() => undefined);
            if (isUniqueViolation(err)) continue;
            throw err;
          }
          return { notebook_id, username: user.username, notebook_name: name, path: relativePath(user.username, name) };
        }
        throw new DomainError(400, MSG.createFileError("No free Untitled name"));
      },
    },

    /** Op 59: deletes the caller's notebooks among the ids; none deleted is the spec's envelope 200. */
    remove: {
      params: {
        nbk_ids: idList,
        $$messages: { insufficient: MSG.idsRequired, invalid: MSG.idsRequired, unknown: invalidField },
      },
      async handler(ctx: Context<{ nbk_ids: string[] }, Meta>) {
        const ids = unique(ctx.params.nbk_ids).filter(isId);
        if (ctx.params.nbk_ids.length === 0) throw new DomainError(400, MSG.idsRequired);
        let deleted = 0;
        for (const row of await repo.findVisible(this.db, ctx.meta.user, ids)) {
          try {
            await this.files.remove(row.owner, row.notebook_name);
          } catch (err) {
            throw new DomainError(400, MSG.deleteFileError(fsDetail(err)));
          }
          try {
            const [, affected] = (await this.db.query(`DELETE FROM notebooks WHERE notebook_id = $1`, [row.notebook_id])) as [
              unknown[],
              number,
            ];
            deleted += affected;
          } catch (err) {
            this.logger.error("notebook deletion:", err);
            throw new DomainError(400, MSG.deleteError("The notebook record could not be deleted"));
          }
        }
        if (deleted === 0) throw new DomainError(200, MSG.noneDeleted);
        return MSG.success;
      },
    },

    /** Op 60: body `{"notebook_name": "<new name>"}` (contract); `.ipynb` added when missing. */
    rename: {
      params: {
        notebook_id: { ...text, optional: true },
        notebook_name: { type: "string", max: MAX_TEXT, optional: true },
        $$messages: { invalid: invalidField },
      },
      async handler(ctx: Context<{ notebook_id?: string; notebook_name?: string | null }, Meta>) {
        const { notebook_id, notebook_name } = ctx.params;
        if (!notebook_id) throw new DomainError(400, MSG.idMissing);
        const row = isId(notebook_id) ? await repo.getVisible(this.db, ctx.meta.user, notebook_id) : undefined;
        if (!row) throw new DomainError(400, MSG.notFound);
        // null reads as left out (README, Decisions): the validator lets it through an optional field.
        if (notebook_name === undefined || notebook_name === null || notebook_name.trim() === "") throw new DomainError(400, MSG.missingNewName);
        const name = withExtension(notebook_name);
        if (nameProblem(name)) throw new DomainError(400, invalidField("notebook_name"));
        // One rename of a notebook at a time, on any replica: its row is locked while the row's
        // name and the file change together, and a refused rename (taken name, file error) rolls
        // the row back untouched. Read without the lock, two renames undid each other's.
        await this.db.transaction(async (tx) => {
          const [current] = (await tx.query(`SELECT notebook_name, owner FROM notebooks WHERE notebook_id = $1 FOR UPDATE`, [
            row.notebook_id,
          ])) as { notebook_name: string; owner: string }[];
          if (!current) throw new DomainError(400, MSG.notFound);
          if (current.notebook_name === name) return;
          try {
            await tx.query(`UPDATE notebooks SET notebook_name = $2, updated_at = $3, updated_by = $4 WHERE notebook_id = $1`, [
              row.notebook_id,
              name,
              Date.now(),
              ctx.meta.user.username,
            ]);
          } catch (err) {
            if (isUniqueViolation(err)) throw new DomainError(404, MSG.renameFileError(DETAIL.nameExists(name)));
            throw err;
          }
          try {
            await this.files.rename(current.owner, current.notebook_name, name);
          } catch (err) {
            const code = (err as NodeJS.ErrnoException).code;
            throw new DomainError(404, MSG.renameFileError(code === "EEXIST" ? DETAIL.nameExists(name) : fsDetail(err)));
          }
        });
        return MSG.renamed;
      },
    },

    /** Op 61. */
    get: {
      params: {
        notebook_id: text,
        $$messages: { insufficient: MSG.invalidId, invalid: MSG.invalidId },
      },
      async handler(ctx: Context<{ notebook_id: string }, Meta>) {
        const row = isId(ctx.params.notebook_id) ? await repo.getVisible(this.db, ctx.meta.user, ctx.params.notebook_id) : undefined;
        if (!row) throw new DomainError(400, MSG.invalidId);
        return repo.notebookView(row);
      },
    },

    /** Op 62: every notebook the caller sees, oldest first. */
    all: {
      params: {
        ...PAGE_PARAMS,
        $$messages: listMessages,
      },
      async handler(ctx: Context<{ limit?: number; offset?: number }, Meta>) {
        const { rows, total } = await repo.listVisible(this.db, ctx.meta.user, ctx.params);
        setTotal(ctx, total);
        const now = Date.now();
        return rows.map((row) => repo.notebookView(row, now));
      },
    },

    /** Op 63. */
    count: {
      params: { $$messages: listMessages },
      async handler(ctx: Context<unknown, Meta>) {
        const { total, scheduled } = await repo.countVisible(this.db, ctx.meta.user);
        return { "Total Notebooks": total, "Not Scheduled": total - scheduled, Scheduled: scheduled };
      },
    },

    /**
     * Op 64: queues a run of each notebook and answers at once; the run records (and the
     * notebook's no_of_runs, last_run, attributes.last_run_status) tell how it went. `module` is
     * the application module the run is made for; it is recorded on the run.
     */
    run: {
      params: {
        nbkIds: { ...idList, optional: true },
        module: { ...text, optional: true },
        $$messages: { invalid: invalidField },
      },
      async handler(ctx: Context<{ nbkIds?: string[]; module?: string }, Meta>) {
        const ids = unique(ctx.params.nbkIds ?? []);
        if (ids.length === 0) throw new DomainError(400, MSG.runIdsRequired);
        const module = ctx.params.module?.trim();
        if (!module) throw new DomainError(400, "Insufficient inputs");
        if (!(await this.jupyterPython())) throw new DomainError(500, MSG.executionError(MSG.runtimeMissing));
        await this.visibleOrFail(ctx.meta.user, ids, (id) => new DomainError(400, MSG.executionError(DETAIL.notFound(id))));
        await repo.queueRuns(this.db, ids, module, ctx.meta.user.username, Date.now());
        this.queue.pump();
        return {};
      },
    },

    /** Op 65: period a day of the week (none: every day), time HH:MM UTC (default 00:00), until. */
    schedule: {
      params: {
        nbk_ids: { ...idList, min: 1 },
        until: text,
        period: { ...text, optional: true, nullable: true },
        time: { ...text, optional: true, nullable: true },
        $$messages: { invalid: (field: string) => MSG.requestError(invalidField(field)) },
      },
      async handler(ctx: Context<{ nbk_ids: string[]; until: string; period?: string | null; time?: string | null }, Meta>) {
        const fail = (detail: string) => new DomainError(400, MSG.requestError(detail));
        const untilAt = parseUntil(ctx.params.until);
        if (untilAt === undefined) throw fail(DETAIL.badUntil);
        const time = ctx.params.time ?? DEFAULT_TIME;
        if (!parseTime(time)) throw fail(DETAIL.badTime);
        const period = parsePeriod(ctx.params.period);
        if (period === undefined) throw fail(DETAIL.badPeriod);
        const ids = unique(ctx.params.nbk_ids);
        await this.visibleOrFail(ctx.meta.user, ids, (id) => fail(DETAIL.notFound(id)));
        const now = Date.now();
        // An `until` already past leaves nothing to run: the notebooks are Not Scheduled.
        if (untilAt < now) await repo.clearSchedule(this.db, ids, ctx.meta.user.username, now);
        else await repo.setSchedule(this.db, ids, { period, time: time.trim(), until: ctx.params.until.trim() }, untilAt, ctx.meta.user.username, now);
        return MSG.success;
      },
    },

    /** Op 66. */
    unschedule: {
      params: {
        nbk_ids: { ...idList, min: 1 },
        $$messages: { invalid: (field: string) => MSG.requestError(invalidField(field)) },
      },
      async handler(ctx: Context<{ nbk_ids: string[] }, Meta>) {
        const ids = unique(ctx.params.nbk_ids);
        // The spec gives unschedule one error, at 500.
        await this.visibleOrFail(ctx.meta.user, ids, (id) => new DomainError(500, MSG.requestError(DETAIL.notFound(id))));
        await repo.clearSchedule(this.db, ids, ctx.meta.user.username, Date.now());
        return MSG.success;
      },
    },

    /** Not in the spec: the notebook's JSON, or with `executed=true` its executed copy. */
    content: {
      params: {
        notebook_id: text,
        executed: { type: "boolean", convert: true, optional: true },
        $$messages: { insufficient: MSG.invalidId, invalid: invalidField },
      },
      async handler(ctx: Context<{ notebook_id: string; executed?: boolean }, Meta>) {
        const row = isId(ctx.params.notebook_id) ? await repo.getVisible(this.db, ctx.meta.user, ctx.params.notebook_id) : undefined;
        if (!row) throw new DomainError(400, MSG.invalidId);
        const file = ctx.params.executed ? this.files.executed(row.owner, row.notebook_name) : this.files.source(row.owner, row.notebook_name);
        try {
          return await this.files.read(file);
        } catch (err) {
          const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
          throw new DomainError(
            400,
            MSG.retrievalError(missing && ctx.params.executed ? "The notebook has no executed copy yet" : fsDetail(err)),
          );
        }
      },
    },

    /** Not in the spec: replaces the notebook's cells (nbformat 4), so a notebook can be written over HTTP. */
    saveContent: {
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
        $$messages: { invalid: invalidField },
      },
      async handler(ctx: Context<{ notebook_id: string; cells: CellInput[]; metadata?: Record<string, unknown> }, Meta>) {
        const row = isId(ctx.params.notebook_id) ? await repo.getVisible(this.db, ctx.meta.user, ctx.params.notebook_id) : undefined;
        if (!row) throw new DomainError(400, MSG.notFound);
        try {
          await this.files.write(row.owner, row.notebook_name, notebookOf(ctx.params.cells, ctx.params.metadata));
        } catch (err) {
          throw new DomainError(400, MSG.createFileError(fsDetail(err)));
        }
        await repo.touch(this.db, [row.notebook_id], ctx.meta.user.username, Date.now());
        return MSG.saved;
      },
    },
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

    /** The ids, all of them visible to the user; the first that is not answers with `fail`. */
    async visibleOrFail(user: Principal, ids: string[], fail: (id: string) => DomainError) {
      const valid = ids.filter(isId);
      const found = new Set((await repo.findVisible(this.db, user, valid)).map((r) => r.notebook_id));
      const missing = ids.find((id) => !found.has(id));
      if (missing !== undefined) throw fail(missing);
      return ids;
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
