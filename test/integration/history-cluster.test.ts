/**
 * History and export across processes over the machine's NATS (JetStream streams): the gateway
 * (with auth and config) in one process, pipelines in another.
 * - Readings ingested through the API are folded into rollups by the pipelines process's stream
 *   consumer; `_history` answers buckets equal to the stored readings' aggregates, and `_export`'s
 *   CSV, a Moleculer stream crossing the bus, arrives whole and equal to the stored readings.
 * - The pipelines process killed (SIGKILL) while its consumer holds a batch it has not acked (its
 *   rollup transaction, half done, waits on a lock the test holds) and started again: the batch
 *   comes again, the ones behind it follow, and the rollups equal the raw readings' aggregates,
 *   nothing counted twice; a batch delivered once more after it was folded (an ack lost) adds
 *   nothing either.
 */
import { randomBytes } from "node:crypto";
import { connect, type JetStreamManager, type NatsConnection } from "nats";
import { Client } from "pg";
import { DEFAULT_PARTITIONS, JetStreamAdapter, jetStreamNames } from "../../lib/streams";
import type { ReadingBatch } from "../../services/pipelines/contract";
import { NATS_URL, pollUntil, startCluster, type Cluster } from "../helpers/cluster";
import type { TestNode } from "../helpers/node";
import { createEdge, edgeBody, hierarchy, ingest, type Hierarchy } from "../e2e/pipelines-fixtures";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** The pipelines group's ack wait, set on its consumers before the service makes them: a killed consumer's batches come again this soon (the service's default is 30 s). */
const ACK_WAIT_MS = 3000;
/** Three hours before yesterday's midnight (UTC): the readings cross a day partition and none is in the future. */
const BASE = Math.floor(Date.now() / DAY) * DAY - DAY - 3 * HOUR;
const ROWS = 20_000;
const iso = (ms: number) => new Date(ms).toISOString();
const q = (from: number, to: number, extra = "") => `from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}${extra}`;

const namespace = `test-${randomBytes(4).toString("hex")}`;
const names = jetStreamNames(namespace, "readings");
let cluster: Cluster;
let pg: Client;
let nc: NatsConnection;
let jsm: JetStreamManager;
let h: Hierarchy;
let gw: { id: string; ingest_key: string };

type Reading = { monitor_id: string; tag_id: string; ts: number; value: number };

/** Sends the readings in requests of `size`, `parallel` at a time. */
async function send(readings: Reading[], size = 1000, parallel = 4): Promise<number> {
  const batches: Reading[][] = [];
  for (let i = 0; i < readings.length; i += size) batches.push(readings.slice(i, i + size));
  for (let i = 0; i < batches.length; i += parallel) {
    await Promise.all(
      batches.slice(i, i + parallel).map(async (b) => {
        const res = await ingest<{ accepted: number }>({ http: cluster.http } as TestNode, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, { readings: b });
        expect([res.status, res.body]).toEqual([200, expect.objectContaining({ accepted: b.length })]);
      }),
    );
  }
  return batches.length;
}

/** Readings stored, and readings folded into each rollup table. */
async function counts(): Promise<{ raw: number; minutes: number; hours: number }> {
  return (
    await pg.query(
      `SELECT (SELECT count(*) FROM pipelines.readings)::int AS raw,
              (SELECT coalesce(sum(n), 0) FROM pipelines.reading_minutes)::int AS minutes,
              (SELECT coalesce(sum(n), 0) FROM pipelines.reading_hours)::int AS hours`,
    )
  ).rows[0];
}

async function rolledUp(raw: number, timeoutMs = 30_000): Promise<void> {
  await pollUntil(
    async () => {
      const c = await counts();
      return c.raw === raw && c.minutes === raw && c.hours === raw;
    },
    timeoutMs,
    `${raw} readings stored and rolled up`,
    [cluster.process("pipelines")],
  );
}

/** Rollup rows that differ from the stored readings' aggregates (none when every batch was folded exactly once). */
async function rollupsOffRaw(): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const [table, size] of [
    ["reading_minutes", MIN],
    ["reading_hours", HOUR],
  ] as const) {
    const raw = `SELECT monitor_id, tag_id, t - t % ${size} AS start, count(*)::int AS n, round(sum(value)::numeric, 6) AS sum, min(value) AS min, max(value) AS max
                   FROM (SELECT monitor_id, tag_id, value, round(extract(epoch FROM ts) * 1000)::bigint AS t FROM pipelines.readings) r GROUP BY 1, 2, 3`;
    const rolled = `SELECT monitor_id, tag_id, start, n, round(sum::numeric, 6) AS sum, min, max FROM pipelines.${table}`;
    out[table] = (await pg.query(`(${rolled} EXCEPT ${raw}) UNION ALL (${raw} EXCEPT ${rolled})`)).rows;
  }
  return out;
}

