/**
 * The pipelines service's SQL, all of it (its own schema only): pipelines, registrations,
 * actions, the readings' day partitions and batch inserts, waveforms, and what retention deletes.
 * Raw parametrised SQL through the TypeORM DataSource's `query()`, as every service does.
 */
import type { DataSource, EntityManager } from "typeorm";
import { isUniqueViolation } from "../../lib/errors";
import type { ActionName, ActionRow, Component, PipelineKind, PipelineRow, PipelineStatus } from "./rules";
import { STAGE_ROLLUPS } from "./history.repo";
import { DAY_MS, dayStart } from "./storage";
import type { Reading, ResolvedPipeline, WaveformMessage } from "./contract";

type Db = DataSource | EntityManager;

/** The caller's scope as SQL parameters (null: not restricted on that level). */
export type ScopeIds = [string | null, string | null];
const scopeSql = (n: number, table = "") =>
  `($${n}::uuid IS NULL OR ${table}site_id = $${n}::uuid) AND ($${n + 1}::uuid IS NULL OR ${table}plant_id = $${n + 1}::uuid)`;

/** A pipeline's row with its event counter, summed from its stripes (addEvents). */
const PIPELINE_ROWS = `pipelines p LEFT JOIN LATERAL (
    SELECT coalesce(sum(e.total_events), 0)::bigint AS total_events,
           coalesce((array_agg(e.latest_event ORDER BY e.latest_at DESC))[1], '[]'::jsonb) AS latest_event
      FROM pipeline_events e WHERE e.pipeline_id = p.pipeline_id) ev ON true`;

export async function findPipeline(db: Db, pipeline_id: string, kind?: PipelineKind): Promise<PipelineRow | null> {
  const rows = (await db.query(`SELECT p.*, ev.* FROM ${PIPELINE_ROWS} WHERE p.pipeline_id = $1 AND ($2::text IS NULL OR p.kind = $2)`, [
    pipeline_id,
    kind ?? null,
  ])) as PipelineRow[];
  return rows[0] ?? null;
}

/** The pipeline whose key, current or replaced by a rotation, has this hash; whether the previous one still works is the caller's to say. */
export async function findByKeyHash(db: Db, hash: Buffer): Promise<PipelineRow | null> {
  const rows = (await db.query(`SELECT p.*, ev.* FROM ${PIPELINE_ROWS} WHERE p.ingest_key_hash = $1 OR p.previous_key_hash = $1`, [hash])) as PipelineRow[];
  return rows[0] ?? null;
}

/**
 * A new key; the current one becomes the previous, working until `until` (the one before it stops
 * at once); the settings as the rotation leaves them (its secrets cleared or entered anew).
 */
