/**
 * The SQL of a tag's history (history.ts has the rules): the minute and hour rollups, staged with
 * each readings batch and folded by a job, the parts of a history's buckets from each tier, raw readings, the
 * export's cursor, and what retention removes of the rollups.
 */
import type { DataSource } from "typeorm";
import type { MsRange } from "../../lib/buckets";
import { HOUR_MS, MINUTE_MS } from "../../lib/time";
import { bucketsOf, mergeReadings, readingsOfChunks, type Readings } from "./chunks";
import { chunksOfMonitorHour, chunksOfSeries, COMPRESSED_HOUR, nextHourOfMonitor } from "./chunks.repo";
import type { HistoryTiers, Part } from "./history";

/** A bound in the readings' own terms: the insert's to_timestamp(ms / 1000), so equal ms compare equal. */
const TS = (n: number) => `to_timestamp($${n}::float8 / 1000)`;
/** A reading's time back in epoch ms. */
const MS = `round(extract(epoch FROM ts) * 1000)::float8`;
const RAW_MS = `round(extract(epoch FROM ts) * 1000)`;

/**
 * The rollups' share of a batch (`u`: monitor m, tag g, epoch ms t, value v; the batch in $3, its
 * site in $2): its readings grouped per tag and minute, staged as one `rollup_pending` row of
 * arrays. A plain insert in the readings' statement: no rollup row is touched, so requests of one
 * gateway never wait on each other's row locks. Part of the readings' insert (readings.repo.ts insertReadings).
 */
export const STAGE_ROLLUPS = `INSERT INTO rollup_pending (batch_id, site_id, monitor_ids, tag_ids, starts, ns, sums, mins, maxes)
   SELECT $3, $2, array_agg(m), array_agg(g), array_agg(s), array_agg(n), array_agg(total), array_agg(lo), array_agg(hi)
     FROM (SELECT m, g, t::bigint - t::bigint % ${MINUTE_MS} AS s, count(*)::int AS n, sum(v) AS total, min(v) AS lo, max(v) AS hi
             FROM u GROUP BY 1, 2, 3) p
   HAVING count(*) > 0`;

/** Staged batches folded by one transaction: a second's worth under heavy load. */
export const FOLD_BATCHES = 500;

/** The upsert of one rollup table from the claimed partials (`parts`), per tag and `size` ms, in key order (two folds cannot deadlock). */
const foldInto = (table: "reading_minutes" | "reading_hours", size: number): string =>
  `INSERT INTO ${table} AS x (monitor_id, tag_id, start, site_id, n, sum, min, max)
   SELECT m, g, s - s % ${size}, min(site::text)::uuid, sum(n), sum(total), min(lo), max(hi) FROM parts GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
   ON CONFLICT (monitor_id, tag_id, start) DO UPDATE SET
     n = x.n + excluded.n, sum = x.sum + excluded.sum, min = LEAST(x.min, excluded.min), max = GREATEST(x.max, excluded.max)`;

/** The hours the folded readings fall in, marked for the historian's compression (chunks.ts), in key order. */
const MARK_DUE = `INSERT INTO compress_due (monitor_id, tag_id, start, site_id)
   SELECT m, g, s - s % ${HOUR_MS}, min(site::text)::uuid FROM parts GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
   ON CONFLICT DO NOTHING`;

/**
 * Folds up to FOLD_BATCHES staged batches into the minute and hour rollups and deletes them, in
 * one statement (one transaction): each batch is folded exactly once, whichever replica claims it
 * (SKIP LOCKED: replicas fold different batches at once), and a fold cut short leaves its batches
 * staged for the next. Answers how many batches it folded.
 */
export async function foldStagedRollups(db: DataSource): Promise<number> {
  const [row] = (await db.query(
    `WITH claimed AS (
       DELETE FROM rollup_pending WHERE batch_id IN (SELECT batch_id FROM rollup_pending LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING site_id, monitor_ids, tag_ids, starts, ns, sums, mins, maxes),
     parts AS (
       SELECT c.site_id AS site, p.* FROM claimed c,
         unnest(c.monitor_ids, c.tag_ids, c.starts, c.ns, c.sums, c.mins, c.maxes) AS p(m, g, s, n, total, lo, hi)),
     minutes AS (${foldInto("reading_minutes", MINUTE_MS)}),
     hours AS (${foldInto("reading_hours", HOUR_MS)}),
     due AS (${MARK_DUE})
     SELECT count(*)::int AS folded FROM claimed`,
    [FOLD_BATCHES],
  )) as { folded: number }[];
  return row?.folded ?? 0;
}

