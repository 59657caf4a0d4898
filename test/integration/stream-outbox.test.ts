/**
 * The producer's side of the order per key: two replicas drain one outbox table (SKIP LOCKED),
 * and a key's later message is never published while another drainer still holds its earlier
 * one; other keys are not held back. And the JetStream stream made before partitions: its subject
 * is kept, the wildcard added, and what its group's old consumer still holds is handled.
 */
import { randomBytes } from "node:crypto";
import { AckPolicy, connect } from "nats";
import { DataSource } from "typeorm";
import {
  JetStreamAdapter,
  jetStreamNames,
  Outbox,
  OUTBOX_KEY_SQL,
  OUTBOX_SQL,
  type DeadLetter,
  type OutgoingMessage,
  type StreamAdapter,
  type StreamMessage,
} from "../../lib/streams";
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

/** Records what is published, in order; a publish containing `stall` waits until released. */
class RecordingAdapter implements StreamAdapter {
  readonly kind = "pg" as const;
  release?: () => void;
  constructor(
    private readonly log: string[],
    private readonly stall?: string,
  ) {}
  async start() {}
  async stop() {}
  async publish(_stream: string, messages: OutgoingMessage[]): Promise<void> {
    if (this.stall && messages.some((m) => m.id === this.stall)) await new Promise<void>((r) => (this.release = r));
    for (const m of messages) this.log.push(m.id);
  }
  async subscribe(): Promise<never> {
    throw new Error("not a consumer");
  }
  async deadLetters(): Promise<DeadLetter[]> {
    return [];
  }
}

describe("outbox drained by two replicas", () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = new DataSource({ type: "postgres", url: db.url });
    await ds.initialize();
    for (const sql of [...OUTBOX_SQL, ...OUTBOX_KEY_SQL]) await ds.query(sql);
  });
  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it("publishes a key's messages in the order staged while the other replica holds the earlier one", async () => {
    const published: string[] = [];
    const slow = new RecordingAdapter(published, "b1");
    const fast = new RecordingAdapter(published);
    const first = new Outbox(() => ds, slow, quiet);
    const second = new Outbox(() => ds, fast, quiet);
    await ds.transaction(async (tx) => {
      await first.stage(tx, "readings", "b1", { n: 1 }, "pipeline-b");
    });
    first.kick(); // takes b1 and stalls publishing it
    await until(() => slow.release !== undefined);
    await ds.transaction(async (tx) => {
      await first.stage(tx, "readings", "b2", { n: 2 }, "pipeline-b");
      await first.stage(tx, "readings", "a1", { n: 1 }, "pipeline-a");
      await first.stage(tx, "readings", "x1", { n: 1 }, null);
    });
    second.kick();
    await until(() => published.includes("a1") && published.includes("x1"));
    await sleep(200);
    expect(published).not.toContain("b2"); // held back behind b1
    slow.release!();
    await until(() => published.includes("b2"), 5000);
    expect(published.indexOf("b1")).toBeLessThan(published.indexOf("b2"));
    await first.flush();
    await second.flush();
    expect((await ds.query(`SELECT count(*)::int AS n FROM stream_outbox`))[0].n).toBe(0);
    await first.stop();
    await second.stop();
  });
});

describe("a JetStream stream made before partitions", () => {
  const namespace = `test-legacy-${randomBytes(4).toString("hex")}`;
  const names = jetStreamNames(namespace, "readings");
  const adapter = new JetStreamAdapter(NATS_URL, { namespace, maxDeliveries: 2, maxAgeS: 3600 }, quiet);

  afterAll(async () => {
    await adapter.destroy(["readings"]).catch(() => undefined);
    await adapter.stop();
  });

  it("keeps its subject, adds the partitions' wildcard, and its group's old consumer is still read", async () => {
    const nc = await connect({ servers: NATS_URL });
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: names.stream, subjects: [names.subject] });
      await jsm.consumers.add(names.stream, { durable_name: names.durable("alerting"), filter_subject: names.subject, ack_policy: AckPolicy.Explicit });
      const js = nc.jetstream();
      for (const n of [0, 1, 2]) await js.publish(names.subject, new TextEncoder().encode(JSON.stringify({ n })), { msgID: `old${n}` });
    } finally {
      await nc.close();
    }
    await adapter.start();
    const got: string[] = [];
    const sub = await adapter.subscribe("readings", "alerting", async (m: StreamMessage) => {
      got.push(m.id);
    });
    await adapter.publish("readings", [
      { id: "new0", key: "p", payload: "{}" },
      { id: "new1", key: "p", payload: "{}" },
    ]);
    await until(() => got.length >= 5);
    await sub.close();
    expect(got.filter((id) => id.startsWith("old"))).toEqual(["old0", "old1", "old2"]);
    expect(got.filter((id) => id.startsWith("new"))).toEqual(["new0", "new1"]);
    const nc2 = await connect({ servers: NATS_URL });
    try {
      const info = await (await nc2.jetstreamManager()).streams.info(names.stream);
      expect(info.config.subjects).toEqual(names.subjects);
    } finally {
      await nc2.close();
    }
  });
});