export async function rotateKey(db: Db, pipeline_id: string, hash: Buffer, until: number, settings: Record<string, unknown>): Promise<boolean> {
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

export async function pipelineWithMac(db: Db, mac: string, except: string | null): Promise<string | null> {
  const rows = (await db.query(
    `SELECT pipeline_id FROM pipelines WHERE kind = 'edge' AND lower(mac_address) = lower($1) AND ($2::uuid IS NULL OR pipeline_id <> $2)`,
    [mac, except],
  )) as { pipeline_id: string }[];
  return rows[0]?.pipeline_id ?? null;
}

export interface PipelineWrite {
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
}

const json = (v: unknown) => JSON.stringify(v);

/** TypeORM answers an UPDATE/DELETE with [rows, count] and anything else with rows. */
export function rowsOf<T>(result: unknown): T[] {
  const r = result as unknown[];
  return (r.length === 2 && Array.isArray(r[0]) && typeof r[1] === "number" ? r[0] : r) as T[];
}

export async function insertPipeline(tx: EntityManager, p: PipelineWrite, keyHash: Buffer, now: number): Promise<void> {
  await tx.query(
    `INSERT INTO pipelines (pipeline_id, kind, pipeline_name, site_id, plant_id, function_id, data_type, data_source,
                            data_source_subtype, settings, tags, registration, function_enabled_in_registration,
                            gateway_firmware, firmware_update, data_directory, mac_address, ingest_key_hash, created_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19)`,
    [
      p.pipeline_id,
      p.kind,
      p.pipeline_name,
      p.site_id,
      p.plant_id,
      p.function_id,
      p.data_type,
      p.data_source,
      p.data_source_subtype,
      json(p.settings),
      json(p.tags),
      json(p.registration),
      p.function_enabled_in_registration,
      json(p.gateway_firmware),
      p.firmware_update,
      p.data_directory,
      p.mac_address,
      keyHash,
      now,
    ],
  );
  await tx.query(`INSERT INTO retention_sites (site_id) VALUES ($1) ON CONFLICT DO NOTHING`, [p.site_id]);
}

export async function updatePipeline(tx: EntityManager, p: PipelineWrite): Promise<void> {
  await tx.query(
    `UPDATE pipelines SET pipeline_name = $2, site_id = $3, plant_id = $4, function_id = $5, data_type = $6, data_source = $7,
            data_source_subtype = $8, settings = $9, tags = $10, registration = $11, function_enabled_in_registration = $12,
            gateway_firmware = $13, firmware_update = $14, data_directory = $15, mac_address = $16
      WHERE pipeline_id = $1`,
    [
      p.pipeline_id,
      p.pipeline_name,
      p.site_id,
      p.plant_id,
      p.function_id,
      p.data_type,
      p.data_source,
      p.data_source_subtype,
      json(p.settings),
      json(p.tags),
      json(p.registration),
      p.function_enabled_in_registration,
      json(p.gateway_firmware),
      p.firmware_update,
      p.data_directory,
      p.mac_address,
    ],
  );
  await tx.query(`INSERT INTO retention_sites (site_id) VALUES ($1) ON CONFLICT DO NOTHING`, [p.site_id]);
}

export const isMacTaken = (err: unknown): boolean => isUniqueViolation(err, "pipelines_edge_mac");

/**
 * Replaces a pipeline's registrations. Returns false when a monitor is registered to another
 * pipeline (the primary key decides, so two gateways racing for one monitor cannot both win).
 */
export async function replaceRegistrations(tx: EntityManager, pipeline_id: string, slaves: Map<string, string | null>): Promise<boolean> {
  await tx.query(`DELETE FROM registrations WHERE pipeline_id = $1`, [pipeline_id]);
  if (slaves.size === 0) return true;
  const ids = [...slaves.keys()];
  const inserted = (await tx.query(
    `INSERT INTO registrations (monitor_id, pipeline_id, slave_id)
     SELECT m, $1, s FROM unnest($2::uuid[], $3::text[]) AS u(m, s)
     ON CONFLICT (monitor_id) DO NOTHING RETURNING monitor_id`,
    [pipeline_id, ids, ids.map((id) => slaves.get(id) ?? null)],
  )) as unknown[];
  return inserted.length === ids.length;
}

export async function deletePipeline(db: Db, pipeline_id: string): Promise<void> {
  await db.query(`DELETE FROM pipelines WHERE pipeline_id = $1`, [pipeline_id]);
}

export interface Registration {
  monitor_id: string;
  pipeline_id: string;
  slave_id: string | null;
}

/** The pipeline a monitor is registered to, or null. */
export async function registrationOf(db: Db, monitor_id: string): Promise<Registration | null> {
  const rows = (await db.query(`SELECT monitor_id, pipeline_id, slave_id FROM registrations WHERE monitor_id::text = lower($1)`, [
    monitor_id,
  ])) as Registration[];
  return rows[0] ?? null;
}

export async function registeredMonitors(db: Db, pipeline_id: string): Promise<string[]> {
  const rows = (await db.query(`SELECT monitor_id FROM registrations WHERE pipeline_id = $1`, [pipeline_id])) as { monitor_id: string }[];
  return rows.map((r) => r.monitor_id);
}

export interface ListFilter {
  plant_id: string | null;
  function_id: string | null;
  statuses?: PipelineStatus[];
}

export async function listPipelines(db: Db, f: ListFilter, scope: ScopeIds): Promise<PipelineRow[]> {
  return (await db.query(
    `SELECT p.*, ev.* FROM ${PIPELINE_ROWS}
      WHERE ($1::uuid IS NULL OR p.plant_id = $1) AND ($2::uuid IS NULL OR p.function_id = $2) AND ${scopeSql(3, "p.")}
      ORDER BY p.created_at, p.pipeline_name, p.pipeline_id`,
    [f.plant_id, f.function_id, ...scope],
  )) as PipelineRow[];
}

export async function countPipelines(db: Db, f: ListFilter, scope: ScopeIds): Promise<number> {
  const [{ n }] = (await db.query(
    `SELECT count(*)::int AS n FROM pipelines
      WHERE ($1::uuid IS NULL OR plant_id = $1) AND ($2::uuid IS NULL OR function_id = $2) AND ${scopeSql(3)}
        AND ($5::text[] IS NULL OR status = ANY($5))`,
    [f.plant_id, f.function_id, ...scope, f.statuses ?? null],
  )) as { n: number }[];
  return n;
}

/** The last `perPipeline` actions of each pipeline, newest first. */
export async function lastActions(db: Db, ids: string[], perPipeline = 5): Promise<Map<string, ActionRow[]>> {
  const out = new Map<string, ActionRow[]>();
  if (ids.length === 0) return out;
  const rows = (await db.query(
    `SELECT action_id, pipeline_id, action, status, issued_at, completed_at FROM (
       SELECT a.*, row_number() OVER (PARTITION BY pipeline_id ORDER BY issued_at DESC, action_id) AS n
         FROM pipeline_actions a WHERE pipeline_id = ANY($1::uuid[])) x
      WHERE n <= $2 ORDER BY issued_at DESC, action_id`,
    [ids, perPipeline],
  )) as ActionRow[];
  for (const r of rows) {
    const list = out.get(r.pipeline_id) ?? [];
    list.push(r);
    out.set(r.pipeline_id, list);
  }
  return out;
}

/** Op 56 for one pipeline: the action supersedes one still pending, and the pipeline moves. */
export async function queueAction(
  tx: EntityManager,
  pipeline_id: string,
  action_id: string,
  action: ActionName,
  status: PipelineStatus,
  now: number,
): Promise<void> {
  // One queueing per pipeline at a time: without the lock two parallel requests both found no
  // pending action and the second insert broke the one-pending index (a 500).
  await tx.query(`SELECT 1 FROM pipelines WHERE pipeline_id = $1 FOR UPDATE`, [pipeline_id]);
  await tx.query(`UPDATE pipeline_actions SET status = 'failed', completed_at = $2 WHERE pipeline_id = $1 AND status = 'in_progress'`, [
    pipeline_id,
    now,
  ]);
  await tx.query(`INSERT INTO pipeline_actions (action_id, pipeline_id, action, status, issued_at) VALUES ($1, $2, $3, 'in_progress', $4)`, [
    action_id,
    pipeline_id,
    action,
    now,
  ]);
  await tx.query(`UPDATE pipelines SET status = $2 WHERE pipeline_id = $1`, [pipeline_id, status]);
}

export async function pendingActions(db: Db, pipeline_id: string): Promise<ActionRow[]> {
  return (await db.query(
    `SELECT action_id, pipeline_id, action, status, issued_at, completed_at FROM pipeline_actions
      WHERE pipeline_id = $1 AND status = 'in_progress' ORDER BY issued_at`,
    [pipeline_id],
  )) as ActionRow[];
}

/** Completes a pending action; null when there is no such pending action of the pipeline. */
export async function completeAction(
  tx: EntityManager,
  pipeline_id: string,
  action_id: string,
  status: "completed" | "failed",
  now: number,
): Promise<ActionRow | null> {
  const rows = rowsOf<ActionRow>(
    await tx.query(
      `UPDATE pipeline_actions SET status = $3, completed_at = $4
        WHERE action_id = $1 AND pipeline_id = $2 AND status = 'in_progress'
        RETURNING action_id, pipeline_id, action, status, issued_at, completed_at`,
      [action_id, pipeline_id, status, now],
    ),
  );
  return rows[0] ?? null;
}

export async function actionExists(db: Db, pipeline_id: string, action_id: string): Promise<boolean> {
  const rows = (await db.query(`SELECT 1 FROM pipeline_actions WHERE action_id = $1 AND pipeline_id = $2`, [action_id, pipeline_id])) as unknown[];
  return rows.length > 0;
}

export async function setStatus(tx: Db, pipeline_id: string, status: PipelineStatus): Promise<void> {
  await tx.query(`UPDATE pipelines SET status = $2 WHERE pipeline_id = $1`, [pipeline_id, status]);
}

/**
 * Fails every action older than the timeout and puts its pipeline in `error`, in one statement.
 * The status guard makes it happen once however many replicas sweep at the same moment: the
 * second UPDATE of a row finds it no longer `in_progress`.
 */
export async function failOverdueActions(db: DataSource, timeoutMs: number, now: number): Promise<string[]> {
  const rows = rowsOf<{ pipeline_id: string }>(
    await db.query(
    `WITH overdue AS (
       UPDATE pipeline_actions SET status = 'failed', completed_at = $2
        WHERE status = 'in_progress' AND issued_at <= $1
        RETURNING pipeline_id)
     UPDATE pipelines p SET status = 'error' FROM overdue o WHERE p.pipeline_id = o.pipeline_id
     RETURNING p.pipeline_id`,
    [now - timeoutMs, now],
    ),
  );
  return rows.map((r) => r.pipeline_id);
}

export async function recordHeartbeat(db: Db, pipeline_id: string, component: Component, ts: number): Promise<void> {
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

export async function plantActivity(db: Db, plant_id: string): Promise<{ pipelines: number; events: number }> {
  const [row] = (await db.query(`SELECT count(*)::int AS pipelines, coalesce(sum(ev.total_events), 0)::bigint AS events FROM ${PIPELINE_ROWS} WHERE p.plant_id = $1`, [
    plant_id,
  ])) as { pipelines: number; events: string }[];
  return { pipelines: row?.pipelines ?? 0, events: Number(row?.events ?? 0) };
}

/** `pipelines.resolve` (internal): what other services need to name and place a gateway. */
export async function resolvePipeline(db: Db, pipeline_id: string): Promise<ResolvedPipeline | null> {
  if (!/^[0-9a-f-]{36}$/i.test(pipeline_id)) return null;
  const row = await findPipeline(db, pipeline_id.toLowerCase());
  if (!row) return null;
  return {
    pipeline_id: row.pipeline_id,
    pipeline_name: row.pipeline_name,
    data_type: row.data_type,
    data_source: row.data_source,
    data_source_subtype: row.data_source_subtype,
    function_id: row.function_id,
    plant_id: row.plant_id,
    site_id: row.site_id,
    status: row.status,
    monitor_ids: await registeredMonitors(db, row.pipeline_id),
  };
}

// ---------------------------------------------------------------- waveforms

export async function insertWaveform(tx: EntityManager, w: WaveformMessage, now: number): Promise<void> {
  await tx.query(
    `INSERT INTO waveforms (waveform_id, pipeline_id, site_id, monitor_id, tag, axis, ts, sample_rate_hz, samples, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [w.waveform_id, w.pipeline_id, w.site_id, w.monitor_id, w.tag, w.axis, w.ts, w.sample_rate_hz, w.samples, now],
  );
}

// ---------------------------------------------------------------- readings: day partitions and batches

const iso = (ms: number): string => new Date(ms).toISOString();

export const partitionName = (day: string): string => `readings_${day}`;

export function partitionDdl(day: string): string {
  const from = dayStart(day);
  return `CREATE TABLE IF NOT EXISTS ${partitionName(day)} PARTITION OF readings FOR VALUES FROM ('${iso(from)}') TO ('${iso(from + DAY_MS)}')`;
}

/** The days (`20251122`) that have a partition of `readings`. */
export async function partitionDays(db: Db): Promise<string[]> {
  const rows = (await db.query(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'readings'::regclass`,
  )) as { name: string }[];
  return rows.map((r) => r.name.replace(/^readings_/, ""));
}

/** Creates the days' partitions; replicas serialize on an advisory lock and skip what exists. */
export async function createPartitions(db: DataSource, days: string[]): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('ims:pipelines:partitions'))`);
    for (const day of days) await tx.query(partitionDdl(day));
  });
}

export async function dropPartition(db: Db, day: string): Promise<void> {
  await db.query(`DROP TABLE IF EXISTS ${partitionName(day)}`);
}

export interface BatchPlace {
  batch_id: string;
  pipeline_id: string;
  site_id: string;
}

/**
 * One statement for the whole batch; `idx` is the reading's place in the batch (its stable id).
 * The arrays go as ready-made PostgreSQL array literals: uuids and numbers need no quoting, and
 * pg's generic per-element escaping was a tenth of the ingest path's CPU. With `rollups`, the
 * same statement stages the batch's per-minute aggregates for the history's rollups
 * (history.repo.ts): in the readings' own transaction, so the rollups never differ from the
 * readings, whatever is retried or redelivered.
 */
export async function insertReadings(tx: EntityManager, place: BatchPlace, readings: Reading[], rollups = true): Promise<void> {
  const n = readings.length;
  const monitors = new Array<string>(n);
  const tags = new Array<string>(n);
  const ts = new Array<number>(n);
  const values = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const r = readings[i] as Reading;
    monitors[i] = r.monitor_id;
    tags[i] = arrayText(r.tag_id);
    ts[i] = r.ts;
    values[i] = r.value;
  }
  const insert = `INSERT INTO readings (ts, pipeline_id, site_id, monitor_id, tag_id, value, batch_id, idx)
                  SELECT to_timestamp(u.t / 1000), $1, $2, u.m, u.g, u.v, $3, (u.i - 1)::int FROM u`;
  const batch = `unnest($4::uuid[], $5::text[], $6::float8[], $7::float8[]) WITH ORDINALITY AS u(m, g, t, v, i)`;
  await tx.query(
    rollups
      ? `WITH u AS (SELECT * FROM ${batch}), stored AS (${insert}), staged AS (${STAGE_ROLLUPS}) SELECT 1`
      : `${insert.replace("FROM u", `FROM ${batch}`)}`,
    [place.pipeline_id, place.site_id, place.batch_id, `{${monitors.join(",")}}`, `{${tags.join(",")}}`, `{${ts.join(",")}}`, `{${values.join(",")}}`],
  );
}

/** An element of a text[] literal: always quoted, with `"` and `\` escaped. */
export const arrayText = (s: string): string => `"${/["\\]/.test(s) ? s.replace(/(["\\])/g, "\\$1") : s}"`;

