/** The SQL of a gateway's Idempotency-Keys (idempotency.ts has the rules). */
import type { EntityManager } from "typeorm";
import { type Queryable } from "./sql";


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

export async function recordedIdempotencyKey(db: Queryable, pipeline_id: string, key: string): Promise<RecordedKey | null> {
  const rows = (await db.query(`SELECT fingerprint, answer FROM idempotency_keys WHERE pipeline_id = $1 AND key = $2`, [pipeline_id, key])) as RecordedKey[];
  return rows[0] ?? null;
}

/** Deletes the keys recorded before `before` (epoch ms); the number deleted. */
export async function deleteIdempotencyKeysBefore(db: Queryable, before: number): Promise<number> {
  const res = (await db.query(`DELETE FROM idempotency_keys WHERE created_at < $1`, [before])) as [unknown, number];
  return res[1] ?? 0;
}