/** Every pipelines partition consumer has acked all it was handed. */
async function consumersIdle(): Promise<boolean> {
  for (let k = 0; k < DEFAULT_PARTITIONS; k++) {
    const info = await jsm.consumers.info(names.stream, names.partitionDurable("pipelines", k));
    if (info.num_pending > 0 || info.num_ack_pending > 0) return false;
  }
  return true;
}

/** Deliveries the pipelines group made, redeliveries included. */
async function deliveries(): Promise<number> {
  let delivered = 0;
  for (let k = 0; k < DEFAULT_PARTITIONS; k++) delivered += (await jsm.consumers.info(names.stream, names.partitionDurable("pipelines", k))).delivered.consumer_seq;
  return delivered;
}

const messagesInStream = async (): Promise<number> => (await jsm.streams.info(names.stream)).state.messages;

beforeAll(async () => {
  // The pipelines group's consumers, made as the service makes them (the adapter's own subscribe)
  // but with a short ack wait; the service finds them and uses them as they are.
  const adapter = new JetStreamAdapter(NATS_URL, { namespace, maxDeliveries: 5, maxAgeS: 3600, partitions: DEFAULT_PARTITIONS }, console);
  await adapter.start();
  const sub = await adapter.subscribe(
    "readings",
    "pipelines",
    () => {
      throw new Error("the test's subscription handles nothing");
    },
    { ackWaitMs: ACK_WAIT_MS },
  );
  await sub.close();
  await adapter.stop();
  nc = await connect({ servers: NATS_URL });
  jsm = await nc.jetstreamManager();

  cluster = await startCluster({
    processes: [["api", "auth", "config"], ["pipelines"]],
    env: { NAMESPACE: namespace, STREAM_MAX_AGE_S: "3600" },
  });
  pg = new Client({ connectionString: cluster.db!.url });
  await pg.connect();
  h = await hierarchy({ http: cluster.http } as TestNode, "Clu");
  // The api node answers the probes once it knows pipelines; pipelines may not know config yet (503 meanwhile).
  let created: { id: string; ingest_key: string } | undefined;
  await pollUntil(
    async () => {
      created = await createEdge({ http: cluster.http } as TestNode, edgeBody(h, [h.pump.id, h.fan.id])).catch((err: Error) => {
        if (!err.message.includes(" 503 ")) throw err;
        return undefined;
      });
      return created !== undefined;
    },
    15_000,
    "the pipelines process to reach config",
    [cluster.process("pipelines")],
  );
  gw = created!;
}, 120_000);

afterAll(async () => {
  await pg?.end();
  await cluster?.stop();
  const adapter = new JetStreamAdapter(NATS_URL, { namespace, maxDeliveries: 5, maxAgeS: 60 }, console);
  await adapter.start();
  await adapter.destroy(["readings", "waveforms"]);
  await adapter.stop();
  await nc?.close();
}, 60_000);

