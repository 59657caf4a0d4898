/**
 * The audit stream's batches, on the real PostgreSQL and NATS JetStream: a drain publishes the
 * rows of a batched stream as one message, the array of their data in the order staged, while
 * other streams' rows go one by one; with two drainers on one outbox the later rows wait for the
 * earlier batch, so one entity's entries reach the log in the order they were made; and a batch
 * delivered again after its consumer failed before the ack appends each entry once.
 */
import { randomBytes } from "node:crypto";
import { DataSource } from "typeorm";
import { AUDIT_STREAM, auditEntry, type AuditChange, type AuditEntry } from "../../lib/audit";
import { JetStreamAdapter, Outbox, type DeadLetter, type OutgoingMessage, type StreamAdapter, type StreamHandler, type StreamMessage, type Subscription } from "../../lib/streams";
import { migrateSchema } from "../../mixins/db.mixin";
import { startWalk, walkRow, type AuditRow } from "../../services/config/audit";
import { AUDIT_STREAM_CONSUMER, AuditAppender } from "../../services/config/audit.actions";
import type { ConfigThis } from "../../services/config/config.types";
import { migrations } from "../../services/config/migrations";
import { NATS_URL } from "../helpers/cluster";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

const quiet = { warn: () => undefined, error: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean | Promise<boolean>, ms = 15000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out");
    await sleep(20);
  }
}

/** The real adapter, but a publish of the stream `stall` waits until released (a slow drainer). */
class StallingAdapter implements StreamAdapter {
  readonly kind = "jetstream" as const;
  release?: () => void;
  constructor(
    private readonly inner: StreamAdapter,
    private readonly stall: string,
  ) {}
  async start() {}
  async stop() {}
  async publish(stream: string, messages: OutgoingMessage[]): Promise<void> {
    if (stream === this.stall) {
      await new Promise<void>((r) => {
        this.release = r;
        stalled.push(r);
      });
    }
    await this.inner.publish(stream, messages);
  }
  subscribe(stream: string, group: string, handler: StreamHandler): Promise<Subscription> {
    return this.inner.subscribe(stream, group, handler);
  }
  async deadLetters(): Promise<DeadLetter[]> {
    return [];
  }
}

let db: TestDatabase;
let ds: DataSource;
let adapter: JetStreamAdapter;
const namespace = `test-auditbatch-${randomBytes(4).toString("hex")}`;
const outboxes: Outbox[] = [];
/** Publishes still stalled when a test failed: released before the outboxes stop. */
const stalled: (() => void)[] = [];
const subscriptions: Subscription[] = [];

const entity = `a-${randomBytes(4).toString("hex")}`;
const change = (n: number, entity_id = entity): AuditChange => ({ action: "update", entity_type: "asset", entity_id, changes: { asset_name: [`name ${n - 1}`, `name ${n}`] } });
const entry = (n: number, entity_id = entity): AuditEntry => auditEntry({ requestID: `r${n}`, meta: {} }, change(n, entity_id));

/**
 * Each test's entries go on a stream of its own (a durable group reads a stream from its start):
 * batched as producers declare AUDIT_STREAM.
 */
const streams: string[] = [];
let stream = AUDIT_STREAM;

function outbox(over: StreamAdapter = adapter): Outbox {
  const o = new Outbox(() => ds, over, quiet, { batched: [stream] });
  outboxes.push(o);
  return o;
}

/** Stages entries (and other streams' messages) as a producer does: in its transaction, keyed by entity. */
async function stage(o: Outbox, entries: AuditEntry[], readings: string[] = []): Promise<void> {
  await ds.transaction(async (tx) => {
    for (const e of entries) await o.stage(tx, stream, e.entry_id, e, `${e.entity_type}:${e.entity_id}`);
    for (const id of readings) await o.stage(tx, "readings", id, { id }, "pipeline-1");
  });
}

/** Config's consumer of the audit stream, with its appender on the test's database. */
function configConsumer(): (data: AuditEntry, message: StreamMessage<AuditEntry>) => Promise<void> {
  const self = { auditLog: new AuditAppender(() => ds) } as unknown as ConfigThis;
  const consumer = AUDIT_STREAM_CONSUMER.audit!;
  return async (data, message) => {
    await consumer.handler.call(self, data, message);
  };
}

async function subscribe(stream: string, group: string, handler: (m: StreamMessage) => Promise<void>): Promise<void> {
  subscriptions.push(await adapter.subscribe(stream, group, handler, { concurrency: 16 }));
}

const logRows = async (): Promise<AuditRow[]> => (await ds.query(`SELECT * FROM audit_log ORDER BY id`)) as AuditRow[];

beforeAll(async () => {
  db = await createTestDatabase();
  await migrateSchema({ schema: "config", migrations }, db.url);
  ds = new DataSource({ type: "postgres", url: db.url, extra: { max: 4, options: "-c search_path=config" } });
  await ds.initialize();
  adapter = new JetStreamAdapter(NATS_URL, { namespace, maxDeliveries: 5, maxAgeS: 3600 }, quiet);
  await adapter.start();
});

afterAll(async () => {
  for (const s of subscriptions) await s.close();
  for (const r of stalled) r();
  for (const o of outboxes) await o.stop();
  await adapter?.destroy([...streams, "readings"]).catch(() => undefined);
  await adapter?.stop();
  await ds?.destroy();
  await db?.drop();
});

beforeEach(async () => {
  for (const s of subscriptions.splice(0)) await s.close();
  stream = `${AUDIT_STREAM}_${streams.length + 1}`;
  streams.push(stream);
  await ds.query(`DELETE FROM stream_outbox`);
});

