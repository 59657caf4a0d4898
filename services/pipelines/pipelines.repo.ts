/**
 * The SQL of pipelines: their rows (with the event counter's stripes and the heartbeats), the
 * list and count in a scope, keys and their rotation, and what other services ask of them.
 * Raw parametrised SQL through the TypeORM DataSource's `query()`, as every service does.
 */
import type { EntityManager } from "typeorm";
import { type Queryable } from "./sql";
import { isUniqueViolation } from "../../lib/errors";
import type { PipelineStatus } from "./contract";

export type PipelineKind = "thirdparty" | "edge";
/** A gateway's components whose heartbeats a pipeline keeps. */
export const COMPONENTS = ["log_parser", "producer", "gateway", "stasher"] as const;
export type Component = (typeof COMPONENTS)[number];

/** A pipeline as stored (bigint columns arrive from pg as text). */
export interface PipelineRow {
  pipeline_id: string;
  kind: PipelineKind;
  pipeline_name: string;
  site_id: string;
  plant_id: string;
  function_id: string | null;
  data_type: string;
  data_source: string;
  data_source_subtype: string;
  settings: Record<string, unknown>;
  tags: Record<string, unknown>[];
  registration: Record<string, unknown>[];
  function_enabled_in_registration: boolean;
  gateway_firmware: { current_version?: string; previous_version?: string };
  firmware_update: number;
  data_directory: string;
  mac_address: string;
  status: PipelineStatus;
  ingest_key_hash: Buffer;
  /** The key a rotation replaced, and until when (epoch ms) it still opens the pipeline. */
  previous_key_hash: Buffer | null;
  previous_key_until: string | number | null;
  heart_beats: Partial<Record<Component, number>>;
  total_events: string | number;
  latest_event: unknown[];
  created_at: string | number;
}


/** The caller's scope as SQL parameters (null: not restricted on that level). */
export type ScopeIds = [string | null, string | null];
const scopeSql = (n: number, table = "") =>
  `($${n}::uuid IS NULL OR ${table}site_id = $${n}::uuid) AND ($${n + 1}::uuid IS NULL OR ${table}plant_id = $${n + 1}::uuid)`;

/** A pipeline's row with its event counter, summed from its stripes (addEvents). */
const PIPELINE_ROWS = `pipelines p LEFT JOIN LATERAL (
    SELECT coalesce(sum(e.total_events), 0)::bigint AS total_events,
           coalesce((array_agg(e.latest_event ORDER BY e.latest_at DESC))[1], '[]'::jsonb) AS latest_event
      FROM pipeline_events e WHERE e.pipeline_id = p.pipeline_id) ev ON true`;

export async function findPipeline(db: Queryable, pipeline_id: string, kind?: PipelineKind): Promise<PipelineRow | null> {
  const rows = (await db.query(`SELECT p.*, ev.* FROM ${PIPELINE_ROWS} WHERE p.pipeline_id = $1 AND ($2::text IS NULL OR p.kind = $2)`, [
    pipeline_id,
    kind ?? null,
  ])) as PipelineRow[];
  return rows[0] ?? null;
}

/** The pipeline whose key, current or replaced by a rotation, has this hash; whether the previous one still works is the caller's to say. */
export async function findByKeyHash(db: Queryable, hash: Buffer): Promise<PipelineRow | null> {
  const rows = (await db.query(`SELECT p.*, ev.* FROM ${PIPELINE_ROWS} WHERE p.ingest_key_hash = $1 OR p.previous_key_hash = $1`, [hash])) as PipelineRow[];
  return rows[0] ?? null;
}

/**
 * A new key; the current one becomes the previous, working until `until` (the one before it stops
 * at once); the settings as the rotation leaves them (its secrets cleared or entered anew).
 */
export async function rotateKey(db: Queryable, pipeline_id: string, hash: Buffer, until: number, settings: Record<string, unknown>): Promise<boolean> {
  const rows = (await db.query(
    `WITH r AS (UPDATE pipelines SET previous_key_hash = ingest_key_hash, previous_key_until = $3, ingest_key_hash = $2, settings = $4
                 WHERE pipeline_id = $1 RETURNING pipeline_id) SELECT pipeline_id FROM r`,
    [pipeline_id, hash, until, json(settings)],
  )) as unknown[];
  return rows.length > 0;
}

