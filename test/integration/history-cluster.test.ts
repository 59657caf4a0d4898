/**
 * History and export across processes over the machine's NATS (JetStream streams): the gateway
 * (with auth and config) in one process, pipelines in another.
 * - Readings ingested through the API are folded into rollups as they are stored; `_history`
 *   answers buckets equal to the stored readings' aggregates, and `_export`'s CSV, a Moleculer
 *   stream crossing the bus, arrives whole and equal to the stored readings.
 * - The pipelines process killed (SIGKILL) with ingestion requests in flight (their transactions,
 *   half done, wait on a lock the test holds) and started again: the requests not answered stored
 *   nothing, neither readings nor rollups; sent again, as a gateway does, they are stored once,
 *   and the rollups equal the raw readings' aggregates.
 */
import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { JetStreamAdapter } from "../../lib/streams";
import { NATS_URL, pollUntil, startCluster, type Cluster } from "../helpers/cluster";
import { RAW_READINGS_ONLY, type TestNode } from "../helpers/node";
import { createEdge, edgeBody, hierarchy, ingest, type Hierarchy } from "../e2e/pipelines-fixtures";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** Three hours before yesterday's midnight (UTC): the readings cross a day partition and none is in the future. */
const BASE = Math.floor(Date.now() / DAY) * DAY - DAY - 3 * HOUR;
const ROWS = 20_000;
const iso = (ms: number) => new Date(ms).toISOString();
const q = (from: number, to: number, extra = "") => `from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}${extra}`;

const namespace = `test-${randomBytes(4).toString("hex")}`;
let cluster: Cluster;
let pg: Client;
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

beforeAll(async () => {
  cluster = await startCluster({
    processes: [["api", "auth", "config"], ["pipelines"]],
    env: { ...RAW_READINGS_ONLY, NAMESPACE: namespace, STREAM_MAX_AGE_S: "3600" },
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

  it("stores each request's readings and rollups together or not at all when the pipelines process is killed mid-request", async () => {
    const before = (await counts()).raw;
    const readings: Reading[] = Array.from({ length: 12_000 }, (_, i) => ({ monitor_id: h.fan.id, tag_id: "vib", ts: BASE + i * 1500, value: (i % 13) / 4 }));
    const requests: Reading[][] = [];
    for (let i = 0; i < readings.length; i += 500) requests.push(readings.slice(i, i + 500));
    const post = (b: Reading[]) =>
      ingest<{ accepted: number }>({ http: cluster.http } as TestNode, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, { readings: b }).then(
        (res) => res.status,
        () => 0,
      );
    // The test holds the rollups' staging table: the requests' transactions store their readings and wait there.
    const holder = new Client({ connectionString: cluster.db!.url });
    await holder.connect();
    let answered: number[];
    try {
      await holder.query(`BEGIN`);
      await holder.query(`LOCK TABLE pipelines.rollup_pending IN SHARE MODE`);
      const inFlight = requests.slice(0, 6).map(post);
      await pollUntil(
        async () =>
          (
            await pg.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND query ILIKE '%INSERT INTO readings%'`,
            )
          ).rows[0].n > 0,
        10_000,
        "an ingestion waiting on the rollups' staging table",
      );
      await cluster.process("pipelines").stop("SIGKILL");
      answered = await Promise.all(inFlight);
    } finally {
      await holder.query(`COMMIT`);
      await holder.end();
    }
    // None was answered 200, and none stored anything: a dead process's transactions end without a commit.
    expect(answered.filter((status) => status === 200)).toEqual([]);
    await pollUntil(
      async () => (await pg.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE '%INSERT INTO readings%' AND state <> 'idle'`)).rows[0].n === 0,
      10_000,
      "the killed process's transactions to end",
    );
    expect(await counts()).toEqual({ raw: before, minutes: before, hours: before });

    // The gateway sends them again, and the rest.
    cluster.process("pipelines").start();
    await cluster.waitReady();
    await pollUntil(async () => (await post(requests[0])) === 200, 15_000, "the pipelines process to take readings again", [cluster.process("pipelines")]);
    expect(await send(requests.slice(1).flat(), 500, 6)).toBe(23);
    await rolledUp(before + 12_000);
    expect(await rollupsOffRaw()).toEqual({ reading_minutes: [], reading_hours: [] });
  }, 60_000);
});