/** The series of the query's monitor ($1) and tag ($2): compressed hours are its chunks (chunks.ts). */
const SERIES = `SELECT series_id FROM series WHERE monitor_id = $1 AND tag_id = $2`;
const compressedHour = (ms: string) => COMPRESSED_HOUR(SERIES, `(${ms})::bigint - (${ms})::bigint % ${HOUR_MS}`);

/**
 * Per bucket of `bucket` ms, each tier's share of the range (history.ts, historyTiers). A compressed
 * hour's minutes come from its chunk (and its late raw readings), not from minute rollups: they
 * were dropped with the compression (chunks.ts). One snapshot for rollups, raw rows and chunks,
 * so a compression committing meanwhile is seen whole or not at all.
 */
export async function historyParts(db: DataSource, monitor_id: string, tag_id: string, tiers: HistoryTiers, bucket: number): Promise<Part[]> {
  const params: unknown[] = [monitor_id, tag_id, bucket];
  const selects: string[] = [];
  const bucketOf = (t: string) => `(${t}::bigint / $3::bigint) * $3::bigint`;
  const spans = (column: string, list: { from: number; end: number }[]) =>
    list
      .map((x) => {
        params.push(x.from, x.end);
        return `(${column} >= $${params.length - 1} AND ${column} < $${params.length})`;
      })
      .join(" OR ");
  const rawIn = (list: MsRange[]) =>
    list
      .map((x) => {
        params.push(x.from, x.to);
        return `(ts >= ${TS(params.length - 1)} AND ts <= ${TS(params.length)})`;
      })
      .join(" OR ");
  const rawParts = (where: string) =>
    `SELECT ${bucketOf(RAW_MS)} AS bucket, count(*)::int AS n, sum(value) AS sum, min(value) AS min, max(value) AS max
       FROM readings r WHERE monitor_id = $1 AND tag_id = $2 AND (${where}) GROUP BY 1`;
  if (tiers.hours) {
    selects.push(`SELECT ${bucketOf("start")} AS bucket, sum(n)::int AS n, sum(sum) AS sum, min(min) AS min, max(max) AS max
                    FROM reading_hours WHERE monitor_id = $1 AND tag_id = $2 AND (${spans("start", [tiers.hours])}) GROUP BY 1`);
  }
  const minuteRanges = tiers.minutes.map((x) => ({ from: x.from, to: x.end - 1 }));
  if (tiers.minutes.length > 0) {
    selects.push(`SELECT ${bucketOf("start")} AS bucket, sum(n)::int AS n, sum(sum) AS sum, min(min) AS min, max(max) AS max
                    FROM reading_minutes rm WHERE monitor_id = $1 AND tag_id = $2 AND (${spans("start", tiers.minutes)}) AND NOT ${compressedHour("rm.start")} GROUP BY 1`);
    selects.push(rawParts(`(${rawIn(minuteRanges)}) AND ${compressedHour(RAW_MS.replace("ts", "r.ts"))}`));
  }
  if (tiers.raw.length > 0) selects.push(rawParts(rawIn(tiers.raw)));
  const fromChunks = [...minuteRanges, ...tiers.raw];
  return db.transaction("REPEATABLE READ", async (tx) => {
    const rows = selects.length ? ((await tx.query(selects.join(" UNION ALL "), params)) as { bucket: string; n: number; sum: number; min: number; max: number }[]) : [];
    const parts = rows.map((r) => ({ bucket: Number(r.bucket), n: r.n, sum: r.sum, min: r.min, max: r.max }));
    if (fromChunks.length === 0) return parts;
    const compressed = readingsOfChunks(await chunksOfSeries(tx, monitor_id, tag_id, fromChunks), -Infinity, Infinity);
    return parts.concat(partsOf(compressed, fromChunks, bucket));
  });
}

/** Readings inside any of the ranges, as a part per bucket. */
function partsOf(r: Readings, ranges: MsRange[], bucket: number): Part[] {
  return bucketsOf(r, bucket, (ts) => ranges.some((x) => ts >= x.from && ts <= x.to)).map(({ start, ...p }) => ({ bucket: start, ...p }));
}

