/**
 * The durable stream layer's two adapters against the real servers (PostgreSQL, NATS JetStream),
 * held to one contract: in order, a republished id stored once, a closed durable group resuming
 * where it stopped, a failed message delivered again, a message failing every delivery moved to
 * the group's dead letters, and groups independent of each other; and the order per key across
 * two replicas of a group (two adapters), a failing message holding back only its own key.
 */
import { randomBytes } from "node:crypto";
import { DEFAULT_PARTITIONS, partitionOf, type StreamMessage, type Subscription } from "../../lib/streams";
import { adapterKit, numbered as msgs, sleep, until } from "../helpers/streams";

describe.each(["pg", "jetstream"] as const)("%s adapter", (kind) => {
  const namespace = `test-streams-${randomBytes(4).toString("hex")}`;
  const settings = { namespace, maxDeliveries: 2, maxAgeS: 3600 };
  const kit = adapterKit(kind, settings, ["orders", "poison", "patient", "keyed", "keyed-fail", "gapless"]);
  const adapter = () => kit.adapter();

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

  it("never gives up on a message of a subscription without a delivery limit (alert notices): past the stream's limit it is delivered again until handled", async () => {
    const producer = await adapter();
    await producer.publish("patient", msgs(0, 1));
    const deliveries: number[] = [];
    const consumer = await adapter();
    const sub = await consumer.subscribe(
      "patient",
      "notifier",
      async (m: StreamMessage) => {
        deliveries.push(m.deliveries);
        if (m.deliveries <= settings.maxDeliveries + 1) throw new Error("auth is down");
      },
      { maxDeliveries: Infinity },
    );
    await until(() => deliveries.length >= settings.maxDeliveries + 2, 30000);
    await sleep(300);
    await sub.close();
    expect(deliveries).toEqual(Array.from({ length: settings.maxDeliveries + 2 }, (_, i) => i + 1));
    expect(await consumer.deadLetters("patient", "notifier")).toEqual([]);
  }, 60000);

  // Three keys on three different partitions (so that on JetStream they may run in parallel).
  const KEYS = ["pipeline-a", "pipeline-b", "pipeline-c"];
  const keyed = (n: number) =>
    Array.from({ length: n }, (_, i) => {
      const key = KEYS[i % KEYS.length];
      return { id: `k${i}`, key, payload: JSON.stringify({ key, n: i }) };
    });

  /** Two replicas of one group; per key, what each delivery saw, and whether two of a key ever overlapped. */
  async function twoReplicas(stream: string, onMessage: (m: StreamMessage, key: string, n: number) => Promise<void>) {
    const perKey = new Map<string, number[]>(KEYS.map((k) => [k, []]));
    const byReplica = [0, 0];
    const busy = new Set<string>();
    let overlaps = 0;
    const subs: Subscription[] = [];
    for (const replica of [0, 1]) {
      const a = await adapter();
      subs.push(
        await a.subscribe(
          stream,
          "alerting",
          async (m: StreamMessage) => {
            const { key, n } = m.data as { key: string; n: number };
            if (busy.has(key)) overlaps++;
            busy.add(key);
            try {
              await sleep(Math.random() * 3);
              await onMessage(m, key, n);
              perKey.get(key)!.push(n);
              byReplica[replica]++;
            } finally {
              busy.delete(key);
            }
          },
          { concurrency: 8 },
        ),
      );
    }
    return { perKey, byReplica, overlaps: () => overlaps, close: () => Promise.all(subs.map((s) => s.close())) };
  }

  const inOrder = (n: number, key: string, skip: number[] = []) =>
    Array.from({ length: n }, (_, i) => i).filter((i) => KEYS[i % KEYS.length] === key && !skip.includes(i));

  // Only JetStream can refuse one message of a publish (NATS's max_payload); the log stores any size.
  (kind === "jetstream" ? it : it.skip)("stores none of a key's messages after one that failed: published again, they keep their order", async () => {
    const producer = await adapter();
    const tooBig = { id: "g1", key: "line-1", payload: JSON.stringify({ n: 1, pad: "x".repeat(2 * 1024 * 1024) }) };
    const next = { id: "g2", key: "line-1", payload: JSON.stringify({ n: 2 }) };
    await expect(producer.publish("gapless", [tooBig, next])).rejects.toThrow();
    // The outbox stages both again; the first, now deliverable, goes first.
    await producer.publish("gapless", [{ ...tooBig, payload: JSON.stringify({ n: 1 }) }, next]);
    const got: number[] = [];
    const sub = await (await adapter()).subscribe("gapless", "evaluator", async (m: StreamMessage) => {
      got.push((m.data as { n: number }).n);
    });
    await until(() => got.length >= 2);
    await sleep(300);
    await sub.close();
    expect(got).toEqual([1, 2]);
  });

  it("hands each key's messages over in publish order across two replicas of a group, keys in parallel", async () => {
    expect(new Set(KEYS.map((k) => partitionOf(k, DEFAULT_PARTITIONS))).size).toBe(KEYS.length);
    const producer = await adapter();
    const run = await twoReplicas("keyed", async () => undefined);
    // Published in several calls, as outbox drains do.
    const all = keyed(200);
    for (let i = 0; i < all.length; i += 25) await producer.publish("keyed", all.slice(i, i + 25));
    await until(() => [...run.perKey.values()].reduce((t, l) => t + l.length, 0) >= 200, 30000);
    await sleep(300);
    await run.close();
    for (const key of KEYS) expect(run.perKey.get(key)).toEqual(inOrder(200, key));
    expect(run.overlaps()).toBe(0);
    // JetStream: every replica pulls from every partition. The PostgreSQL log hands a group's
    // messages to one replica at a time (in chunks), so only the order is asked of it.
    if (kind === "jetstream") expect(Math.min(...run.byReplica)).toBeGreaterThan(0);
  }, 60000);

  it("holds back only the key of a failing message, redelivers it in its place, and dead-letters a poison one", async () => {
    const producer = await adapter();
    const attempts = new Map<number, number>();
    let othersDoneBeforeRetry: boolean | undefined;
    const run = await twoReplicas("keyed-fail", async (m, key, n) => {
      attempts.set(n, m.deliveries);
      if (n === 31 && m.deliveries === 1) throw new Error("transient"); // pipeline-b
      if (n === 31) othersDoneBeforeRetry = run.perKey.get("pipeline-a")!.length === 20 && run.perKey.get("pipeline-c")!.length === 20;
      if (n === 46) throw new Error("poison pill"); // pipeline-b again, every delivery
    });
    await producer.publish("keyed-fail", keyed(60));
    await until(() => [...run.perKey.values()].reduce((t, l) => t + l.length, 0) >= 59, 30000);
    await sleep(300);
    await run.close();
    for (const key of KEYS) expect(run.perKey.get(key)).toEqual(inOrder(60, key, [46]));
    expect(run.overlaps()).toBe(0);
    expect(attempts.get(31)).toBe(2);
    expect(attempts.get(46)).toBe(2);
    // The other keys did not wait for pipeline-b's retry (its partition alone did).
    if (kind === "jetstream") expect(othersDoneBeforeRetry).toBe(true);
    const letters = await producer.deadLetters("keyed-fail", "alerting");
    expect(letters.map((l) => [l.id, l.deliveries, l.error])).toEqual([["k46", 2, "poison pill"]]);
  }, 60000);
});
