/**
 * The historian's job on its own timer (docs/architecture.md, "The historian"): with the default
 * HISTORY_COMPRESS_AFTER (1h), readings of two hours ago are compressed within a minute without
 * anyone asking, and the history answers them exactly as before.
 */
import { Client } from "pg";
import { startTestNode, type TestNode } from "../helpers/node";
import { createEdge, edgeBody, eventually, hierarchy, ingest } from "./pipelines-fixtures";

const HOUR = 3_600_000;

let t: TestNode;
let pg: Client;

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "pipelines"] });
  pg = new Client({ connectionString: t.db.url });
  await pg.connect();
}, 60_000);

afterAll(async () => {
  await pg?.end();
  await t?.stop();
});

it("compresses readings past HISTORY_COMPRESS_AFTER on its own, within a minute, and reads them back as sent", async () => {
  const h = await hierarchy(t, "HistorianJob");
  const gw = await createEdge(t, edgeBody(h, [h.pump.id]));
  const hour = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
  const readings = Array.from({ length: 360 }, (_, i) => ({ monitor_id: h.pump.id, tag_id: "pressure", ts: hour + i * 10_000 + 7, value: Math.round(1000 * (3 + Math.sin(i / 9))) / 1000 }));
  const res = await ingest<{ accepted: number }>(t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, { readings });
  expect(res.body).toEqual(expect.objectContaining({ accepted: 360 }));
  const compressed = await eventually(
    async () => (await pg.query(`SELECT (SELECT coalesce(sum(n), 0) FROM pipelines.chunks)::int AS chunks, (SELECT count(*) FROM pipelines.readings)::int AS raw`)).rows[0],
    (x: { chunks: number; raw: number }) => x.chunks === 360 && x.raw === 0,
    150,
    500,
  );
  expect(compressed).toEqual({ chunks: 360, raw: 0 });
  const q = `from=${encodeURIComponent(new Date(hour).toISOString())}&to=${encodeURIComponent(new Date(hour + HOUR - 1).toISOString())}`;
  const history = await t.http<{ bucket_ms: number; points: { timestamp: number; value: number }[] }>("GET", `/_cm/monitors/${h.pump.id}/_history?tag=Pressure&${q}`);
  expect(history.body.bucket_ms).toBe(0);
  expect(history.body.points.map((p) => [p.timestamp, p.value])).toEqual(readings.map((r) => [r.ts, r.value]));
}, 120_000);
