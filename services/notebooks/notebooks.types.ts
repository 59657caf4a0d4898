/**
 * The notebooks service as its handlers see it (`this`): the schema's locals and methods, typed
 * once here so that the action modules are checked against the service notebooks.service.ts
 * builds, without importing the schema itself.
 */
import type { Cron } from "croner";
import type { Context, Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { AuditStreams } from "../../lib/audit";
import type { Caller, RequestMeta } from "../../lib/contract";
import type { StreamClient } from "../../mixins/stream.mixin";
import type { NotebookFiles } from "./files";
import type { NotebooksPort } from "./port";
import type { RunQueue } from "./queue";
import type { RunFolders, RunRuntime } from "./runtime";

export interface NotebooksLocals {
  db: DataSource;
  /** The stream mixin's client: audit entries are staged through the service's outbox, in the change's transaction. */
  streams: StreamClient<AuditStreams>;
  files: NotebookFiles;
  queue: RunQueue;
  ticker: Cron | undefined;
  /** The runs' own folder (door sockets) and the helpers bound into every run. */
  folders: Promise<RunFolders>;
  runtime: RunRuntime;
  sweepers: Cron[] | undefined;
}

export interface NotebooksMethods {
  /** The port of an HTTP operation: its caller (401 without one). */
  use(ctx: Context<unknown, Partial<RequestMeta>>): NotebooksPort;
  /** The port of an event, a tick or a sweep: the service itself. */
  system(caller: Caller & Partial<Pick<Context, "meta" | "requestID">>): NotebooksPort;
}

export type NotebooksThis = Service<ServiceSettingSchema> & NotebooksLocals & NotebooksMethods;

export type NotebooksSchema = ServiceSchema<ServiceSettingSchema, NotebooksMethods, NotebooksLocals, NotebooksThis>;

/** A group of the service's actions, spread into its schema's `actions`: their handlers' `this` is the service's. */
export type NotebooksActions = NonNullable<NotebooksSchema["actions"]>;
