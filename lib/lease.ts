/**
 * Leases across replicas: a thing (an edge node, a collected pipeline) handled by one replica at
 * a time. Each lease is a PostgreSQL session advisory lock held on one connection of this
 * process: nothing to renew, and a replica that dies (kill -9 included) loses its connection and
 * with it every lease at once, which PostgreSQL frees as soon as the socket closes; the others,
 * trying every `retryMs`, take them over.
 *
 * A lock is named by the holder's `scope` and the thing's key, both hashed to 32 bits by
 * PostgreSQL's `hashtext`: two keys of one scope that collide share a lease, so one replica holds
 * both (never none).
 */
import { Client } from "pg";

export interface LeaseOptions {
  databaseUrl: string;
  /** Whose leases: `mqtt-node`, `collector`; the locks of one scope never block another's. */
  scope: string;
  /** Every lease was lost (the connection to PostgreSQL broke): stop handling what they covered. */
  onLost?: (keys: string[]) => void;
}

export class Leases {
  private client: Client | null = null;
  private readonly held = new Set<string>();
  private closed = false;

  constructor(private readonly opts: LeaseOptions) {}

  has(key: string): boolean {
    return this.held.has(key);
  }

  get keys(): string[] {
    return [...this.held];
  }

  /** The keys of `keys` this replica holds once it returns: those it held, and those it could take now. */
  async take(keys: string[]): Promise<Set<string>> {
    const wanted = [...new Set(keys)].filter((k) => !this.held.has(k));
    if (wanted.length > 0) {
      const client = await this.connection();
      const { rows } = await client.query<{ key: string; taken: boolean }>(
        `SELECT key, pg_try_advisory_lock(hashtext($1), hashtext(key)) AS taken FROM unnest($2::text[]) AS key`,
        [this.opts.scope, wanted],
      );
      for (const row of rows) if (row.taken) this.held.add(row.key);
    }
    return new Set(keys.filter((k) => this.held.has(k)));
  }

  /**
   * How many holders of this scope are connected now, this one included (its connection opened by
   * the call): replicas that share their keys fairly take about keys / holders each. A holder that
   * dies stops counting as soon as PostgreSQL sees its socket close.
   */
  async holders(): Promise<number> {
    const client = await this.connection();
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name LIKE 'leases:%' AND split_part(application_name, ':', 2) = $1`,
      [this.opts.scope],
    );
    return Math.max(1, rows[0]?.n ?? 1);
  }

  async release(key: string): Promise<void> {
    if (!this.held.delete(key) || !this.client) return;
    await this.client.query(`SELECT pg_advisory_unlock(hashtext($1), hashtext($2))`, [this.opts.scope, key]).catch(() => undefined);
  }

  /** Every lease given back (a graceful stop: the others take over at once). */
  async close(): Promise<void> {
    this.closed = true;
    this.held.clear();
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  private async connection(): Promise<Client> {
    if (this.closed) throw new Error("leases closed");
    if (this.client) return this.client;
    const client = new Client({ connectionString: this.opts.databaseUrl, application_name: `leases:${this.opts.scope}:${process.pid}` });
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    await client.connect();
    this.client = client;
    return client;
  }

  private lost(client: Client): void {
    if (this.client !== client) return;
    this.client = null;
    const keys = [...this.held];
    this.held.clear();
    if (!this.closed && keys.length > 0) this.opts.onLost?.(keys);
  }
}
