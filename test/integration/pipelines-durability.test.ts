/**
 * Durability of ingested readings, in the embedded default (PostgreSQL stream log) and in the
 * cluster's way (NATS transporter, JetStream): a consumer service stopped while readings come in
 * gets every reading exactly once by id when it is back; readings committed while the outbox
 * could not publish (a crash between the two) are published when it can; and the daily
 * retention job drops whole day partitions where every site allows it and deletes the rest row by row.
 */
import type { Service, ServiceSchema } from "moleculer";
import { Client } from "pg";
import { JetStreamAdapter } from "../../lib/streams";
import { StreamMixin } from "../../mixins/stream.mixin";
import { readingId, type ReadingBatch } from "../../services/pipelines/contract";
import { RAW_READINGS_ONLY, startTestNode, type TestNode } from "../helpers/node";
import { createEdge, edgeBody, eventually, hierarchy, ingest, type Hierarchy } from "../e2e/pipelines-fixtures";

const NATS_URL = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const DAY = 86400000;

/** A consumer as alerting, cm and ems are: a durable group on the readings stream, idempotent by reading id. */
function probeService(name: string, seen: Map<string, number>): ServiceSchema {
  return {
    name,
    mixins: [StreamMixin()],
    streams: {
      readings: {
        group: name,
        async handler(this: Service, batch: ReadingBatch) {
          batch.readings.forEach((_, i) => {
            const id = readingId(batch, i);
            seen.set(id, (seen.get(id) ?? 0) + 1);
          });
        },
      },
    },
  } as ServiceSchema;
}

describe.each([
  ["embedded (PostgreSQL stream log)", {}],
  ["NATS JetStream", { TRANSPORTER: NATS_URL }],
] as const)("%s", (_label, env) => {
  let t: TestNode;
  let h: Hierarchy;
  let gw: { id: string; ingest_key: string };
  let pg: Client;

  beforeAll(async () => {
    t = await startTestNode({ services: ["api", "auth", "config", "pipelines"], env: { ...RAW_READINGS_ONLY, ...env, STREAM_MAX_AGE_S: "3600" } });
    pg = new Client({ connectionString: t.db.url });
    await pg.connect();
    h = await hierarchy(t, "Dur");
    gw = await createEdge(t, edgeBody(h, [h.pump.id]));
  });
  afterAll(async () => {
    if ("TRANSPORTER" in env && t) {
      const js = new JetStreamAdapter(NATS_URL, { namespace: t.node.config.namespace, maxDeliveries: 5, maxAgeS: 60 }, console);
      await js.start();
      await js.destroy(["readings", "waveforms"]);
      await js.stop();
    }
    await pg?.end();
    await t?.stop();
  });

  /** Sends `batches` requests of `size` readings; returns the ids the stream will carry (from the table: batch and place). */
  async function send(batches: number, size: number, at = Date.now()): Promise<void> {
    for (let b = 0; b < batches; b++) {
      const readings = Array.from({ length: size }, (_, i) => ({ monitor_id: h.pump.id, tag_id: "pressure", ts: at - i * 1000, value: b * size + i }));
      const res = await ingest<{ accepted: number }>(t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, { readings });
      expect(res.body.accepted).toBe(size);
    }
  }

  async function storedIds(): Promise<string[]> {
    const rows = await pg.query(`SELECT batch_id || ':' || idx AS id FROM pipelines.readings WHERE pipeline_id = $1`, [gw.id]);
    return rows.rows.map((r: { id: string }) => r.id).sort();
  }

  it("a consumer stopped while readings are ingested gets every reading exactly once when it is back", async () => {
    const seen = new Map<string, number>();
    const broker = t.node.broker;
    let probe = await broker.createService(probeService("probe", seen));
    await broker.waitForServices(["probe"]);
    await send(3, 200);
    await eventually(async () => seen.size, (n) => n === 600, 200, 50);
    expect(seen.size).toBe(600);

    await broker.destroyService(probe);
    await send(4, 250);
    await new Promise((r) => setTimeout(r, 500));
    expect(seen.size).toBe(600);

    probe = await broker.createService(probeService("probe", seen));
    await eventually(async () => seen.size, (n) => n === 1600, 200, 50);
    await new Promise((r) => setTimeout(r, 500));
    const ids = await storedIds();
    expect(ids).toHaveLength(1600);
    expect([...seen.keys()].sort()).toEqual(ids);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    await broker.destroyService(probe);
  });

  it("readings committed while the outbox cannot publish reach the consumer once it can", async () => {
    const svc = t.node.broker.getLocalService("pipelines") as unknown as { streamOutbox: { stop(): Promise<void>; start(ms: number): void } };
    const seen = new Map<string, number>();
    // The same durable group: it has everything so far and gets only what comes next.
    const probe = await t.node.broker.createService(probeService("probe", seen));
    await svc.streamOutbox.stop();
    await send(2, 100);
    const outbox = await pg.query(`SELECT count(*)::int AS n FROM pipelines.stream_outbox`);
    expect(outbox.rows[0].n).toBe(2);
    await new Promise((r) => setTimeout(r, 500));
    expect(seen.size).toBe(0);
    svc.streamOutbox.start(1000);
    await eventually(async () => seen.size, (n) => n === 200, 200, 50);
    await new Promise((r) => setTimeout(r, 300));
    const stored = new Set(await storedIds());
    expect(seen.size).toBe(200);
    expect([...seen.keys()].every((id) => stored.has(id))).toBe(true);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect((await pg.query(`SELECT count(*)::int AS n FROM pipelines.stream_outbox`)).rows[0].n).toBe(0);
    await t.node.broker.destroyService(probe);
  });
});

