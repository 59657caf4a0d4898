/**
 * The embedded default's stream adapter: a durable log in PostgreSQL (schema `streams`, the
 * stream layer's own, as JetStream's file store is NATS's), read by durable consumer groups.
 *
 * - `messages(stream, seq, msg_id, payload)`: the log. A publish takes the stream's head row lock
 *   (`heads`) to number its messages, so messages commit in sequence order and a reader that saw
 *   seq n never later finds an uncommitted n-1 appear behind it.
 * - `groups(stream, grp, position, deliveries)`: a group's position; its row is locked while a chunk
 *   is handled, so two replicas of a consumer never deliver the same chunk at once.
 * - `dead_letters`: messages a group failed `maxDeliveries` times.
 * Consumers in this process are woken at once after a publish; others poll.
 * Order: a group's messages are handed over one at a time in seq order, by one replica at a time
 * (the group row's lock), and a failed one is retried before anything behind it: a total order,
 * so the contract's per-key order holds without partitions (keys and `concurrency` are not used).
 * Messages are kept until every known group has passed them, and at most `maxAgeS`: a stream's
 * declared groups (lib/streams/groups.ts) have their rows made with the stream, at position 0, so
 * what is published before a group's first subscribe is kept for it, as JetStream's conveyor
 * does (jetstream.ts). A declared stream holding `maxBytes` of payload has no room (hasRoom), so
 * its producers' outboxes stage nothing more and ingestion answers 503 until its groups move on.
 */
import { EventEmitter } from "node:events";
import { Pool, type PoolClient } from "pg";
import { groupsOf, undeclaredGroup } from "./groups";
import { errorText, givesUp, retryDelayMs } from "./jetstream";
import { RoomCache } from "./room";
import type {
  DeadLetter,
  OutgoingMessage,
  StreamAdapter,
  StreamHandler,
  StreamSettings,
  SubscribeOptions,
  Subscription,
} from "./types";

interface Logger {
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

const SCHEMA_SQL = [
  `CREATE SCHEMA IF NOT EXISTS streams`,
  `CREATE TABLE IF NOT EXISTS streams.heads (stream text PRIMARY KEY, seq bigint NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS streams.messages (
     stream        text NOT NULL,
     seq           bigint NOT NULL,
     msg_id        text NOT NULL,
     payload       text NOT NULL,
     published_at  bigint NOT NULL,
     PRIMARY KEY (stream, seq)
   )`,
  `CREATE UNIQUE INDEX IF NOT EXISTS messages_msg_id ON streams.messages (stream, msg_id)`,
  // Written once, read once per group, soon deleted: compressing it costs more CPU than it saves.
  `ALTER TABLE streams.messages ALTER COLUMN payload SET STORAGE EXTERNAL`,
  `CREATE TABLE IF NOT EXISTS streams.groups (
     stream      text NOT NULL,
     grp         text NOT NULL,
     position    bigint NOT NULL DEFAULT 0,
     deliveries  integer NOT NULL DEFAULT 0,
     retry_at    bigint NOT NULL DEFAULT 0,
     PRIMARY KEY (stream, grp)
   )`,
  `CREATE TABLE IF NOT EXISTS streams.dead_letters (
     stream      text NOT NULL,
     grp         text NOT NULL,
     msg_id      text NOT NULL,
     deliveries  integer NOT NULL,
     error       text NOT NULL,
     payload     text NOT NULL,
     created_at  bigint NOT NULL,
     PRIMARY KEY (stream, grp, msg_id)
   )`,
];

/** Wakes this process's consumers of a stream right after a publish commits. */
const wakeups = new EventEmitter().setMaxListeners(0);
const POLL_MS = 500;
const CHUNK = 32;
/** How often what every group has passed is deleted (a range of the primary key per stream). */
const PRUNE_MS = 5000;
/** How often what is past its age is deleted (a scan of the log). */
const PRUNE_AGED_MS = 60_000;


export class PgStreamAdapter implements StreamAdapter {
  readonly kind = "pg" as const;
  private pool?: Pool;
  private readonly subscriptions = new Set<Subscription>();
  private pruneTimer?: NodeJS.Timeout;
  private prunedAgedAt = 0;
  private readonly ensured = new Map<string, Promise<void>>();
  private readonly rooms = new RoomCache((stream) => this.lookForRoom(stream));

  constructor(
    private readonly databaseUrl: string,
    private readonly settings: StreamSettings,
    private readonly logger: Logger,
  ) {}