/** A tag's readings in the range, raw and compressed, oldest first, at most `limit` (one snapshot of both). */
export async function rawReadings(db: DataSource, monitor_id: string, tag_id: string, r: MsRange, limit: number): Promise<{ ts: number; value: number }[]> {
  return db.transaction("REPEATABLE READ", async (tx) => {
    const raw = (await tx.query(
      `SELECT ${MS} AS ts, value FROM readings
        WHERE monitor_id = $1 AND tag_id = $2 AND ts >= ${TS(3)} AND ts <= ${TS(4)}
        ORDER BY ts, batch_id, idx LIMIT $5`,
      [monitor_id, tag_id, r.from, r.to, limit],
    )) as { ts: number; value: number }[];
    const chunks = await chunksOfSeries(tx, monitor_id, tag_id, [r]);
    if (chunks.length === 0) return raw;
    const all = mergeReadings(readingsOfChunks(chunks, r.from, r.to), { timestamps: raw.map((x) => x.ts), values: raw.map((x) => x.value) });
    const n = Math.min(limit, all.timestamps.length);
    return Array.from({ length: n }, (_, i) => ({ ts: all.timestamps[i]!, value: all.values[i]! }));
  });
}

export interface ExportRow {
  ts: number;
  tag_id: string;
  value: number;
}

/**
 * A monitor's readings in the range by time then tag, an hour at a time (raw rows and chunks
 * merged; hours without readings skipped), yielded `chunk` rows at a time: memory stays that of
 * one hour whatever the range. One snapshot for the whole export, so a compression meanwhile
 * neither doubles nor drops a reading. Stopping early (the client went) ends the transaction and
 * gives the connection back.
 */
export async function* exportRows(db: DataSource, monitor_id: string, r: MsRange, chunk = 5000): AsyncGenerator<ExportRow[]> {
  const runner = db.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction("REPEATABLE READ");
    const tx = runner.manager;
    for (let hour = await nextHourOfMonitor(tx, monitor_id, r.from, r.to); hour !== null; hour = await nextHourOfMonitor(tx, monitor_id, hour + HOUR_MS, r.to)) {
      const from = Math.max(r.from, hour);
      const to = Math.min(r.to, hour + HOUR_MS - 1);
      const raw = (await tx.query(
        `SELECT ${MS} AS ts, tag_id, value FROM readings
          WHERE monitor_id = $1 AND ts >= ${TS(2)} AND ts <= ${TS(3)}
          ORDER BY ts, tag_id, batch_id, idx`,
        [monitor_id, from, to],
      )) as ExportRow[];
      const rows: ExportRow[] = [];
      for (const c of await chunksOfMonitorHour(tx, monitor_id, hour)) {
        const x = readingsOfChunks([c], from, to);
        for (let i = 0; i < x.timestamps.length; i++) rows.push({ ts: x.timestamps[i]!, tag_id: c.tag_id, value: x.values[i]! });
      }
      // Compressed first at an equal time and tag (a late raw reading comes after them, as reads keep it); sort is stable.
      rows.sort((a, b) => a.ts - b.ts || (a.tag_id < b.tag_id ? -1 : a.tag_id > b.tag_id ? 1 : 0));
      const merged = rows.length === 0 ? raw : mergeExport(rows, raw);
      for (let i = 0; i < merged.length; i += chunk) yield merged.slice(i, i + chunk);
    }
    await runner.commitTransaction();
  } finally {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    await runner.release();
  }
}

const exportBefore = (a: ExportRow, b: ExportRow): boolean => a.ts < b.ts || (a.ts === b.ts && a.tag_id <= b.tag_id);

/** Two sorted lists of export rows as one, the first's rows first where equal. */
function mergeExport(first: ExportRow[], then: ExportRow[]): ExportRow[] {
  const out: ExportRow[] = [];
  let i = 0;
  let j = 0;
  while (i < first.length || j < then.length) {
    if (j >= then.length || (i < first.length && exportBefore(first[i]!, then[j]!))) out.push(first[i++]!);
    else out.push(then[j++]!);
  }
  return out;
}

/** Retention of the rollups: a site's minute and hour rows before `before`. */
export async function deleteRollupsBefore(db: DataSource, site_id: string, before: number): Promise<void> {
  await db.query(`DELETE FROM reading_minutes WHERE site_id = $1 AND start < $2`, [site_id, before]);
  await db.query(`DELETE FROM reading_hours WHERE site_id = $1 AND start < $2`, [site_id, before]);
}
