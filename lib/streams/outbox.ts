/**
 * The producer's side of a durable stream: an outbox table in the producing service's own
 * schema. A message is written in the same transaction as the rows it announces (so a committed
 * reading always has its message), and a drainer publishes outbox rows to the stream adapter and
 * deletes them once the adapter has stored them. A crash between the two publishes a row again;
 * the adapters store a message id once, and consumers are idempotent anyway.
 *
 * One statement claims a drain's rows and deletes them (CLAIM_SQL); the drain's transaction
 * commits only once the adapter has stored what was taken, so a failed publish or a crash leaves
 * the rows staged.
 *
 * Order per key: each replica of a producer drains, and SKIP LOCKED lets them take different rows,
 * so one replica could publish a key's later message while another still holds its earlier one.
 * A drainer therefore holds back a key whose earlier row is not in its own batch (another drainer
 * has it): that key's rows wait for the next drain, other keys go on.
 *
 * Batched streams (OutboxOptions.batched; the audit trail's): a stream of many small messages is
 * published as few large ones. A drain publishes all the rows it took of such a stream as one
 * message (cut in several past MAX_BATCH_CHARS) whose payload is the JSON array of their
 * payloads, in the order staged (batchMessages), under one key, so batches reach each group in
 * the order published. One drainer at a time takes a batched stream's rows (an advisory lock per
 * outbox and stream, held for the drain's transaction; the others leave them and look again
 * shortly), so the order staged holds across replicas without a key per row: such rows are
 * staged without one.
 *
 * The bound (docs/architecture.md, "The stream as a conveyor"). While the stream has no room (StreamAdapter.hasRoom) or this
 * outbox holds `maxBytes` of the stream's payloads, `stage` throws 503 `Service unavailable`:
 * the caller's transaction rolls back, so nothing is accepted that could not be kept, and a
 * gateway sends it again later. What was staged before stays until the stream takes it.
 */
import { createHash } from "node:crypto";
import type { DataSource } from "typeorm";
import { serviceUnavailable } from "../errors";
import { RoomCache } from "./room";
import type { OutgoingMessage, StreamAdapter } from "./types";

