/**
 * The run queue of one replica. Queued runs live in the `runs` table, so every replica sees
 * them: a replica with a free slot (NOTEBOOK_CONCURRENCY) claims the oldest queued run with
 * FOR UPDATE SKIP LOCKED, which hands each run to exactly one replica, and executes it on a
 * Jupyter kernel in its sandbox (sandbox.ts), reading the API through its owner's door
 * (api-door.ts) under its memory limit (memory.ts). Never unconfined: where the machine cannot
 * sandbox, the run fails with that reason.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { DataSource } from "typeorm";
import { openApiDoor } from "./api-door";
import { NotebookFiles, unlinkIfPresent } from "./files";
import { executeNotebook, type Execution, type RunOutcome } from "./kernel";
import { runMemory } from "./memory";
import { DETAIL, MSG } from "./messages";
import { executedName } from "./names";
import { claimNextRun, recordRunOutcome, type ClaimedRun } from "./runs.repo";
import { DOOR_SOCKET, canSwitchUser, handFolderTo, launchOf, ownerUid, type SandboxMode } from "./sandbox";

/** What the queue logs through (the service's logger). */
export interface QueueLogger {
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
}

export interface RunQueueOptions {
  db: DataSource;
  files: NotebookFiles;
  nodeId: string;
  concurrency: number;
  timeoutS: number;
  /** The interpreter with nbclient, or null when the machine has none. */
  python: () => Promise<string | null>;
  /** The sandbox as probed on this machine: where its runtime is, or why it is not available. */
  sandbox: () => Promise<SandboxState>;
  mode: SandboxMode;
  memoryMb: number;
  /** The api a run's door forwards to (asked per run: the api of this process listens only once started). */
  apiUrl: () => string;
  /** The folder of the runs' own folders (door sockets), reachable by the runs' uids. */
  runsDir: string;
  /** The runner and `ims`, copied where the runs' uids reach them. */
  helpers: string;
  tokens: RunTokens;
  logger: QueueLogger;
}

/** What the probe found: the interpreter's real path and its folders outside /usr, or why there is no sandbox. */
export type SandboxState = { ok: true; executable: string; runtime: string[] } | { ok: false; reason: string };

/** A read token of the notebook's owner for one run (auth's tokens.issueForRun), and its end. */
export interface RunTokens {
  issue(owner: string, ownerSince: number | null, ttlS: number): Promise<{ token_id: string; token: string } | null>;
  revoke(tokenId: string): Promise<void>;
}

export class RunQueue {
  /** Runs executing here: the task ends once the run's record is written. */
  private readonly running = new Map<string, { execution?: Execution; task: Promise<void> }>();
  private claiming = false;
  private again = false;
  private closed = false;

  constructor(private readonly o: RunQueueOptions) {}

  /** Claims queued runs while this replica has free slots. Safe to call any time, from anywhere. */
  pump(): void {
    if (this.closed) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = true;
    void this.claimWhileFree()
      .catch((err) => this.o.logger.warn("notebook run queue:", err))
      .finally(() => {
        this.claiming = false;
        if (this.again) {
          this.again = false;
          this.pump();
        }
      });
  }

  private async claimWhileFree(): Promise<void> {
    while (!this.closed && this.running.size < this.o.concurrency) {
      const claimed = await claimNextRun(this.o.db, this.o.nodeId, Date.now());
      if (!claimed) return;
      this.start(claimed);
    }
  }

  private start(run: ClaimedRun): void {
    const slot: { execution?: Execution; task: Promise<void> } = { task: Promise.resolve() };
    this.running.set(run.run_id, slot);
    slot.task = this.execute(run, slot)
      .catch((err) => this.o.logger.warn(`notebook run ${run.run_id}:`, err))
      .finally(() => {
        this.running.delete(run.run_id);
        this.pump();
      });
  }

