/**
 * The stream as a conveyor (docs/architecture.md), against the real servers (PostgreSQL, NATS
 * JetStream): a message is kept until every declared group has taken it and then gone; one
 * published before a group's first subscribe still reaches it; a full stream makes ingestion
 * answer 503 with Retry-After, and what was accepted reaches every group once space frees; a
 * stream of the old kind (limits retention) is replaced by a conveyor once drained, losing nothing.
 */
import { randomBytes } from "node:crypto";
import { connect, RetentionPolicy } from "nats";
import { Pool } from "pg";
import { JetStreamAdapter, jetStreamNames, PgStreamAdapter, type StreamAdapter, type StreamMessage, type StreamSettings } from "../../lib/streams";
import type { ReadingBatch } from "../../services/pipelines/contract";
import { startTestNode, type TestNode } from "../helpers/node";
import { adapterKit, NATS_URL, numbered as msgs, quiet, sleep, until } from "../helpers/streams";
import { createEdge, edgeBody, hierarchy, ingest, type Hierarchy } from "../e2e/pipelines-fixtures";

/** How many messages the stream holds now: JetStream's stream info, or the PostgreSQL log's rows. */
async function held(kind: "pg" | "jetstream", namespace: string, stream: string, dbUrl?: string): Promise<number> {
  if (kind === "jetstream") {
    const nc = await connect({ servers: NATS_URL.replace("nats://", "") });
    try {
      const jsm = await nc.jetstreamManager();
      return (await jsm.streams.info(jetStreamNames(namespace, stream).stream)).state.messages;
    } finally {
      await nc.close();
    }
  }
  const pool = new Pool({ connectionString: dbUrl, max: 1 });
  try {
    const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM streams.messages WHERE stream = $1`, [`${namespace}.${stream}`]);
    return rows[0]?.n ?? 0;
  } finally {
    await pool.end();
  }
}

describe.each(["pg", "jetstream"] as const)("%s: the stream as a conveyor", (kind) => {
  const namespace = `test-conveyor-${randomBytes(4).toString("hex")}`;
  const kit = adapterKit(kind, { namespace, maxDeliveries: 2, maxAgeS: 3600, groups: { parcels: ["packing", "billing"] } }, ["parcels"]);
  const adapter = () => kit.adapter();

  it("keeps a message published before a group's first subscribe for it, and lets it go once every group has taken it", async () => {
    const producer = await adapter();
    await producer.publish("parcels", msgs(0, 3));
    expect(await held(kind, namespace, "parcels", kit.dbUrl)).toBe(3);

    const packed: number[] = [];
    const consumer = await adapter();
    const packing = await consumer.subscribe("parcels", "packing", async (m: StreamMessage) => void packed.push((m.data as { n: number }).n));
    await until(() => packed.length >= 3);
    expect(packed).toEqual([0, 1, 2]);
    // "billing" has taken nothing yet: the stream still holds all three for it.
    await sleep(kind === "pg" ? 6000 : 500);
    expect(await held(kind, namespace, "parcels", kit.dbUrl)).toBe(3);

    const billed: number[] = [];
    const billing = await consumer.subscribe("parcels", "billing", async (m: StreamMessage) => void billed.push((m.data as { n: number }).n));
    await until(() => billed.length >= 3);
    expect(billed).toEqual([0, 1, 2]);
    await until(async () => (await held(kind, namespace, "parcels", kit.dbUrl)) === 0);
    await packing.close();
    await billing.close();
  }, 60000);
});

describe.each(["pg", "jetstream"] as const)("%s: ingestion into a full stream", (kind) => {
  let t: TestNode;
  let h: Hierarchy;
  let edge: { id: string; ingest_key: string };
  let consumer: StreamAdapter | undefined;
  const MAX_BYTES = 16 * 1024;

  beforeAll(async () => {
    t = await startTestNode({
      services: ["api", "auth", "config", "pipelines"],
      env: { STREAM_MAX_BYTES: String(MAX_BYTES), ...(kind === "jetstream" ? { TRANSPORTER: NATS_URL } : {}) },
    });
    h = await hierarchy(t, "Conveyor");
    edge = await createEdge(t, edgeBody(h, [h.fan.id]));
  }, 60000);
  afterAll(async () => {
    await consumer?.stop();
    if (consumer instanceof JetStreamAdapter) await consumer.destroy(["readings", "audit"]);
    await t?.stop();
  });

  it("answers 503 with Retry-After while the stream is full, and every reading it accepted reaches every group once they take them", async () => {
    // Nothing of alerting, cm or ems runs: the readings stream fills with what they have not taken.
    const base = Date.now() - 2 * 3_600_000;
    let accepted = 0;
    let refused: Awaited<ReturnType<typeof ingest>> | undefined;
    for (let i = 0; i < 200 && !refused; i++) {
      const readings = Array.from({ length: 20 }, (_, j) => ({ monitor_id: h.fan.id, tag_id: "vib", ts: base + (i * 20 + j) * 1000, value: i + j / 100 }));
      const res = await ingest<{ accepted: number }>(t, "POST", `/_ingest/pipelines/${edge.id}/readings`, edge.ingest_key, { readings });
      if (res.status === 200) accepted += res.body.accepted;
      else refused = res;
    }
    expect(refused?.status).toBe(503);
    expect(refused?.body).toEqual({ error: { status: 503, message: "Service unavailable" } });
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(accepted).toBeGreaterThan(0);

    // The consuming services come: each group gets every accepted reading, once space frees.
    const cfg = t.node.config;
    const settings: StreamSettings = { namespace: cfg.namespace, maxDeliveries: 5, maxAgeS: cfg.streamMaxAgeS, maxBytes: MAX_BYTES };
    consumer = kind === "pg" ? new PgStreamAdapter(t.db.url, settings, quiet) : new JetStreamAdapter(NATS_URL, settings, quiet);
    await consumer.start();
    const seen = new Map<string, Map<string, number>>();
    for (const group of ["alerting", "cm", "ems"]) {
      const batches = new Map<string, number>();
      seen.set(group, batches);
      await consumer.subscribe("readings", group, async (m: StreamMessage) => {
        const batch = m.data as ReadingBatch;
        batches.set(batch.batch_id, batch.readings.length);
      });
    }
    const total = (group: string) => [...(seen.get(group)?.values() ?? [])].reduce((a, b) => a + b, 0);
    await until(() => ["alerting", "cm", "ems"].every((g) => total(g) >= accepted), 60000);
    for (const g of ["alerting", "cm", "ems"]) expect(total(g)).toBe(accepted);

    // Room again: a gateway sending again (as Retry-After asks) is accepted within seconds.
    let again = 0;
    await until(async () => {
      const res = await ingest(t, "POST", `/_ingest/pipelines/${edge.id}/readings`, edge.ingest_key, {
        readings: [{ monitor_id: h.fan.id, tag_id: "vib", ts: Date.now() - 1000, value: 1.5 }],
      });
      again = res.status;
      if (again !== 200) await sleep(500);
      return again === 200;
    }, 15000);
    expect(again).toBe(200);
  }, 120000);
});

describe("jetstream: a stream of the old kind", () => {
  const namespace = `test-conveyor-${randomBytes(4).toString("hex")}`;
  const adapters: JetStreamAdapter[] = [];
  const warnings: string[] = [];
  const log = { warn: (...args: unknown[]) => void warnings.push(args.join(" ")), error: () => undefined };

  afterAll(async () => {
    await adapters[0]?.destroy(["ledger"]);
    for (const a of adapters) await a.stop().catch(() => undefined);
  });

  it("is replaced by a conveyor once its consumers have taken everything, and nothing is lost or doubled", async () => {
    // A release before the conveyor: no groups declared, limits retention.
    const before = new JetStreamAdapter(NATS_URL, { namespace, maxDeliveries: 2, maxAgeS: 3600, groups: {} }, quiet);
    await before.start();
    adapters.push(before);
    await before.publish("ledger", msgs(0, 3));

    // Two processes of the new release, each reading with a group of its own; either replaces it.
    const groups = { ledger: ["books", "tax"] };
    const after = new JetStreamAdapter(NATS_URL, { namespace, maxDeliveries: 2, maxAgeS: 3600, groups }, log);
    const other = new JetStreamAdapter(NATS_URL, { namespace, maxDeliveries: 2, maxAgeS: 3600, groups }, log);
    await Promise.all([after.start(), other.start()]);
    adapters.push(after, other);
    const got: number[] = [];
    const taxed: number[] = [];
    await after.subscribe("ledger", "books", async (m: StreamMessage) => void got.push((m.data as { n: number }).n));
    await other.subscribe("ledger", "tax", async (m: StreamMessage) => void taxed.push((m.data as { n: number }).n));
    // A producer goes on meanwhile, as an outbox does: a publish refused (the old stream sealed, or
    // gone for a moment) is sent again shortly.
    const publishing = (async () => {
      for (let n = 3; n < 40; n++) {
        for (;;) {
          try {
            await after.publish("ledger", msgs(n, n + 1));
            break;
          } catch {
            await sleep(50);
          }
        }
        await sleep(20);
      }
    })();
    await until(() => warnings.some((w) => /replaced by a conveyor/.test(w)));
    await publishing;
    await until(() => got.length >= 40 && taxed.length >= 40);
    await sleep(500);
    expect(got).toEqual(Array.from({ length: 40 }, (_, n) => n));
    expect(taxed).toEqual(Array.from({ length: 40 }, (_, n) => n));

    const nc = await connect({ servers: NATS_URL.replace("nats://", "") });
    try {
      const jsm = await nc.jetstreamManager();
      const name = jetStreamNames(namespace, "ledger").stream;
      expect((await jsm.streams.info(name)).config.retention).toBe(RetentionPolicy.Interest);
      await until(async () => (await jsm.streams.info(name)).state.messages === 0);
    } finally {
      await nc.close();
    }
  }, 60000);
});