/**
 * A pipeline's stored settings, its row locked until the transaction ends: an update that keeps a
 * secret and a rotation that clears it are made one after the other, never from one stale read.
 */
export async function lockSettings(tx: EntityManager, pipeline_id: string): Promise<Record<string, unknown> | null> {
  const rows = (await tx.query(`SELECT settings FROM pipelines WHERE pipeline_id = $1 FOR UPDATE`, [pipeline_id])) as { settings: Record<string, unknown> }[];
  return rows[0]?.settings ?? null;
}

/** A MAC address as its hex digits in lower case, separators removed: the Sparkplug edge node id (docs/sparkplug.md). */
export const normalisedMac = (sql: string): string => `lower(regexp_replace(${sql}, '[^0-9A-Fa-f]', '', 'g'))`;

/** An edge pipeline other than `except` whose MAC address is `mac`'s, compared without separators (one with no hex digit, as written). */
export async function pipelineWithMac(db: Queryable, mac: string, except: string | null): Promise<string | null> {
  const rows = (await db.query(
    `SELECT pipeline_id FROM pipelines
      WHERE kind = 'edge' AND ($2::uuid IS NULL OR pipeline_id <> $2)
        AND (lower(mac_address) = lower($1) OR (${normalisedMac("$1::text")} <> '' AND ${normalisedMac("mac_address")} = ${normalisedMac("$1::text")}))
      ORDER BY created_at LIMIT 1`,
    [mac, except],
  )) as { pipeline_id: string }[];
  return rows[0]?.pipeline_id ?? null;
}

/** The columns a pipeline's create and update write, in this order: its body (not its key, status or counters). */
const WRITTEN = [
  "pipeline_id",
  "kind",
  "pipeline_name",
  "site_id",
  "plant_id",
  "function_id",
  "data_type",
  "data_source",
  "data_source_subtype",
  "settings",
  "tags",
  "registration",
  "function_enabled_in_registration",
  "gateway_firmware",
  "firmware_update",
  "data_directory",
  "mac_address",
] as const satisfies readonly (keyof PipelineRow)[];
type Written = (typeof WRITTEN)[number];

/** A pipeline as a create or an update writes it. */
export type PipelineWrite = Pick<PipelineRow, Written>;

/** An update keeps the pipeline's id and kind. */
const UPDATED = WRITTEN.filter((c) => c !== "pipeline_id" && c !== "kind");
const placeholders = (n: number): string => Array.from({ length: n }, (_, i) => `$${i + 1}`).join(",");
const INSERT = `INSERT INTO pipelines (${WRITTEN.join(", ")}, ingest_key_hash, created_at) VALUES (${placeholders(WRITTEN.length + 2)})`;
const UPDATE = `UPDATE pipelines SET ${UPDATED.map((c, i) => `${c} = $${i + 2}`).join(", ")} WHERE pipeline_id = $1`;
const JSON_COLUMNS: ReadonlySet<Written> = new Set(["settings", "tags", "registration", "gateway_firmware"]);

const json = (v: unknown) => JSON.stringify(v);
const valuesOf = (p: PipelineWrite, columns: readonly Written[]): unknown[] => columns.map((c) => (JSON_COLUMNS.has(c) ? json(p[c]) : p[c]));

/** The written fields of a pipeline (of a whole row too), and nothing else. */
export const writtenOf = (p: PipelineWrite): PipelineWrite => Object.fromEntries(WRITTEN.map((c) => [c, p[c]])) as PipelineWrite;

/** Every site that ever had a pipeline is kept for the retention job (readings.repo.ts retentionSiteIds). */
async function keepSite(tx: EntityManager, site_id: string): Promise<void> {
  await tx.query(`INSERT INTO retention_sites (site_id) VALUES ($1) ON CONFLICT DO NOTHING`, [site_id]);
}

export async function insertPipeline(tx: EntityManager, p: PipelineWrite, keyHash: Buffer, now: number): Promise<void> {
  await tx.query(INSERT, [...valuesOf(p, WRITTEN), keyHash, now]);
  await keepSite(tx, p.site_id);
}