// ---------------------------------------------------------------- idempotency keys (idempotency.ts)

/** How a request's key was claimed: by this transaction, by one still under way, or by a request committed earlier. */
export type KeyClaim = "claimed" | "busy" | "taken";

/**
 * Claims a pipeline's key in the transaction `tx`, recording the answer the request gives; a key
 * recorded before `expired` (epoch ms) is claimed anew. The advisory lock is tried first, without
 * waiting (a repeat while the first is in its transaction is `busy`, not blocked on its row); the
 * insert then sees any committed row of the key, whatever the statement's snapshot.
 * Locks of two int4 keys are a space of their own: they never meet the single-key locks (partitions, migrations).
 */
export async function claimIdempotencyKey(
  tx: EntityManager,
  pipeline_id: string,
  key: string,
  fingerprint: Buffer,
  answer: string,
  now: number,
  expired: number,
): Promise<KeyClaim> {
  const [row] = (await tx.query(
    `WITH l AS (SELECT pg_try_advisory_xact_lock(hashtext('ims:pipelines:idempotency'), hashtext($1::text || ' ' || $2::text)) AS locked),
          claimed AS (
            INSERT INTO idempotency_keys (pipeline_id, key, fingerprint, answer, created_at)
            SELECT $1::uuid, $2::text, $3::bytea, $4::text, $5::bigint FROM l WHERE l.locked
            ON CONFLICT (pipeline_id, key) DO UPDATE
               SET fingerprint = EXCLUDED.fingerprint, answer = EXCLUDED.answer, created_at = EXCLUDED.created_at
             WHERE idempotency_keys.created_at < $6::bigint
            RETURNING 1)
     SELECT l.locked, EXISTS (SELECT 1 FROM claimed) AS claimed FROM l`,
    [pipeline_id, key, fingerprint, answer, now, expired],
  )) as { locked: boolean; claimed: boolean }[];
  return !row?.locked ? "busy" : row.claimed ? "claimed" : "taken";
}

