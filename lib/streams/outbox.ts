/**
 * The producer's side of a durable stream: an outbox table in the producing service's own
 * schema. A message is written in the same transaction as the rows it announces (so a committed
 * reading always has its message), and a drainer publishes outbox rows to the stream adapter and
 * deletes them once the adapter has stored them. A crash between the two publishes a row again;
 * the adapters store a message id once, and consumers are idempotent anyway.
 */
import type { DataSource, EntityManager } from "typeorm";
import type { StreamAdapter } from "./types";

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

interface Logger {
  warn(...args: unknown[]): void;
}

const BATCH = 64;

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

  /** Writes a message into the outbox inside the caller's transaction. */
  async stage(tx: EntityManager, stream: string, id: string, data: unknown): Promise<void> {
    await tx.query(`INSERT INTO stream_outbox (stream, msg_id, payload, created_at) VALUES ($1, $2, $3, $4)`, [
      stream,
      id,
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

  /** Publishes up to BATCH rows; returns how many. Rows another replica is publishing are skipped. */
  private async drainOnce(): Promise<number> {
    const db = this.db();
    if (!db?.isInitialized) return 0;
    return db.transaction(async (tx) => {
      const rows = (await tx.query(
        `SELECT id, stream, msg_id, payload FROM stream_outbox ORDER BY id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
      )) as { id: string; stream: string; msg_id: string; payload: string }[];
      if (rows.length === 0) return 0;
      const byStream = new Map<string, { id: string; payload: string }[]>();
      for (const r of rows) {
        const list = byStream.get(r.stream) ?? [];
        list.push({ id: r.msg_id, payload: r.payload });
        byStream.set(r.stream, list);
      }
      for (const [stream, messages] of byStream) await this.adapter.publish(stream, messages);
      await tx.query(`DELETE FROM stream_outbox WHERE id = ANY($1::bigint[])`, [rows.map((r) => r.id)]);
      return rows.length;
    });
  }
}
