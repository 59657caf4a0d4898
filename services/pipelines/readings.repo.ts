/**
 * The SQL of raw readings: their day partitions, a batch's insert (with its rollups' share staged,
 * history.repo.ts), and what retention deletes of them.
 */
import type { DataSource, EntityManager } from "typeorm";
import { arrayText, type Queryable } from "./sql";
import type { Reading } from "./contract";
import { STAGE_ROLLUPS } from "./history.repo";
import { DAY_MS, dayStart } from "./storage";


const iso = (ms: number): string => new Date(ms).toISOString();

export const partitionName = (day: string): string => `readings_${day}`;

export function partitionDdl(day: string): string {
  const from = dayStart(day);
  return `CREATE TABLE IF NOT EXISTS ${partitionName(day)} PARTITION OF readings FOR VALUES FROM ('${iso(from)}') TO ('${iso(from + DAY_MS)}')`;
}

/** The days (`20251122`) that have a partition of `readings`. */
export async function partitionDays(db: Queryable): Promise<string[]> {
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

export async function dropPartition(db: Queryable, day: string): Promise<void> {
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


/** The sites that have (or had) pipelines, whose retention the daily run applies. */
export async function retentionSiteIds(db: Queryable): Promise<string[]> {
  return ((await db.query(`SELECT site_id FROM retention_sites`)) as { site_id: string }[]).map((r) => r.site_id);
}

/** Deletes a site's readings before `before` (epoch ms); the number deleted. */
export async function deleteReadingsBefore(db: Queryable, site_id: string, before: number): Promise<number> {
  const res = (await db.query(`DELETE FROM readings WHERE site_id = $1 AND ts < to_timestamp($2::float8 / 1000)`, [site_id, before])) as [unknown, number];
  return res[1] ?? 0;
}