/** What a message is staged through: the producer's open transaction (a TypeORM EntityManager, or any `query`). */
export interface StagingTx {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

/** The outbox table; a producing service adds these statements to its migrations. */
export const OUTBOX_SQL = [
  `CREATE TABLE stream_outbox (
     id          bigserial PRIMARY KEY,
     stream      text NOT NULL,
     msg_id      text NOT NULL,
     payload     text NOT NULL,
     created_at  bigint NOT NULL
   )`,
  // The payload is read once and deleted: compressing it costs more CPU than the bytes it saves.
  `ALTER TABLE stream_outbox ALTER COLUMN payload SET STORAGE EXTERNAL`,
];

/** The message key (OutgoingMessage.key): a later migration of every producer, after OUTBOX_SQL. */
export const OUTBOX_KEY_SQL = [
  `ALTER TABLE stream_outbox ADD COLUMN IF NOT EXISTS msg_key text NULL`,
  `CREATE INDEX IF NOT EXISTS stream_outbox_key ON stream_outbox (msg_key, id) WHERE msg_key IS NOT NULL`,
];

interface Logger {
  warn(...args: unknown[]): void;
}

const BATCH = 64;
/**
 * Claims one drain makes at most while every row it takes is of a batched stream, all in its one
 * transaction, so up to 256 rows make one message: each drain, message and append costs a commit
 * whatever its size, and such rows are small (an audit entry is about half a kilobyte). A claim
 * with another stream's row ends the drain (a readings batch is large, and the held-back keys
 * are judged per claim).
 */
const BATCHED_CLAIMS = 4;
/**
 * Most characters of stored payloads in one batched message: NATS refuses a message over its
 * max_payload (1 MiB by default), and a character is at most 3 bytes of UTF-8.
 */
const MAX_BATCH_CHARS = 256 * 1024;
/** A key held back because another drainer has its earlier row is looked at again this soon. */
const HELD_BACK_RETRY_MS = 20;
/**
 * A batched stream another drainer was publishing is looked at again this soon: that drainer
 * goes on while its claims are full, so this is for what was staged after; and while a publish
 * hangs (NATS away) the lock is held long, which must not turn into a claim every few ms.
 */
const BUSY_RETRY_MS = 200;

export interface OutboxOptions {
  /**
   * Streams whose rows one drain publishes as one message (see batchMessages). Their consumers
   * must take a JSON array of messages' data as well as one message's data.
   */
  batched?: readonly string[];
  /** The most bytes of one stream's payloads the outbox holds before `stage` answers 503 (STREAM_MAX_BYTES); 0 or unset: no bound. */
  maxBytes?: number;
}

interface StagedMessage {
  id: string;
  payload: string;
  key: string | null;
}

/**
 * One drain's rows of a batched stream as messages of their own: the payloads, in id order,
 * joined into a JSON array as the stored text (nothing parsed or serialized again), cut where
 * one would grow past MAX_BATCH_CHARS. All under one key, the stream's name, so batches reach a
 * group in the order published. A message's id is derived from the ids of all its rows: a batch
 * published again after a crash (the delete not committed) is stored once, and one that took
 * more rows the second time (staged meanwhile) is another message, whose entries the consumer
 * recognises by their own ids.
 */
export function batchMessages(stream: string, rows: readonly StagedMessage[]): OutgoingMessage[] {
  const out: OutgoingMessage[] = [];
  let start = 0;
  while (start < rows.length) {
    let end = start;
    let chars = 0;
    do chars += rows[end++]!.payload.length + 1;
    while (end < rows.length && chars + rows[end]!.payload.length < MAX_BATCH_CHARS);
    const part = rows.slice(start, end);
    const hash = createHash("sha256");
    for (const r of part) hash.update(r.id).update("\n");
    out.push({
      id: `${part[0]!.id}+${part.length}.${hash.digest("hex").slice(0, 16)}`,
      key: stream,
      payload: `[${part.map((r) => r.payload).join(",")}]`,
    });
    start = end;
  }
  return out;
}

interface TakenRow {
  id: string;
  stream: string;
  msg_id: string;
  msg_key: string | null;
  payload: string;
}

/** A row of CLAIM_SQL's answer: a taken row with the counts, or only the counts (nulls) when none was taken. */
type ClaimedRow = { claimed: number; batched: number; busy: number } & { [K in keyof TakenRow]: TakenRow[K] | null };

/**
 * One claim of a drain, in one statement.
 * - A batched stream ($1) is drained by one drainer at a time: the one holding that stream's
 *   advisory lock for this outbox (until its transaction ends). Another drainer leaves the
 *   stream's rows alone ("busy"), so its batches are published in the order staged.
 * - The oldest BATCH rows no other drainer holds are locked (SKIP LOCKED). A row of an unbatched
 *   stream behind the first row of its key that another drainer holds before our newest is held
 *   back: it stays locked until the drain's transaction ends, then waits for the next drain.
 * The rows taken are deleted and answered; the counts come on every row, and alone when
 * nothing was taken.
 */
const CLAIM_SQL = `
  WITH busy AS MATERIALIZED (
    SELECT s.stream
      FROM unnest($1::text[]) AS s(stream)
     WHERE NOT pg_try_advisory_xact_lock(hashtext('ims:outbox:' || current_schema()), hashtext(s.stream))
  ),
  claimed AS MATERIALIZED (
    SELECT id, stream, msg_key FROM stream_outbox
     WHERE stream NOT IN (SELECT stream FROM busy)
     ORDER BY id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED
  ),
  mine AS MATERIALIZED (
    SELECT coalesce(array_agg(id), '{}') AS ids, max(id) AS last FROM claimed
  ),
  held_keys AS MATERIALIZED (
    SELECT o.stream, o.msg_key, min(o.id) AS first
      FROM stream_outbox o, mine
     WHERE o.msg_key = ANY(ARRAY(SELECT DISTINCT msg_key FROM claimed WHERE msg_key IS NOT NULL))
       AND o.id < mine.last AND NOT (o.id = ANY(mine.ids))
     GROUP BY o.stream, o.msg_key
  ),
  taken AS (
    DELETE FROM stream_outbox d USING claimed c
     WHERE d.id = c.id
       AND NOT EXISTS (SELECT 1 FROM held_keys h WHERE h.stream = c.stream AND h.msg_key = c.msg_key AND h.first < c.id)
    RETURNING d.id, d.stream, d.msg_id, d.msg_key, d.payload
  )
  SELECT (SELECT count(*) FROM claimed)::int AS claimed,
         (SELECT count(*) FROM claimed WHERE stream = ANY($1::text[]))::int AS batched,
         (SELECT count(*) FROM busy)::int AS busy,
         t.id, t.stream, t.msg_id, t.msg_key, t.payload
    FROM (SELECT 1) AS one LEFT JOIN taken t ON true`;

export class Outbox {
  private running?: Promise<void>;
  private again = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private readonly batched: ReadonlySet<string>;
  private readonly maxBytes: number;
  private readonly rooms = new RoomCache((stream) => this.lookForRoom(stream));