  private key(stream: string): string {
    return `${this.settings.namespace}.${stream}`;
  }

  private db(): Pool {
    if (!this.pool) throw new Error("stream adapter not started");
    return this.pool;
  }

  async start(): Promise<void> {
    this.pool = new Pool({ connectionString: this.databaseUrl, max: 4 });
    // An idle connection dropped by the server (a restart, or the embedded PostgreSQL stopping on
    // the same Ctrl-C) is an error event on the pool: unheard, it would crash the process.
    this.pool.on("error", (e) => this.logger.warn(`stream pool: ${e.message}`));
    // A checked-out client has no pool listener: its query fails with the error, the event is only noise.
    this.pool.on("connect", (client) => client.on("error", () => undefined));
    const c = await this.pool.connect();
    try {
      await c.query(`SELECT pg_advisory_lock(hashtext('ims:streams:schema'))`);
      try {
        for (const sql of SCHEMA_SQL) await c.query(sql);
      } finally {
        await c.query(`SELECT pg_advisory_unlock(hashtext('ims:streams:schema'))`);
      }
    } finally {
      c.release();
    }
    this.pruneTimer = setInterval(() => void this.prune(Date.now() - this.prunedAgedAt >= PRUNE_AGED_MS).catch((e) => this.logger.warn("stream prune failed", e)), PRUNE_MS);
    this.pruneTimer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.pruneTimer);
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.pool?.end();
    this.pool = undefined;
  }

  /** The declared groups' rows, once per process, before the first publish: the log keeps what they have not taken. */
  private ensureStream(stream: string): Promise<void> {
    let ready = this.ensured.get(stream);
    if (!ready) {
      const groups = groupsOf(stream, this.settings.groups) ?? [];
      ready = this.db()
        .query(`INSERT INTO streams.groups (stream, grp) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`, [this.key(stream), groups])
        .then(() => undefined);
      ready.catch(() => this.ensured.delete(stream));
      this.ensured.set(stream, ready);
    }
    return ready;
  }

  hasRoom(stream: string): Promise<boolean> {
    return Promise.resolve(this.rooms.has(stream));
  }

  private async lookForRoom(stream: string): Promise<boolean> {
    const max = this.settings.maxBytes ?? 0;
    if (max <= 0 || !groupsOf(stream, this.settings.groups)) return true;
    const held = async () =>
      Number(
        (
          await this.db().query<{ bytes: string }>(`SELECT coalesce(sum(octet_length(payload)), 0) AS bytes FROM streams.messages WHERE stream = $1`, [
            this.key(stream),
          ])
        ).rows[0]?.bytes ?? 0,
      );
    await this.ensureStream(stream);
    if ((await held()) < max) return true;
    // Full by the last count: what the groups took since may not be deleted yet.
    await this.prune(false);
    return (await held()) < max;
  }

  async publish(stream: string, messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.ensureStream(stream);
    const key = this.key(stream);
    await this.transaction(async (c) => {
      const [{ seq }] = (
        await c.query<{ seq: string }>(
          `INSERT INTO streams.heads (stream, seq) VALUES ($1, $2)
           ON CONFLICT (stream) DO UPDATE SET seq = streams.heads.seq + $2 RETURNING seq`,
          [key, messages.length],
        )
      ).rows;
      const last = Number(seq);
      await c.query(
        `INSERT INTO streams.messages (stream, seq, msg_id, payload, published_at)
         SELECT $1, s, i, p, $5 FROM unnest($2::bigint[], $3::text[], $4::text[]) AS t(s, i, p)
         ON CONFLICT (stream, msg_id) DO NOTHING`,
        [key, messages.map((_, i) => last - messages.length + 1 + i), messages.map((m) => m.id), messages.map((m) => m.payload), Date.now()],
      );
    });
    wakeups.emit(key);
  }

