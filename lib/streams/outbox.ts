/**
 * The producer's side of a durable stream: an outbox table in the producing service's own
 * schema. A message is written in the same transaction as the rows it announces (so a committed
 * reading always has its message), and a drainer publishes outbox rows to the stream adapter and
 * deletes them once the adapter has stored them. A crash between the two publishes a row again;
 * the adapters store a message id once, and consumers are idempotent anyway.
 *
 * Order per key: each replica of a producer drains, and SKIP LOCKED lets them take different rows,
 * so one replica could publish a key's later message while another still holds its earlier one.
 * A drainer therefore holds back a key whose earlier row is not in its own batch (another drainer
 * has it): that key's rows wait for the next drain, other keys go on.
 */
import type { DataSource } from "typeorm";
import type { StreamAdapter } from "./types";

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
/** A key held back because another drainer has its earlier row is looked at again this soon. */
const HELD_BACK_RETRY_MS = 20;

export class Outbox {
  private running?: Promise<void>;
  private again = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly db: () => DataSource | undefined,
    private readonly adapter: StreamAdapter,
    private readonly logger: Logger,
  ) {}

  /** Writes a message into the outbox inside the caller's transaction; `key`: see OutgoingMessage.key. */
  async stage(tx: StagingTx, stream: string, id: string, data: unknown, key?: string | null): Promise<void> {
    await tx.query(`INSERT INTO stream_outbox (stream, msg_id, msg_key, payload, created_at) VALUES ($1, $2, $3, $4, $5)`, [
      stream,
      id,
      key ?? null,
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
          while ((await this.drainOnce()) === BATCH && !this.stopped);
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
   * Publishes up to BATCH rows; returns how many it took. Rows another replica is publishing are
   * skipped, and so are the rows behind them of the same key (retried shortly).
   */
  private async drainOnce(): Promise<number> {
    const db = this.db();
    if (!db?.isInitialized) return 0;
    const { taken, heldBack } = await db.transaction(async (tx) => {
      const rows = (await tx.query(
        `SELECT id, stream, msg_id, msg_key, payload FROM stream_outbox ORDER BY id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
      )) as { id: string; stream: string; msg_id: string; msg_key: string | null; payload: string }[];
      if (rows.length === 0) return { taken: 0, heldBack: 0 };
      const ids = rows.map((r) => r.id);
      const keys = [...new Set(rows.filter((r) => r.msg_key !== null).map((r) => r.msg_key as string))];
      // The first row of each of our keys that is older than our newest and not ours: another drainer holds it.
      const blocked = new Map<string, number>();
      if (keys.length) {
        const others = (await tx.query(
          `SELECT stream, msg_key, min(id) AS first FROM stream_outbox
            WHERE msg_key = ANY($1::text[]) AND id < $2 AND NOT (id = ANY($3::bigint[]))
            GROUP BY stream, msg_key`,
          [keys, ids[ids.length - 1], ids],
        )) as { stream: string; msg_key: string; first: string }[];
        for (const o of others) blocked.set(`${o.stream}\n${o.msg_key}`, Number(o.first));
      }
      const mine = rows.filter((r) => {
        const first = r.msg_key === null ? undefined : blocked.get(`${r.stream}\n${r.msg_key}`);
        return first === undefined || Number(r.id) < first;
      });
      const byStream = new Map<string, { id: string; payload: string; key: string | null }[]>();
      for (const r of mine) {
        const list = byStream.get(r.stream) ?? [];
        list.push({ id: r.msg_id, payload: r.payload, key: r.msg_key });
        byStream.set(r.stream, list);
      }
      for (const [stream, messages] of byStream) await this.adapter.publish(stream, messages);
      if (mine.length) await tx.query(`DELETE FROM stream_outbox WHERE id = ANY($1::bigint[])`, [mine.map((r) => r.id)]);
      return { taken: rows.length, heldBack: rows.length - mine.length };
    });
    if (heldBack > 0) {
      setTimeout(() => this.kick(), HELD_BACK_RETRY_MS).unref();
      return 0;
    }
    return taken;
  }
}