describe("retention", () => {
  let t: TestNode;
  let pg: Client;

  beforeAll(async () => {
    t = await startTestNode({ services: ["api", "auth", "config", "pipelines"], env: { ...RAW_READINGS_ONLY } });
    pg = new Client({ connectionString: t.db.url });
    await pg.connect();
  });
  afterAll(async () => {
    await pg?.end();
    await t?.stop();
  });

  async function setRetention(site: string, days: number) {
    const res = await t.http("PUT", `/_config/sites/${site}`, { body: { location: "Lyon", retention_period: days } });
    expect(res.body).toBe("Site updated successfully");
  }

  it("drops day partitions every site is done with and deletes the rest per site", async () => {
    const a = await hierarchy(t, "RetA", 10);
    const b = await hierarchy(t, "RetB", 10);
    const gwA = await createEdge(t, edgeBody(a, [a.pump.id]));
    const gwB = await createEdge(t, edgeBody(b, [b.pump.id]));
    const now = Date.now();
    const put = async (g: { id: string; ingest_key: string }, monitor: string, ts: number[]) => {
      const res = await ingest<{ accepted: number }>(t, "POST", `/_ingest/pipelines/${g.id}/readings`, g.ingest_key, {
        readings: ts.map((x) => ({ monitor_id: monitor, tag_id: "pressure", ts: x, value: 1 })),
      });
      expect(res.body.accepted).toBe(ts.length);
    };
    await put(gwA, a.pump.id, [now - 9 * DAY, now - 5 * DAY, now - 3 * DAY - 60000, now - 3 * DAY + 60000, now]);
    await put(gwB, b.pump.id, [now - 9 * DAY, now - 5 * DAY, now - 3 * DAY - 60000, now]);
    const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10).replace(/-/g, "");

    await setRetention(a.site, 3);
    await setRetention(b.site, 4);
    const report = await t.node.broker.call<{ ran: boolean; dropped: string[]; deleted: number }, { force: boolean }>("pipelines.retention.run", { force: true });
    expect(report.ran).toBe(true);
    // B keeps 4 days, A 3: the days that ended more than 4 days ago go whole.
    expect(report.dropped).toEqual(expect.arrayContaining([dayOf(now - 9 * DAY), dayOf(now - 5 * DAY)]));
    expect(report.dropped).not.toContain(dayOf(now - 3 * DAY));
    const left = await pg.query(
      `SELECT site_id, (extract(epoch from ts) * 1000)::bigint AS ts FROM pipelines.readings ORDER BY site_id, ts`,
    );
    const bySite = (site: string) => left.rows.filter((r: { site_id: string }) => r.site_id === site).map((r: { ts: string }) => Number(r.ts));
    expect(bySite(a.site)).toEqual([now - 3 * DAY + 60000, now]);
    expect(bySite(b.site)).toEqual([now - 3 * DAY - 60000, now]);
    const partitions = await pg.query(`SELECT relname FROM pg_class WHERE relname = $1`, [`readings_${dayOf(now - 9 * DAY)}`]);
    expect(partitions.rows).toEqual([]);

    // Claimed once a day: an unforced run right after does nothing.
    expect(await t.node.broker.call("pipelines.retention.run", { force: false })).toEqual({ ran: false, dropped: [], deleted: 0 });
  });
});