  async subscribe(stream: string, group: string, handler: StreamHandler, opts: SubscribeOptions = {}): Promise<Subscription> {
    const key = this.key(stream);
    await this.ensureStream(stream);
    const groups = groupsOf(stream, this.settings.groups);
    if (groups && !groups.includes(group)) this.logger.warn(undeclaredGroup(stream, group));
    await this.db().query(`INSERT INTO streams.groups (stream, grp) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [key, group]);
    let closed = false;
    let wake: (() => void) | undefined;
    const onWake = () => wake?.();
    wakeups.on(key, onWake);
    const loop = (async () => {
      while (!closed) {
        let next = POLL_MS;
        try {
          next = await this.deliverChunk(stream, key, group, handler, opts.maxDeliveries ?? this.settings.maxDeliveries);
        } catch (err) {
          if (!closed) this.logger.error(`stream ${stream}/${group}: delivery failed`, err);
        }
        if (closed) break;
        if (next > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, next);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
        }
      }
    })();
    const subscription: Subscription = {
      close: async () => {
        closed = true;
        wakeups.off(key, onWake);
        wake?.();
        this.subscriptions.delete(subscription);
        await loop;
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** Handles the next messages of a group; returns how long to wait before looking again (0: at once). */
  private async deliverChunk(stream: string, key: string, group: string, handler: StreamHandler, maxDeliveries: number): Promise<number> {
    return this.transaction(async (c) => {
      const locked = (
        await c.query<{ position: string; deliveries: number; retry_at: string }>(
          `SELECT position, deliveries, retry_at FROM streams.groups WHERE stream = $1 AND grp = $2 FOR UPDATE SKIP LOCKED`,
          [key, group],
        )
      ).rows[0];
      if (!locked) return POLL_MS; // another replica of the group is delivering
      const waitFor = Number(locked.retry_at) - Date.now();
      if (waitFor > 0) return Math.min(waitFor, POLL_MS);
      const rows = (
        await c.query<{ seq: string; msg_id: string; payload: string; published_at: string }>(
          `SELECT seq, msg_id, payload, published_at FROM streams.messages
            WHERE stream = $1 AND seq > $2 ORDER BY seq LIMIT ${CHUNK}`,
          [key, locked.position],
        )
      ).rows;
      if (rows.length === 0) return POLL_MS;
      let position = Number(locked.position);
      let deliveries = locked.deliveries;
      let retryAt = 0;
      for (const row of rows) {
        const attempt = deliveries + 1;
        let data: unknown = row.payload;
        try {
          data = JSON.parse(row.payload);
          await handler({ id: row.msg_id, stream, data, deliveries: attempt, publishedAt: Number(row.published_at) });
        } catch (err) {
          if (!givesUp(err, attempt, maxDeliveries)) {
            deliveries = attempt;
            retryAt = Date.now() + retryDelayMs(err, attempt);
            break;
          }
          await c.query(
            `INSERT INTO streams.dead_letters (stream, grp, msg_id, deliveries, error, payload, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
            [key, group, row.msg_id, attempt, errorText(err), row.payload, Date.now()],
          );
          this.logger.warn(`stream ${stream}/${group}: message ${row.msg_id} dead-lettered after ${attempt} deliveries: ${errorText(err)}`);
        }
        position = Number(row.seq);
        deliveries = 0;
      }
      await c.query(`UPDATE streams.groups SET position = $3, deliveries = $4, retry_at = $5 WHERE stream = $1 AND grp = $2`, [
        key,
        group,
        position,
        deliveries,
        retryAt,
      ]);
      return retryAt ? Math.min(retryAt - Date.now(), POLL_MS) : 0;
    });
  }

  async deadLetters(stream: string, group: string, limit = 100): Promise<DeadLetter[]> {
    const rows = (
      await this.db().query<{ msg_id: string; deliveries: number; error: string; payload: string }>(
        `SELECT msg_id, deliveries, error, payload FROM streams.dead_letters
          WHERE stream = $1 AND grp = $2 ORDER BY created_at LIMIT $3`,
        [this.key(stream), group, limit],
      )
    ).rows;
    return rows.map((r) => ({ id: r.msg_id, stream, group, deliveries: r.deliveries, error: r.error, data: safeJson(r.payload) }));
  }

  /** Drops what every known group of its stream has passed, and with `aged` anything older than the stream's max age. */
  async prune(aged = true): Promise<void> {
    await this.db().query(
      `DELETE FROM streams.messages m
        USING (SELECT stream, min(position) AS upto FROM streams.groups GROUP BY stream) g
        WHERE m.stream = g.stream AND m.seq <= g.upto`,
    );
    if (!aged) return;
    this.prunedAgedAt = Date.now();
    await this.db().query(`DELETE FROM streams.messages WHERE published_at < $1`, [Date.now() - this.settings.maxAgeS * 1000]);
  }

  private async transaction<T>(work: (c: PoolClient) => Promise<T>): Promise<T> {
    const c = await this.db().connect();
    try {
      await c.query("BEGIN");
      const out = await work(c);
      await c.query("COMMIT");
      return out;
    } catch (err) {
      await c.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
