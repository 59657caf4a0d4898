/**
 * The audit log's SQL (table `audit_log`, migrations/0003-audit-trail.ts). Entries are appended under one lock, so
 * the chain is a line: each row's id is the previous one's plus one and names its hash. The
 * table refuses UPDATE, DELETE and TRUNCATE (a trigger); someone who gets past that (a superuser
 * who disables the trigger) is found by `_verify` (audit.ts, walkRow).
 */
import type { DataSource } from "typeorm";
import type { AuditEntry } from "../../lib/audit";
import { canonicalJson, chainHash, GENESIS, type AuditRow, type ChainedEntry } from "./audit";

/** Appenders of every replica take turns on this lock for the length of one transaction. */
const CHAIN_LOCK = "ims:config:audit-chain";

/**
 * Appends entries in the order given, each after the chain's last row, in one transaction;
 * entries already in the log (a redelivered message) are passed over. Answers how many it added.
 */
export async function appendEntries(db: DataSource, entries: AuditEntry[]): Promise<number> {
  if (entries.length === 0) return 0;
  return db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [CHAIN_LOCK]);
    // One round trip: which entries are in already (a redelivery), and the chain's last row.
    const [found] = (await tx.query(
      `SELECT (SELECT coalesce(array_agg(entry_id), '{}') FROM audit_log WHERE entry_id = ANY($1::text[])) AS seen, last.id, last.hash
         FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT id, hash FROM audit_log ORDER BY id DESC LIMIT 1) last ON true`,
      [entries.map((e) => e.entry_id)],
    )) as { seen: string[]; id: string | null; hash: string | null }[];
    const seen = new Set(found!.seen);
    let id = found!.id === null ? 0 : Number(found!.id);
    let prev = found!.hash ?? GENESIS;
    const rows: (ChainedEntry & { changes_text: string; prev_hash: string; hash: string })[] = [];
    for (const e of entries) {
      if (seen.has(e.entry_id)) continue;
      seen.add(e.entry_id);
      const entry: ChainedEntry = { ...e, id: ++id };
      // The stored text of the changes is the one hashed: written once.
      const changesText = canonicalJson(entry.changes);
      const hash = chainHash(prev, entry, changesText);
      rows.push({ ...entry, changes_text: changesText, prev_hash: prev, hash });
      prev = hash;
    }
    if (rows.length === 0) return 0;
    const col = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k]);
    await tx.query(
      `INSERT INTO audit_log (id, entry_id, at, actor, user_type, action, entity_type, entity_id, site_id, plant_id,
                              request_id, client, changes, prev_hash, hash, via_token_of)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                            $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[])`,
      [
        col("id"),
        col("entry_id"),
        col("at"),
        col("actor"),
        col("user_type"),
        col("action"),
        col("entity_type"),
        col("entity_id"),
        col("site_id"),
        col("plant_id"),
        col("request_id"),
        col("client"),
        col("changes_text"),
        col("prev_hash"),
        col("hash"),
        rows.map((r) => r.via_token_of ?? null),
      ],
    );
    return rows.length;
  });
}

export interface AuditFilter {
  /** Epoch ms, inclusive; null: open. */
  from: number | null;
  to: number | null;
  actor: string | null;
  entity_type: string | null;
  entity_id: string | null;
  /** The caller's scope: a site admin reads its site's entries only; null: every entry. */
  site_id: string | null;
}

/** One page of the entries, newest first, and how many match in all. */
export async function listEntries(db: DataSource, f: AuditFilter, page: { limit: number; offset: number }): Promise<{ total: number; rows: AuditRow[] }> {
  const where: string[] = [];
  const args: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    args.push(value);
    where.push(sql.replace("?", `$${args.length}`));
  };
  if (f.from !== null) add("at >= ?", f.from);
  if (f.to !== null) add("at <= ?", f.to);
  if (f.actor !== null) add("actor = ?", f.actor);
  if (f.entity_type !== null) add("entity_type = ?", f.entity_type);
  if (f.entity_id !== null) add("entity_id = ?", f.entity_id);
  if (f.site_id !== null) add("site_id = ?", f.site_id);
  const clause = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const [{ total }] = (await db.query(`SELECT count(*)::int AS total FROM audit_log ${clause}`, args)) as { total: number }[];
  const rows = (await db.query(
    `SELECT * FROM audit_log ${clause} ORDER BY at DESC, id DESC LIMIT $${args.length + 1} OFFSET $${args.length + 2}`,
    [...args, page.limit, page.offset],
  )) as AuditRow[];
  return { total, rows };
}

/** Rows in chain order after `afterId`, a batch at a time (the walk of `_verify`). */
export async function rowsAfter(db: DataSource, afterId: number, limit: number): Promise<AuditRow[]> {
  return (await db.query(`SELECT * FROM audit_log WHERE id > $1 ORDER BY id LIMIT $2`, [afterId, limit])) as AuditRow[];
}
