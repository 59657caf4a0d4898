/**
 * A full ingestion request (10,000 readings, UUID ids: 1.2 MB of JSON) in a process that runs the
 * api and pipelines over NATS with JetStream streams: its stream messages stay under JetStream's
 * 1 MB payload (STREAM_BATCH_READINGS per message), so the outbox drains and every reading
 * reaches its consumers. A single message that large would be refused by NATS on every try and
 * hold up the outbox behind it.
 */
import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { RAW_READINGS_ONLY, type TestNode } from "../helpers/node";
import { pollUntil, startCluster, type Cluster } from "../helpers/cluster";
import { createEdge, edgeBody, hierarchy, ingest } from "../e2e/pipelines-fixtures";
import { STREAM_BATCH_READINGS } from "../../services/pipelines/ingest";

let cluster: Cluster;
let pg: Client;

beforeAll(async () => {
  cluster = await startCluster({ processes: [["api", "auth", "config", "pipelines"]], env: { ...RAW_READINGS_ONLY, NAMESPACE: `test-${randomBytes(4).toString("hex")}` } });
  pg = new Client({ connectionString: cluster.db!.url });
  await pg.connect();
}, 120_000);

afterAll(async () => {
  await pg?.end();
  await cluster?.stop();
}, 60_000);

it("stores a 1.2 MB request as stream messages under 1 MB, all folded into the rollups", async () => {
  const t = { http: cluster.http } as TestNode;
  const h = await hierarchy(t, "Big");
  const gw = await createEdge(t, edgeBody(h, [h.pump.id]));
  const base = Date.now() - 6 * 3_600_000;
  const readings = Array.from({ length: 10_000 }, (_, i) => ({ monitor_id: h.pump.id, tag_id: i % 2 ? "flow" : "pressure", ts: base + i * 1000, value: i + 0.123456789 }));
  expect(Buffer.byteLength(JSON.stringify({ readings }))).toBeGreaterThan(1024 * 1024);
  const res = await ingest<{ accepted: number }>(t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, { readings });
  expect([res.status, res.body]).toEqual([200, expect.objectContaining({ accepted: 10_000 })]);
  await pollUntil(
    async () => (await pg.query(`SELECT coalesce(sum(n), 0)::int AS n FROM pipelines.reading_minutes`)).rows[0].n === 10_000,
    30_000,
    "the 10,000 readings folded by the rollup consumer",
    [cluster.process("api")],
  );
  const batches = await pg.query(`SELECT count(*)::int AS n FROM pipelines.readings GROUP BY batch_id`);
  expect(batches.rows.map((r: { n: number }) => r.n)).toEqual(Array(10_000 / STREAM_BATCH_READINGS).fill(STREAM_BATCH_READINGS));
}, 90_000);