export interface RecordedKey {
  fingerprint: Buffer;
  /** The first answer's JSON text. */
  answer: string;
}

export async function recordedIdempotencyKey(db: Db, pipeline_id: string, key: string): Promise<RecordedKey | null> {
  const rows = (await db.query(`SELECT fingerprint, answer FROM idempotency_keys WHERE pipeline_id = $1 AND key = $2`, [pipeline_id, key])) as RecordedKey[];
  return rows[0] ?? null;
}

/** Deletes the keys recorded before `before` (epoch ms); the number deleted. */
export async function deleteIdempotencyKeysBefore(db: Db, before: number): Promise<number> {
  const res = (await db.query(`DELETE FROM idempotency_keys WHERE created_at < $1`, [before])) as [unknown, number];
  return res[1] ?? 0;
}

// ---------------------------------------------------------------- retention

/** The sites that have (or had) pipelines, whose retention the daily run applies. */
export async function retentionSiteIds(db: Db): Promise<string[]> {
  return ((await db.query(`SELECT site_id FROM retention_sites`)) as { site_id: string }[]).map((r) => r.site_id);
}

/** Deletes a site's readings before `before` (epoch ms); the number deleted. */
export async function deleteReadingsBefore(db: Db, site_id: string, before: number): Promise<number> {
  const res = (await db.query(`DELETE FROM readings WHERE site_id = $1 AND ts < to_timestamp($2::float8 / 1000)`, [site_id, before])) as [unknown, number];
  return res[1] ?? 0;
}

export async function deleteWaveformsBefore(db: Db, site_id: string, before: number): Promise<void> {
  await db.query(`DELETE FROM waveforms WHERE site_id = $1 AND ts < $2`, [site_id, before]);
}
