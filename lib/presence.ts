/**
 * Presence across replicas: "this thing is here, on some replica" (a Sparkplug node connected),
 * told to any process of the cluster through PostgreSQL. Each thing present is a session-level
 * *shared* advisory lock (scope, key) on one connection of this process: any number of replicas
 * hold it at once, and another session knows none does when it can take the same lock exclusively
 * (`pg_try_advisory_xact_lock(hashtext(scope), hashtext(key))`, in the transaction that acts on
 * it). A replica that dies (kill -9 included) frees its locks with its connection; a connection
 * lost while the replica runs is made again and the locks taken again.
 *
 * Advisory locks are per database: the holder and the asker use the same DATABASE_URL.
 */
import { Client } from "pg";

/** A lost connection is tried again this often. */
const RECONNECT_MS = 2000;

export class Presence {
  private client: Client | null = null;
  /** How many times each key is present here (two connections of one node while the first closes). */
  private readonly counts = new Map<string, number>();
  /** The keys locked on `client`. */
  private locked = new Set<string>();
  /** The syncs in the order they were asked: each makes the locks what `counts` says at its turn. */
  private chain: Promise<void> = Promise.resolve();
  private retry: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly opts: { databaseUrl: string; scope: string }) {}

  /** The key is present here; resolves once any other session can see it. */
  enter(key: string): Promise<void> {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    return this.sync();
  }

  /** Once left as many times as entered, the key is no longer present here. */
  leave(key: string): Promise<void> {
    const n = this.counts.get(key) ?? 0;
    if (n > 1) this.counts.set(key, n - 1);
    else this.counts.delete(key);
    return this.sync();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.counts.clear();
    await this.chain;
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  private sync(): Promise<void> {
    const run = this.chain.then(async () => {
      // Closed: the connection's end frees every lock, nothing left to tell.
      if (this.closed) return;
      const client = await this.connection();
      const take = [...this.counts.keys()].filter((k) => !this.locked.has(k));
      const give = [...this.locked].filter((k) => !this.counts.has(k));
      if (take.length > 0) await client.query(`SELECT pg_advisory_lock_shared(hashtext($1), hashtext(key)) FROM unnest($2::text[]) AS key`, [this.opts.scope, take]);
      for (const k of take) this.locked.add(k);
      if (give.length > 0) await client.query(`SELECT pg_advisory_unlock_shared(hashtext($1), hashtext(key)) FROM unnest($2::text[]) AS key`, [this.opts.scope, give]);
      for (const k of give) this.locked.delete(k);
    });
    // The chain goes on after a failure: the next sync reconnects and takes every key again.
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async connection(): Promise<Client> {
    if (this.closed) throw new Error("presence closed");
    if (this.client) return this.client;
    const client = new Client({ connectionString: this.opts.databaseUrl, application_name: `presence:${this.opts.scope}:${process.pid}` });
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    await client.connect();
    this.client = client;
    this.locked = new Set();
    return client;
  }

  /** The connection went, and its locks with it: taken again on a new one, tried until it works. */
  private lost(client: Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.locked = new Set();
    if (this.closed || this.retry) return;
    const again = () => {
      this.retry = null;
      if (this.counts.size === 0) return;
      this.sync().catch(() => {
        if (!this.closed) this.retry = setTimeout(again, RECONNECT_MS);
      });
    };
    this.retry = setTimeout(again, RECONNECT_MS);
  }
}
