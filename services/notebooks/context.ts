/**
 * What the notebooks actions see: the service's `this` (its locals and methods), the caller's
 * meta, and the params rules the actions share.
 */
import type { Cron } from "croner";
import type { Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { Principal } from "../../lib/access";
import type { AuditChange, AuditStreams } from "../../lib/audit";
import type { DomainError } from "../../lib/errors";
import { MAX_TEXT } from "../../lib/validation";
import type { StreamClient } from "../../mixins/stream.mixin";
import type { NotebookFiles } from "./files";
import type { RunQueue, SandboxState } from "./queue";
import type { NotebookRow } from "./repo";

export interface NotebooksLocals {
  db: DataSource;
  /** The stream mixin's client: audit entries are staged through the service's outbox, in the change's transaction. */
  streams: StreamClient<AuditStreams>;
  files: NotebookFiles;
  queue: RunQueue;
  ticker: Cron | undefined;
  pythonProbe: { at: number; python: Promise<string | null> } | undefined;
  sandboxProbe: { at: number; state: Promise<SandboxState> } | undefined;
  /** The runs' own folder (door sockets) and the helpers bound into every run. */
  runtime: Promise<{ runsDir: string; helpers: string }>;
  sweepers: Cron[] | undefined;
}

export interface NotebooksMethods {
  /** The interpreter with nbclient (NOTEBOOK_PYTHON, or probed); null: no Jupyter on this machine. */
  jupyterPython(): Promise<string | null>;
  /** Whether runs can be sandboxed here (probed, a failure retried after a minute), and with what runtime. */
  sandbox(): Promise<SandboxState>;
  localApiUrl(): string;
  /** The creation time of the user's record (auth), which its notebooks keep; null when auth cannot tell now. */
  ownerSince(username: string): Promise<number | null>;
  /** Removes the notebooks of users that are gone (owners.ts). */
  sweepOwners(): Promise<void>;
  tick(): Promise<void>;
  /** The notebooks of the ids, all of them visible to the user; the first that is not answers with `fail`. */
  visibleOrFail(user: Principal, ids: string[], fail: (id: string) => DomainError): Promise<NotebookRow[]>;
}

export type NotebooksThis = Service<ServiceSettingSchema> & NotebooksLocals & NotebooksMethods;

export type NotebooksSchema = ServiceSchema<ServiceSettingSchema, NotebooksMethods, NotebooksLocals, NotebooksThis>;

/** A group of the service's actions, spread into its schema's `actions`: their handlers' `this` is the service's. */
export type NotebooksActions = NonNullable<NotebooksSchema["actions"]>;

export const text = { type: "string", max: MAX_TEXT } as const;
export const idList = { type: "array", items: text, max: 1000 } as const;

export const unique = (ids: string[]): string[] => [...new Set(ids)];

/** A notebook's audit entry, in its owner's place. */
export const notebookChange = (
  action: AuditChange["action"],
  nb: Pick<NotebookRow, "notebook_id" | "site_id" | "plant_id">,
  changes: AuditChange["changes"],
): AuditChange => ({
  action,
  entity_type: "notebook",
  entity_id: nb.notebook_id,
  site_id: nb.site_id,
  // A site admin's notebooks are of its whole site (its plant is `*`).
  plant_id: nb.plant_id === "*" ? null : nb.plant_id,
  changes,
});
