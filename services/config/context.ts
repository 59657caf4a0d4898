/**
 * What an operation of the config service works with: the database, the caller and its scope,
 * the read cache, change announcements and the pipelines service's counts. The service builds
 * one per request (config.service.ts, method `use`), so the entity modules stay free of Moleculer.
 */
import type { DataSource, EntityManager } from "typeorm";
import type { Principal, Scope } from "../../lib/access";
import type { AuditChange } from "../../lib/audit";
import type { PlantActivity, ResolvedPipeline } from "../pipelines/contract";
import type { ConfigChange, ConfigEntity, ConfigEntityEvents } from "./contract";
import { scopeParams } from "./rules";
import { slicePage, type Page } from "../../lib/paging";

export interface ConfigContext {
  db: DataSource;
  user: Principal;
  scope: Scope;
  /** The scope as SQL parameters [site, plant] (rules.scopeParams). */
  scopeIds: [string | null, string | null];
  /** A read through the cacher; every change makes all earlier entries unreachable. */
  cached<T>(key: string, load: () => Promise<T>): Promise<T>;
  /**
   * A list read through the cacher and kept in this process's memory too, frozen and with its
   * JSON text (lib/json-text.ts), so that a repeated list costs neither a copy nor an encoding.
   * Only for lists whose items `load` builds afresh, since they are frozen.
   */
  cachedList<T extends object>(key: string, load: () => Promise<T[]>): Promise<T[]>;
  /**
   * A write of this operation with its audit entry, in one transaction (lib/audit.ts,
   * auditedWrite); the entry may depend on what the write answered (null: none).
   */
  audited<T>(change: AuditChange | ((result: T) => AuditChange | null), write: (db: DataSource | EntityManager) => Promise<T>): Promise<T>;
  /** After a committed write: invalidates the cache, then emits `config.<entity>.<change>`. */
  changed<E extends ConfigEntity>(entity: E, change: ConfigChange, payload: ConfigEntityEvents[E]): Promise<void>;
  /** Sets the X-Total-Count response header of a list. */
  setTotal(total: number): void;
  /** Pipelines and events of a plant, from the pipelines service (zero while it is not deployed). */
  plantActivity(plant_id: string): Promise<PlantActivity>;
  /**
   * Where a pipeline is, from the pipelines service: null when it has no such pipeline,
   * undefined while it is not deployed (nothing to ask).
   */
  pipelinePlace(pipeline_id: string): Promise<PipelinePlace | null | undefined>;
}

export type PipelinePlace = Pick<ResolvedPipeline, "site_id" | "plant_id">;

export function contextFor(
  base: Omit<ConfigContext, "user" | "scope" | "scopeIds">,
  user: Principal,
  scope: Scope,
): ConfigContext {
  return { ...base, user, scope, scopeIds: scopeParams(scope) };
}

/** True when a PostgreSQL error is a foreign key violation: a parent went away, or a child came, meanwhile. */
export function isForeignKeyViolation(err: unknown): boolean {
  const e = err as { code?: string; driverError?: { code?: string } };
  return (e?.code ?? e?.driverError?.code) === "23503";
}

export type { Page } from "../../lib/paging";

/** The contract's optional paging of lists: the total goes in X-Total-Count, the page in the body. */
export function paged<T>(c: ConfigContext, rows: T[], page: Page): T[] {
  c.setTotal(rows.length);
  return slicePage(rows, page);
}
