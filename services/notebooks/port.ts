/**
 * What the notebooks' domain modules work with (docs/architecture.md, "The service shape"): the
 * database, the caller, the notebook files, audited writes, the Jupyter runtime and its sandbox
 * as probed here, the run queue, auth's record of a user, and a log. The schema builds one per
 * call: `use(ctx)` for an HTTP operation, `system(caller)` for events, ticks and sweeps.
 */
import type { DataSource, EntityManager } from "typeorm";
import type { Principal } from "../../lib/access";
import { auditedWrite, stageAudit, type AuditChange, type AuditSource, type AuditStager } from "../../lib/audit";
import type { Caller } from "../../lib/contract";
import { setTotal } from "../../lib/paging";
import { authClient } from "../auth/contract";
import type { NotebookFiles } from "./files";
import type { Queryable } from "./notebooks.repo";
import type { QueueLogger, SandboxState } from "./queue";

/** A write's audit entries: known beforehand, or made of what the write answered (null: none). */
export type AuditedChanges<T> = AuditChange | AuditChange[] | ((result: T) => AuditChange | AuditChange[] | null);

export interface NotebooksLogger extends QueueLogger {
  error(...args: unknown[]): void;
}

export interface NotebooksPort {
  db: DataSource;
  /** The caller; the service itself for events, ticks and sweeps. */
  user: Principal;
  files: NotebookFiles;
  /** A write with its audit entries, committed together (lib/audit.ts). */
  audited<T>(changes: AuditedChanges<T>, write: (q: Queryable) => Promise<T>): Promise<T>;
  /** Stages audit entries in a transaction of the domain's own. */
  stageAudit(tx: EntityManager, changes: AuditChange | AuditChange[]): Promise<void>;
  /** Puts a list's total in the X-Total-Count header. */
  setTotal(total: number): void;
  /** The interpreter with nbclient; null: no Jupyter on this machine. */
  jupyterPython(): Promise<string | null>;
  /** Whether runs can be sandboxed here. */
  sandbox(): Promise<SandboxState>;
  /** Has this replica claim queued runs while it has free slots. */
  pumpRuns(): void;
  /** A run's time limit, seconds. */
  runTimeoutS: number;
  /** auth's record of a user now: its creation time, or null when there is no such user. */
  userRecord(username: string): Promise<{ created_at: number } | null>;
  logger: NotebooksLogger;
}

/** What the schema hands over to build a port. */
export interface NotebooksPortSource extends Omit<NotebooksPort, "audited" | "stageAudit" | "setTotal" | "userRecord"> {
  /** The request (or event) the changes are made in: its id and the gateway's meta. */
  source: AuditSource;
  /** Whom auth is asked through (the broker: a user's record is the service's question, not the caller's). */
  broker: Caller;
  streams: AuditStager;
}

export function notebooksPort({ source, broker, streams, ...rest }: NotebooksPortSource): NotebooksPort {
  return {
    ...rest,
    audited: (changes, write) => auditedWrite(rest.db, streams, source, changes, write),
    stageAudit: (tx, changes) => stageAudit(streams, tx, source, changes),
    setTotal: (total) => setTotal(source, total),
    async userRecord(username) {
      const user = await authClient.call(broker, "users.resolve", { username });
      return user && { created_at: user.created_at };
    },
  };
}
