/** What the stream layer's tests share: a quiet logger, waiting for a condition, and each adapter kind against the real servers. */
import { JetStreamAdapter, PgStreamAdapter, type StreamAdapter, type StreamSettings } from "../../lib/streams";
import { createTestDatabase, type TestDatabase } from "./db";

export const NATS_URL = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";
export const quiet = { warn: () => undefined, error: () => undefined };
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `check` holds; throws after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms = 15000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out");
    await sleep(20);
  }
}

/** Messages `m<from>` .. `m<to - 1>`, each's data `{ n }`. */
export const numbered = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => ({ id: `m${from + i}`, payload: JSON.stringify({ n: from + i }) }));

/**
 * Adapters of one kind for a describe block: `adapter()` starts one more (the PostgreSQL log on a
 * database made in beforeAll); afterAll deletes the JetStream streams named and stops them all.
 */
export function adapterKit(kind: "pg" | "jetstream", settings: StreamSettings, streams: string[]) {
  let db: TestDatabase | undefined;
  const adapters: StreamAdapter[] = [];
  beforeAll(async () => {
    if (kind === "pg") db = await createTestDatabase();
  });
  afterAll(async () => {
    const first = adapters[0];
    if (first instanceof JetStreamAdapter) await first.destroy(streams);
    for (const a of adapters) await a.stop().catch(() => undefined);
    await db?.drop();
  });
  return {
    async adapter(): Promise<StreamAdapter> {
      const a = kind === "pg" ? new PgStreamAdapter((db as TestDatabase).url, settings, quiet) : new JetStreamAdapter(NATS_URL, settings, quiet);
      await a.start();
      adapters.push(a);
      return a;
    },
    /** The PostgreSQL log's database (pg only). */
    get dbUrl(): string | undefined {
      return db?.url;
    },
  };
}
