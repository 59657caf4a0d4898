/**
 * The run queue of one replica. Queued runs live in the `runs` table, so every replica sees
 * them: a replica with a free slot (NOTEBOOK_CONCURRENCY) claims the oldest queued run with
 * FOR UPDATE SKIP LOCKED, which hands each run to exactly one replica, and executes it on a
 * Jupyter kernel in a child process.
 */
import type { DataSource } from "typeorm";
import { NotebookFiles, unlinkIfPresent } from "./files";
import { executeNotebook, type Execution, type RunOutcome } from "./kernel";
import { MSG } from "./messages";
import { claimNextRun, recordRunOutcome, type ClaimedRun } from "./runs.repo";

interface Logger {
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
  logger: Logger;
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
    const executed = this.o.files.executed(run.owner, run.notebook_name);
    let outcome: RunOutcome;
    if (!python) outcome = { status: "failed", error: MSG.runtimeMissing };
    else {
      const execution = executeNotebook(python, this.o.files.source(run.owner, run.notebook_name), executed, this.o.timeoutS);
      slot.execution = execution;
      if (this.closed) execution.kill();
      outcome = await execution.done;
    }
    const recorded = await recordRunOutcome(this.o.db, run.run_id, outcome, Date.now());
    // The notebook was deleted while it ran: its executed copy must not be left behind.
    if (recorded === 0) await unlinkIfPresent(executed).catch(() => undefined);
  }

  /** Stops claiming, kills what runs here and waits until those runs are recorded as interrupted. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = [...this.running.values()];
    for (const slot of slots) slot.execution?.kill();
    await Promise.all(slots.map((slot) => slot.task));
  }
}