describe("history and export with pipelines in a process of its own", () => {
  it("answers _history from the rollups the pipelines process folds, and _export's whole CSV over the bus", async () => {
    // Pressure every second for 20,000 s (crossing midnight), a spike of 99 at 12,345; flow every 10 s.
    const readings: Reading[] = [];
    for (let i = 0; i < ROWS; i++) {
      const ts = BASE + i * 1000;
      readings.push({ monitor_id: h.pump.id, tag_id: "pressure", ts, value: i === 12_345 ? 99 : Math.round(500 + 100 * Math.sin(i / 300)) / 100 });
      if (i % 10 === 0) readings.push({ monitor_id: h.pump.id, tag_id: "flow", ts, value: 100 + (i % 7) });
    }
    await send(readings);
    await rolledUp(readings.length);

    // Two-minute buckets from the minute rollups, hour buckets from the hour rollups; `to` on no minute.
    const from = BASE - 7 * MIN;
    const to = BASE + ROWS * 1000 + 13_000;
    for (const [points, bucket] of [
      [300, 2 * MIN],
      [10, HOUR],
    ]) {
      const res = await cluster.http<{ bucket_ms: number; points: { timestamp: number; value: number; min: number; max: number; count: number }[] }>(
        "GET",
        `/_cm/monitors/${h.pump.id}/_history?tag=Pressure&${q(from, to, `&points=${points}`)}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.bucket_ms).toBe(bucket);
      const want = await pg.query(
        `SELECT (t / $2) * $2 AS bucket, count(*)::int AS count, avg(value) AS value, min(value) AS min, max(value) AS max
           FROM (SELECT round(extract(epoch FROM ts) * 1000)::bigint AS t, value FROM pipelines.readings
                  WHERE monitor_id = $1 AND tag_id = 'pressure' AND ts >= to_timestamp($3::float8 / 1000) AND ts <= to_timestamp($4::float8 / 1000)) r
          GROUP BY 1 ORDER BY 1`,
        [h.pump.id, bucket, from, to],
      );
      expect(res.body.points.length).toBeLessThanOrEqual(points);
      expect(res.body.points.map((p) => [p.timestamp, p.count, p.min, p.max])).toEqual(
        want.rows.map((w: { bucket: string; count: number; min: number; max: number }) => [Math.max(Number(w.bucket), from), w.count, w.min, w.max]),
      );
      res.body.points.forEach((p, i) => expect(p.value).toBeCloseTo(want.rows[i].value, 9));
      expect(Math.max(...res.body.points.map((p) => p.max))).toBe(99);
    }

    const exported = await cluster.http<string>("GET", `/_cm/monitors/${h.pump.id}/_export?${q(BASE, BASE + ROWS * 1000)}`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-type")).toMatch(/^text\/csv/);
    const body = String(exported.body);
    expect(body.endsWith("\n")).toBe(true);
    const lines = body.slice(0, -1).split("\n");
    expect(lines[0]).toBe("timestamp,Pressure,Flow");
    const stored = await pg.query(
      `SELECT round(extract(epoch FROM ts) * 1000)::float8 AS ts, tag_id, value FROM pipelines.readings WHERE monitor_id = $1 ORDER BY ts, tag_id`,
      [h.pump.id],
    );
    const rows = new Map<number, string[]>();
    for (const r of stored.rows as { ts: number; tag_id: string; value: number }[]) {
      const row = rows.get(r.ts) ?? ["", ""];
      row[r.tag_id === "pressure" ? 0 : 1] = String(r.value);
      rows.set(r.ts, row);
    }
    expect(rows.size).toBe(ROWS);
    expect(lines.length - 1).toBe(ROWS);
    expect(lines.slice(1)).toEqual([...rows].map(([ts, v]) => `${iso(ts)},${v.join(",")}`));
  }, 60_000);

  it("folds each batch once when the pipelines process is killed holding unacked batches and started again", async () => {
    const before = (await counts()).raw;
    // The test holds the hour rollups: the first batch's rollup transaction claims its id, writes
    // its minutes and waits there, so the consumer holds a batch it cannot ack when it is killed
    // (one gateway's batches share a partition: the others wait behind it in the stream).
    const holder = new Client({ connectionString: cluster.db!.url });
    await holder.connect();
    try {
      await holder.query(`BEGIN`);
      await holder.query(`LOCK TABLE pipelines.reading_hours IN SHARE MODE`);
      const readings: Reading[] = Array.from({ length: 12_000 }, (_, i) => ({ monitor_id: h.fan.id, tag_id: "vib", ts: BASE + i * 1500, value: (i % 13) / 4 }));
      expect(await send(readings, 500, 6)).toBe(24);
      await pollUntil(
        async () =>
          (
            await pg.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query ILIKE '%reading_hours%'`,
            )
          ).rows[0].n > 0,
        10_000,
        "a rollup waiting on the hour rollups",
      );
      await cluster.process("pipelines").stop("SIGKILL");
    } finally {
      await holder.query(`COMMIT`);
      await holder.end();
    }
    // The dead process's transactions end without a commit: none of the new batches is claimed.
    await pollUntil(
      async () => (await pg.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE '%reading_hours%' AND state <> 'idle'`)).rows[0].n === 0,
      10_000,
      "the killed process's transactions to end",
    );
    const claimed = await pg.query(
      `SELECT count(*)::int AS n FROM pipelines.rolled_batches WHERE batch_id IN (SELECT DISTINCT batch_id FROM pipelines.readings WHERE monitor_id = $1)`,
      [h.fan.id],
    );
    expect(claimed.rows[0].n).toBe(0);
    expect((await counts()).raw).toBe(before + 12_000);

    cluster.process("pipelines").start();
    await cluster.waitReady();
    await rolledUp(before + 12_000);
    await pollUntil(consumersIdle, 15_000, "the pipelines consumers to ack everything");
    // The batch the killed consumer held came again.
    const delivered = await deliveries();
    expect(delivered).toBeGreaterThan(await messagesInStream());
    expect(await rollupsOffRaw()).toEqual({ reading_minutes: [], reading_hours: [] });
    const rolled = await pg.query(`SELECT (SELECT count(*) FROM pipelines.rolled_batches)::int AS claimed, (SELECT count(DISTINCT batch_id) FROM pipelines.readings)::int AS stored`);
    expect(rolled.rows[0].claimed).toBe(rolled.rows[0].stored);

    // A batch folded before, delivered once more (its ack lost): another message id, so the stream keeps it.
    const [row] = (await pg.query(`SELECT batch_id, site_id, pipeline_id FROM pipelines.readings WHERE monitor_id = $1 LIMIT 1`, [h.fan.id])).rows;
    const batch: ReadingBatch = {
      ...row,
      plant_id: h.plant,
      readings: (
        await pg.query(`SELECT monitor_id, tag_id, round(extract(epoch FROM ts) * 1000)::float8 AS ts, value FROM pipelines.readings WHERE batch_id = $1 ORDER BY idx`, [
          row.batch_id,
        ])
      ).rows,
    };
    const messages = await messagesInStream();
    const adapter = new JetStreamAdapter(NATS_URL, { namespace, maxDeliveries: 5, maxAgeS: 3600, partitions: DEFAULT_PARTITIONS }, console);
    await adapter.start();
    await adapter.publish("readings", [{ id: `${batch.batch_id}:again`, key: batch.pipeline_id, payload: JSON.stringify(batch) }]);
    await adapter.stop();
    expect(await messagesInStream()).toBe(messages + 1);
    await pollUntil(consumersIdle, 15_000, "the pipelines consumers to ack the batch sent again", [cluster.process("pipelines")]);
    expect(await deliveries()).toBe(delivered + 1);
    expect(await counts()).toEqual({ raw: before + 12_000, minutes: before + 12_000, hours: before + 12_000 });
    expect(await rollupsOffRaw()).toEqual({ reading_minutes: [], reading_hours: [] });
  }, 60_000);
});