export async function updatePipeline(tx: EntityManager, p: PipelineWrite): Promise<void> {
  await tx.query(UPDATE, [p.pipeline_id, ...valuesOf(p, UPDATED)]);
  await keepSite(tx, p.site_id);
}

export const isMacTaken = (err: unknown): boolean => isUniqueViolation(err, "pipelines_edge_mac");

export async function deletePipeline(db: Queryable, pipeline_id: string): Promise<void> {
  await db.query(`DELETE FROM pipelines WHERE pipeline_id = $1`, [pipeline_id]);
}

export interface ListFilter {
  plant_id: string | null;
  function_id: string | null;
  statuses?: PipelineStatus[];
}

export async function listPipelines(db: Queryable, f: ListFilter, scope: ScopeIds): Promise<PipelineRow[]> {
  return (await db.query(
    `SELECT p.*, ev.* FROM ${PIPELINE_ROWS}
      WHERE ($1::uuid IS NULL OR p.plant_id = $1) AND ($2::uuid IS NULL OR p.function_id = $2) AND ${scopeSql(3, "p.")}
      ORDER BY p.created_at, p.pipeline_name, p.pipeline_id`,
    [f.plant_id, f.function_id, ...scope],
  )) as PipelineRow[];
}

export async function countPipelines(db: Queryable, f: ListFilter, scope: ScopeIds): Promise<number> {
  const [{ n }] = (await db.query(
    `SELECT count(*)::int AS n FROM pipelines
      WHERE ($1::uuid IS NULL OR plant_id = $1) AND ($2::uuid IS NULL OR function_id = $2) AND ${scopeSql(3)}
        AND ($5::text[] IS NULL OR status = ANY($5))`,
    [f.plant_id, f.function_id, ...scope, f.statuses ?? null],
  )) as { n: number }[];
  return n;
}

export async function setStatus(tx: Queryable, pipeline_id: string, status: PipelineStatus): Promise<void> {
  await tx.query(`UPDATE pipelines SET status = $2 WHERE pipeline_id = $1`, [pipeline_id, status]);
}

export async function recordHeartbeat(db: Queryable, pipeline_id: string, component: Component, ts: number): Promise<void> {
  // The latest a component was heard stays the latest: a late or replayed heartbeat does not move it back.
  await db.query(
    `UPDATE pipelines SET heart_beats = heart_beats || jsonb_build_object($2::text, $3::bigint)
      WHERE pipeline_id = $1 AND COALESCE((heart_beats ->> $2::text)::bigint, -1) < $3::bigint`,
    [
      pipeline_id,
      component,
      ts,
    ],
  );
}

/** Counter stripes a pipeline may have: one per backend (connection) at most, so requests on different connections never wait for each other. */
const EVENT_STRIPES = 32;

/** Adds a request's events to its connection's stripe of the pipeline's counter (PIPELINE_ROWS sums them). */
export async function addEvents(tx: EntityManager, pipeline_id: string, n: number, latest: unknown[]): Promise<void> {
  await tx.query(
    `INSERT INTO pipeline_events AS e (pipeline_id, stripe, total_events, latest_event, latest_at)
     VALUES ($1, pg_backend_pid() % ${EVENT_STRIPES}, $2, $3, clock_timestamp())
     ON CONFLICT (pipeline_id, stripe) DO UPDATE SET
       total_events = e.total_events + excluded.total_events, latest_event = excluded.latest_event, latest_at = excluded.latest_at`,
    [pipeline_id, n, JSON.stringify(latest)],
  );
}

export async function plantActivity(db: Queryable, plant_id: string): Promise<{ pipelines: number; events: number }> {
  const [row] = (await db.query(`SELECT count(*)::int AS pipelines, coalesce(sum(ev.total_events), 0)::bigint AS events FROM ${PIPELINE_ROWS} WHERE p.plant_id = $1`, [
    plant_id,
  ])) as { pipelines: number; events: string }[];
  return { pipelines: row?.pipelines ?? 0, events: Number(row?.events ?? 0) };
}