  private async execute(run: ClaimedRun, slot: { execution?: Execution }): Promise<void> {
    const python = await this.o.python();
    const sandbox = python ? await this.o.sandbox() : undefined;
    const executed = this.o.files.executed(run.owner, run.notebook_name);
    let outcome: RunOutcome;
    if (!python) outcome = { status: "failed", error: MSG.runtimeMissing };
    else if (!sandbox?.ok) outcome = { status: "failed", error: MSG.sandboxMissing };
    else outcome = await this.sandboxed(run, sandbox, slot);
    const recorded = await recordRunOutcome(this.o.db, run.run_id, outcome, Date.now());
    // The notebook was deleted while it ran: its executed copy must not be left behind.
    if (recorded === 0) await unlinkIfPresent(executed).catch(() => undefined);
  }

  /** One run in its sandbox: the owner's folder, the owner's door with a token made for the run, the memory limit. */
  private async sandboxed(run: ClaimedRun, sandbox: SandboxState & { ok: true }, slot: { execution?: Execution }): Promise<RunOutcome> {
    const uid = canSwitchUser() ? ownerUid(run.owner) : null;
    const runDir = path.join(this.o.runsDir, run.run_id);
    await fs.mkdir(runDir, { mode: 0o700 });
    const cleanups: (() => Promise<void>)[] = [() => fs.rm(runDir, { recursive: true, force: true })];
    try {
      if (uid !== null) await fs.chown(runDir, uid, uid);
      // The real path: bubblewrap opens it as the run's uid, which may not pass a private folder's link.
      const folder = await fs.realpath(await this.o.files.ensureFolder(run.owner));
      await handFolderTo(folder, uid);
      const token = await this.o.tokens.issue(run.owner, run.owner_since === null ? null : Number(run.owner_since), this.o.timeoutS + 60);
      if (!token) return { status: "failed", error: DETAIL.ownerGone };
      cleanups.push(() => this.o.tokens.revoke(token.token_id));
      const door = await openApiDoor({ socket: path.join(runDir, DOOR_SOCKET), apiUrl: this.o.apiUrl(), token: token.token, uid });
      cleanups.push(() => door.close());
      const memory = runMemory(run.run_id, this.o.memoryMb);
      cleanups.push(() => memory.release());
      const launch = launchOf({
        mode: this.o.mode,
        python: sandbox.executable,
        runtime: sandbox.runtime,
        helpers: this.o.helpers,
        folder,
        runDir,
        uid,
        memory: memory.limit,
        command: (at) => [
          sandbox.executable,
          path.posix.join(at.helpers, "runner.py"),
          path.posix.join(at.folder, run.notebook_name),
          path.posix.join(at.folder, executedName(run.notebook_name)),
          String(this.o.timeoutS),
        ],
      });
      const execution = executeNotebook(launch, this.o.timeoutS, { timeLimit: DETAIL.timeLimit(this.o.timeoutS), interrupted: DETAIL.interrupted });
      slot.execution = execution;
      if (this.closed) execution.kill();
      const outcome = await execution.done;
      // What is left of the run (a process that left the runner's session, where no pid namespace ended it) goes now.
      memory.killAll();
      // A process the limit killed fails the run, even one the notebook's code went on without.
      const outOfMemory =
        memory.exceeded() || (outcome.status === "failed" && "rlimitBytes" in memory.limit && /^(MemoryError|DeadKernelError)\b/.test(outcome.error ?? ""));
      return outOfMemory ? { status: "failed", error: DETAIL.memoryLimit(this.o.memoryMb) } : outcome;
    } finally {
      for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => this.o.logger.warn(`notebook run ${run.run_id} cleanup:`, err));
    }
  }

  /** Stops claiming, kills what runs here and waits until those runs are recorded as interrupted. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = [...this.running.values()];
    for (const slot of slots) slot.execution?.kill();
    await Promise.all(slots.map((slot) => slot.task));
  }
}
