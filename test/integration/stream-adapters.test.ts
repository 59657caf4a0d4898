/**
 * The durable stream layer's two adapters against the real servers (PostgreSQL, NATS JetStream),
 * held to one contract: in order, a republished id stored once, a closed durable group resuming
 * where it stopped, a failed message delivered again, a message failing every delivery moved to
 * the group's dead letters, and groups independent of each other.
 */
import { randomBytes } from "node:crypto";
import { JetStreamAdapter, PgStreamAdapter, type StreamAdapter, type StreamMessage } from "../../lib/streams";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

const NATS_URL = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const quiet = { warn: () => undefined, error: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, ms = 15000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await sleep(20);
  }
}

const msgs = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => ({ id: `m${from + i}`, payload: JSON.stringify({ n: from + i }) }));

describe.each(["pg", "jetstream"] as const)("%s adapter", (kind) => {
  let db: TestDatabase | undefined;
  const namespace = `test-streams-${randomBytes(4).toString("hex")}`;
  const settings = { namespace, maxDeliveries: 2, maxAgeS: 3600 };
  const adapters: StreamAdapter[] = [];

  async function adapter(): Promise<StreamAdapter> {
    const a = kind === "pg" ? new PgStreamAdapter((db as TestDatabase).url, settings, quiet) : new JetStreamAdapter(NATS_URL, settings, quiet);
    await a.start();
    adapters.push(a);
    return a;
  }

  beforeAll(async () => {
    if (kind === "pg") db = await createTestDatabase();
  });
  afterAll(async () => {
    const first = adapters[0];
    if (first instanceof JetStreamAdapter) await first.destroy(["orders", "poison"]);
    for (const a of adapters) await a.stop().catch(() => undefined);
    await db?.drop();
  });

  it("delivers in order, stores a republished id once, and resumes a closed group where it stopped", async () => {
    const producer = await adapter();
    await producer.publish("orders", msgs(0, 5));
    await producer.publish("orders", msgs(3, 5)); // an outbox drained twice after a crash
    const got: number[] = [];
    const consumer = await adapter();
    let sub = await consumer.subscribe("orders", "billing", async (m: StreamMessage) => {
      got.push((m.data as { n: number }).n);
    });
    await until(() => got.length >= 5);
    await sub.close();
    await producer.publish("orders", msgs(5, 9));
    await sleep(300);
    expect(got).toEqual([0, 1, 2, 3, 4]);
    sub = await consumer.subscribe("orders", "billing", async (m: StreamMessage) => {
      got.push((m.data as { n: number }).n);
    });
    await until(() => got.length >= 9);
    await sleep(300);
    await sub.close();
    expect(got).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);

    // Another group reads the whole stream on its own.
    const other: string[] = [];
    const sub2 = await consumer.subscribe("orders", "audit", async (m: StreamMessage) => {
      other.push(m.id);
    });
    await until(() => other.length >= 9);
    await sub2.close();
    expect(other).toEqual(msgs(0, 9).map((m) => m.id));
  });

  it("delivers a failed message again, and dead-letters one that fails every delivery", async () => {
    const producer = await adapter();
    await producer.publish("poison", msgs(0, 3));
    const attempts = new Map<string, number[]>();
    const handled: string[] = [];
    const consumer = await adapter();
    const sub = await consumer.subscribe("poison", "worker", async (m: StreamMessage) => {
      attempts.set(m.id, [...(attempts.get(m.id) ?? []), m.deliveries]);
      if (m.id === "m1" && m.deliveries === 1) throw new Error("transient");
      if (m.id === "m2") throw new Error("poison pill");
      handled.push(m.id);
    });
    await until(() => (attempts.get("m2")?.length ?? 0) >= 2 && handled.includes("m1"), 20000);
    await sleep(500);
    await sub.close();
    expect(handled).toEqual(["m0", "m1"]);
    expect(attempts.get("m1")).toEqual([1, 2]);
    expect(attempts.get("m2")).toEqual([1, 2]);
    const letters = await consumer.deadLetters("poison", "worker");
    expect(letters).toEqual([{ id: "m2", stream: "poison", group: "worker", deliveries: 2, error: "poison pill", data: { n: 2 } }]);
  });
});