it("publishes a drain's audit rows as one message, the array of the entries in the order staged; other streams' rows one by one", async () => {
  const got: StreamMessage[] = [];
  await subscribe(stream, "batch-shape", async (m) => void got.push(m));
  const readings: StreamMessage[] = [];
  await subscribe("readings", "batch-shape", async (m) => void readings.push(m));
  const entries = [entry(1), entry(2, "b-other"), entry(3)];
  const o = outbox();
  await stage(o, entries, ["r1", "r2"]);
  // A batched stream's row keeps no key: the key index is not paid for it.
  expect(await ds.query(`SELECT stream, msg_key FROM stream_outbox ORDER BY id`)).toEqual([
    { stream, msg_key: null },
    { stream, msg_key: null },
    { stream, msg_key: null },
    { stream: "readings", msg_key: "pipeline-1" },
    { stream: "readings", msg_key: "pipeline-1" },
  ]);
  await o.flush();
  await until(() => got.length >= 1 && readings.length >= 2);
  await sleep(200);
  expect(got).toHaveLength(1);
  expect(got[0]!.data).toEqual(entries);
  expect(got[0]!.id).toMatch(new RegExp(`^${entries[0]!.entry_id}\\+3\\.[0-9a-f]{16}$`));
  expect(readings.map((m) => m.id)).toEqual(["r1", "r2"]);
  expect((await ds.query(`SELECT count(*)::int AS n FROM stream_outbox`))[0].n).toBe(0);
});

it("puts up to 256 entries of one drain in a message, in the order staged", async () => {
  const got: StreamMessage[] = [];
  await subscribe(stream, "batch-size", async (m) => void got.push(m));
  const entries = Array.from({ length: 300 }, (_, i) => entry(100 + i, `e-${i % 7}`));
  const o = outbox();
  await stage(o, entries);
  await o.flush();
  await until(() => got.length >= 2);
  await sleep(200);
  expect(got.map((m) => (m.data as AuditEntry[]).length)).toEqual([256, 44]);
  expect(got.flatMap((m) => m.data as AuditEntry[]).map((e) => e.entry_id)).toEqual(entries.map((e) => e.entry_id));
});

it("holds a second drainer's later entries back until the first one's batch is stored: an entity's entries reach the log in the order made", async () => {
  const consume = configConsumer();
  await subscribe(stream, "config", (m) => consume(m.data as AuditEntry, m as StreamMessage<AuditEntry>));
  const published: string[] = [];
  await subscribe("readings", "order", async (m) => void published.push(m.id));
  const before = (await logRows()).length;
  const slow = new StallingAdapter(adapter, stream);
  const first = outbox(slow);
  const second = outbox();
  const [e1, e2, e3] = [entry(11), entry(12), entry(13, "c-other")];
  await stage(first, [e1!]);
  first.kick(); // takes e1 and stalls publishing it
  await until(() => slow.release !== undefined);
  await stage(second, [e2!, e3!], ["r9"]);
  second.kick();
  // The other stream goes on; the audit rows wait behind the batch the first drainer holds.
  await until(() => published.includes("r9"));
  await sleep(300);
  expect((await logRows()).length).toBe(before);
  expect((await ds.query(`SELECT count(*)::int AS n FROM stream_outbox WHERE stream = $1`, [stream]))[0].n).toBe(3);
  slow.release!();
  await until(async () => (await logRows()).length === before + 3);
  const rows = (await logRows()).slice(before);
  expect(rows.map((r) => r.entry_id)).toEqual([e1!.entry_id, e2!.entry_id, e3!.entry_id]);
  expect(rows.map((r) => r.request_id)).toEqual(["r11", "r12", "r13"]);
  expect((await logRows()).reduce(walkRow, startWalk()).firstBadId).toBeNull();
});

it("appends each entry of a batch delivered again (its consumer failed before the ack) once", async () => {
  const consume = configConsumer();
  const deliveries = new Map<string, number>();
  await subscribe(stream, "config", async (m) => {
    await consume(m.data as AuditEntry, m as StreamMessage<AuditEntry>);
    deliveries.set(m.id, m.deliveries);
    // Appended, then lost before the ack: the stream delivers the batch again.
    if (m.deliveries === 1) throw new Error("crashed before the ack");
  });
  const before = (await logRows()).length;
  const entries = [entry(21), entry(22), entry(23, "d-other"), entry(24)];
  const o = outbox();
  await stage(o, entries);
  await o.flush();
  await until(() => [...deliveries.values()].some((n) => n >= 2), 20000);
  const rows = (await logRows()).slice(before);
  expect(rows.map((r) => r.entry_id)).toEqual(entries.map((e) => e.entry_id));
  expect((await logRows()).reduce(walkRow, startWalk()).firstBadId).toBeNull();
});

it("takes a single entry (published before batches) and an array with an entry it cannot read whole", async () => {
  const consume = configConsumer();
  const before = (await logRows()).length;
  const single = entry(31);
  const message = (id: string, data: unknown): StreamMessage<AuditEntry> => ({ id, stream, data: data as AuditEntry, deliveries: 1, publishedAt: Date.now() });
  await consume(single, message(single.entry_id, single));
  const good = entry(32);
  await consume([good, null] as unknown as AuditEntry, message("batch-x", [good, null]));
  const rows = (await logRows()).slice(before);
  expect(rows.map((r) => r.entry_id)).toEqual([single.entry_id, good.entry_id, "batch-x#1"]);
  expect(rows[2]).toMatchObject({ action: "update", entity_type: "unknown", changes: "{}" });
});