  constructor(
    private readonly db: () => DataSource | undefined,
    private readonly adapter: StreamAdapter,
    private readonly logger: Logger,
    opts: OutboxOptions = {},
  ) {
    this.batched = new Set(opts.batched ?? []);
    this.maxBytes = opts.maxBytes ?? 0;
  }

  /** Whether this outbox holds less than `maxBytes` of the stream's messages. */
  private async lookForRoom(stream: string): Promise<boolean> {
    if (this.maxBytes <= 0) return true;
    const rows = (await this.db()?.query(`SELECT coalesce(sum(octet_length(payload)), 0)::bigint AS bytes FROM stream_outbox WHERE stream = $1`, [stream])) as
      | { bytes: string }[]
      | undefined;
    return Number(rows?.[0]?.bytes ?? 0) < this.maxBytes;
  }

  /**
   * Writes a message into the outbox inside the caller's transaction, or throws 503 while the
   * stream is full (see the bound above); `key`: see
   * OutgoingMessage.key. A batched stream's rows keep no key: one drainer at a time publishes
   * them, oldest first, as batches under the stream's one key (CLAIM_SQL), so a key would buy
   * nothing but an entry in the key index on every write.
   */
  async stage(tx: StagingTx, stream: string, id: string, data: unknown, key?: string | null): Promise<void> {
    if (!this.rooms.has(stream) || !((await this.adapter.hasRoom?.(stream)) ?? true)) throw serviceUnavailable();
    await tx.query(`INSERT INTO stream_outbox (stream, msg_id, msg_key, payload, created_at) VALUES ($1, $2, $3, $4, $5)`, [
      stream,
      id,
      this.batched.has(stream) ? null : (key ?? null),
      JSON.stringify(data),
      Date.now(),
    ]);
  }

  /** Publishes what is staged as soon as possible; calls made meanwhile are coalesced into the running drain. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          while ((await this.drainOnce()) && !this.stopped);
        } catch (err) {
          this.logger.warn("outbox drain failed; retrying on the next tick", err);
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.running = undefined;
    });
  }

  /** Waits until the outbox is empty (tests, shutdown). */
  async flush(): Promise<void> {
    this.kick();
    while (this.running) await this.running;
    const db = this.db();
    if (db?.isInitialized) {
      const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM stream_outbox`)) as { n: number }[];
      if (n > 0) {
        this.kick();
        await this.running;
      }
    }
  }

  start(intervalMs = 1000): void {
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), intervalMs);
    this.timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  /**
   * Publishes what one drain claims (CLAIM_SQL, up to BATCHED_CLAIMS times while it takes only
   * rows of batched streams); answers whether the last claim was full, so that more may be
   * waiting. Rows another replica is publishing are skipped, and so are the rows behind them of
   * the same key, and the rows of a batched stream that another replica is publishing (retried
   * shortly). The transaction commits only once the stream stored what was taken, so a failed
   * publish or a crash leaves it staged.
   */
  private async drainOnce(): Promise<boolean> {
    const db = this.db();
    if (!db?.isInitialized) return false;
    const { full, heldBack, busy } = await db.transaction(async (tx) => {
      const taken: TakenRow[] = [];
      let full = false;
      let heldBack = 0;
      let busy = 0;
      for (let claim = 0; claim < BATCHED_CLAIMS; claim++) {
        const result = (await tx.query(CLAIM_SQL, [[...this.batched]])) as ClaimedRow[];
        const counts = result[0] ?? { claimed: 0, batched: 0, busy: 0 };
        const { claimed, batched } = counts;
        busy = counts.busy;
        // The join's one row when nothing was taken has no id.
        const rows = result.filter((r): r is ClaimedRow & TakenRow => r.id !== null);
        taken.push(...rows);
        full = claimed === BATCH;
        heldBack += claimed - rows.length;
        if (!full || batched < claimed || heldBack > 0) break;
      }
      taken.sort((a, b) => Number(a.id) - Number(b.id));
      const byStream = new Map<string, StagedMessage[]>();
      for (const r of taken) {
        const list = byStream.get(r.stream) ?? [];
        list.push({ id: r.msg_id, payload: r.payload, key: r.msg_key });
        byStream.set(r.stream, list);
      }
      for (const [stream, messages] of byStream) {
        await this.adapter.publish(stream, this.batched.has(stream) ? batchMessages(stream, messages) : messages);
      }
      return { full, heldBack, busy };
    });
    if (heldBack > 0) {
      setTimeout(() => this.kick(), HELD_BACK_RETRY_MS).unref();
      return false;
    }
    // A full claim is followed by the next at once, which looks at the busy stream again anyway.
    if (busy > 0 && !full) setTimeout(() => this.kick(), BUSY_RETRY_MS).unref();
    return full;
  }
}
