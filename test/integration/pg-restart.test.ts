/**
 * PostgreSQL restart under load (docs/operations.md, "Failure modes"): every service in one process
 * (`bin/start.ts`, as production runs a node) over NATS, on a PostgreSQL of the test's own.
 * Gateways send readings and a person writes and reads configuration, without pause, while the
 * database is killed (kill -9 of the postmaster), started again, stopped cleanly
 * (`pg_ctl stop -m fast`) and started again. No service is restarted by hand.
 *
 * What a user checks: during an outage every request is answered quickly (200 or 503
 * `Service unavailable`, never a hang, never a 500); once PostgreSQL is back each kind of request
 * answers 200 again within a bounded time; every reading answered 200 is stored, and reaches the
 * stream's consumers (energy's own copy of each energy reading); every site answered 200 exists.
 */
import { connect, type NatsConnection } from "nats";
import { Client } from "pg";
import { DEFAULT_PARTITIONS, jetStreamNames, partitionOf } from "../../lib/streams";
import { freePort, NATS_URL, pollUntil, startCluster, type Cluster } from "../helpers/cluster";
import { RAW_READINGS_ONLY, ADMIN, basic, type HttpResult } from "../helpers/node";
import { PgServer } from "../helpers/pg-server";
import { makePlace, type Place } from "../e2e/alerting-fixtures";
import { modbusSettings, modbusTag } from "../e2e/pipelines-fixtures";

jest.setTimeout(150_000);

/** How long each outage lasts: longer than the ingest key cache (10 s) and the stream's first redeliveries. */
const OUTAGE_MS = 12_000;
/** The longest a request may take while the database is away: the client learns of the outage at once, it does not wait out a timeout. */
const MAX_WAIT_MS = 3000;
/** The longest after PostgreSQL accepts connections again until each kind of request answers 200. */
const MAX_RECOVERY_MS = 10_000;
const READINGS_PER_BATCH = 100;

type Kind = "ingest" | "write" | "read";

interface Outcome {
  kind: Kind;
  start: number;
  ms: number;
  status: number;
  message?: string;
}

let pg: PgServer;
let cluster: Cluster;
let healthPort: number;

beforeAll(async () => {
  pg = await PgServer.create();
  healthPort = await freePort();
  // Two deliveries before a dead letter: an outage outlasts them, as a real one outlasts the default five (15 s).
  cluster = await startCluster({ processes: [[]], databaseUrl: pg.url, env: { ...RAW_READINGS_ONLY, HEALTH_PORT: String(healthPort), STREAM_MAX_DELIVERIES: "2" } });
}, 120_000);

/** What the test opened beside the cluster, closed however it ends. */
const afterCleanup: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const close of afterCleanup) await close().catch(() => undefined);
  await cluster?.stop();
  await pg?.destroy();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function sql<T>(text: string, params: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: pg.url });
  await c.connect();
  try {
    return (await c.query(text, params)).rows as T[];
  } finally {
    await c.end();
  }
}

async function ok<T>(res: Promise<HttpResult>, what: string): Promise<T> {
  const r = await res;
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as T;
}

/** An energy meter beside the place's condition monitor, and a gateway with both registered. */
async function gatewayFor(place: Place): Promise<{ id: string; key: string; meter: string }> {
  const meter = await ok<{ id: string }>(
    cluster.http("POST", "/_config/monitors", {
      body: {
        monitor_name: "Incomer",
        monitor_type: "energy-monitor",
        function_id: place.function_id,
        tags: [{ tag_id: "kwh", tag_name: "Energy", tag_desc: "active energy", tag_unit: "kWh", thresholds: {} }],
      },
    }),
    "meter",
  );
  const gw = await ok<{ id: string; ingest_key: string }>(
    cluster.http("POST", "/_config/pipelines/edge-server", {
      body: {
        pipeline_name: "Restart gateway",
        function_id: place.function_id,
        data_type: "Process",
        data_source: "Edge IOT Gateway",
        data_source_subtype: "Modbus RTU",
        settings: modbusSettings(),
        gateway_firmware: { current_version: "2.1.0", previous_version: "2.0.0" },
        tags: [modbusTag],
        registration: [
          { monitor_id: place.monitor_id, slave_id: "1", registered_by_asset: false },
          { monitor_id: meter.id, slave_id: "2", registered_by_asset: false },
        ],
      },
    }),
    "gateway",
  );
  return { id: gw.id, key: gw.ingest_key, meter: meter.id };
}

/**
 * A readings batch as the pipelines publish it, put on the stream directly: one the outbox
 * published a moment before PostgreSQL went away, which its consumers then cannot store.
 */
async function publishBatch(nc: NatsConnection, place: Place, pipeline_id: string, readings: { monitor_id: string; tag_id: string; ts: number; value: number }[]): Promise<void> {
  const names = jetStreamNames(cluster.namespace, "readings");
  const batch_id = `pg-restart-${readings[0]!.ts}`;
  const batch = { batch_id, pipeline_id, site_id: place.site_id, plant_id: place.plant_id, readings };
  await nc.jetstream().publish(names.partitionSubject(partitionOf(pipeline_id, DEFAULT_PARTITIONS)), new TextEncoder().encode(JSON.stringify(batch)), { msgID: batch_id });
}

/** One request, timed; a request that hangs is cut at 15 s and counted as such (status 0). */
async function timed(kind: Kind, outcomes: Outcome[], send: (signal: AbortSignal) => Promise<Response>): Promise<Outcome> {
  const start = Date.now();
  let outcome: Outcome;
  try {
    const res = await send(AbortSignal.timeout(15_000));
    const text = await res.text();
    let message: string | undefined;
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message;
    } catch {
      message = text.slice(0, 100);
    }
    outcome = { kind, start, ms: Date.now() - start, status: res.status, message };
  } catch (err) {
    outcome = { kind, start, ms: Date.now() - start, status: 0, message: String(err) };
  }
  outcomes.push(outcome);
  return outcome;
}

describe("PostgreSQL stopped and started under load", () => {
  it("answers 503 quickly while it is away, loses nothing answered 200, and recovers by itself", async () => {
    const place = await makePlace(cluster.http, "restart");
    const gw = await gatewayFor(place);
    const base = cluster.baseUrl;
    const admin = { authorization: basic(ADMIN), "content-type": "application/json" };

    const outcomes: Outcome[] = [];
    /** Readings answered 200, by ts (unique per reading), and the sites answered 200. */
    const acceptedTs: number[] = [];
    let acceptedMeter = 0;
    const sitesCreated: string[] = [];
    let seq = 0;
    const t0 = Date.now() - 3_600_000;
    let running = true;

    const ingestLoop = async () => {
      while (running) {
        const readings = Array.from({ length: READINGS_PER_BATCH }, (_, i) => {
          const ts = t0 + seq++;
          return i % 2 === 0 ? { monitor_id: gw.meter, tag_id: "kwh", ts, value: ts % 1000 } : { monitor_id: place.monitor_id, tag_id: "temp", ts, value: 40 };
        });
        const o = await timed("ingest", outcomes, (signal) =>
          fetch(`${base}/_ingest/pipelines/${gw.id}/readings`, {
            method: "POST",
            headers: { authorization: `Bearer ${gw.key}`, "content-type": "application/json" },
            body: JSON.stringify({ readings }),
            signal,
          }),
        );
        if (o.status === 200) {
          for (const r of readings) acceptedTs.push(r.ts);
          acceptedMeter += readings.filter((r) => r.monitor_id === gw.meter).length;
        } else await sleep(100);
      }
    };
    const writeLoop = async () => {
      let n = 0;
      while (running) {
        let id: string | undefined;
        const body = JSON.stringify({ site_name: `Restart site ${++n}`, location: "Pune", longitude: "73.85", timezone: "Asia/Kolkata", edge_firmware: { current_version: "1.0.0" } });
        const o = await timed("write", outcomes, async (signal) => {
          const res = await fetch(`${base}/_config/sites`, { method: "POST", headers: admin, body, signal });
          if (res.status !== 200) return res;
          id = ((await res.clone().json()) as { id: string }).id;
          return res;
        });
        if (o.status === 200 && id) sitesCreated.push(id);
        await sleep(o.status === 200 ? 50 : 100);
      }
    };
    const readLoop = async () => {
      while (running) {
        const o = await timed("read", outcomes, (signal) => fetch(`${base}/_config/pipelines/_list?function_id=${place.function_id}`, { headers: admin, signal }));
        await sleep(o.status === 200 ? 50 : 100);
      }
    };
    const nc = await connect({ servers: NATS_URL });
    afterCleanup.push(() => nc.close());
    const loops = [ingestLoop(), ingestLoop(), ingestLoop(), writeLoop(), readLoop()];

    const ready = async () => (await fetch(`http://127.0.0.1:${healthPort}/ready`)).status;
    const outages: { how: string; down: number; up: number; readyDuring: number; recoveredMs: Record<Kind, number> }[] = [];

    const outage = async (how: string, stop: () => Promise<void>, during?: () => Promise<void>) => {
      const down = Date.now();
      await stop();
      await during?.();
      await sleep(OUTAGE_MS / 2);
      const readyDuring = await ready();
      await sleep(OUTAGE_MS / 2);
      await pg.start();
      const up = Date.now();
      const recoveredMs = {} as Record<Kind, number>;
      await pollUntil(
        async () => {
          for (const kind of ["ingest", "write", "read"] as Kind[]) {
            const first = outcomes.find((o) => o.kind === kind && o.start >= up && o.status === 200);
            if (first) recoveredMs[kind] = first.start + first.ms - up;
          }
          return Object.keys(recoveredMs).length === 3;
        },
        30_000,
        `every kind of request to answer 200 after PostgreSQL came back (${how})`,
        [cluster.process("api")],
      );
      outages.push({ how, down, up, readyDuring, recoveredMs });
    };

    // During the clean stop, a batch reaches the consumers while they cannot store it (its readings are older than the loops').
    const injected = Array.from({ length: 50 }, (_, i) => ({ monitor_id: gw.meter, tag_id: "kwh", ts: t0 - 600_000 + i, value: i }));
    try {
      await sleep(3000);
      await outage("kill -9", () => pg.killHard());
      await sleep(3000);
      await outage("pg_ctl stop -m fast", () => pg.stopFast(), () => publishBatch(nc, place, gw.id, injected));
      await sleep(2000);
    } finally {
      running = false;
      await Promise.all(loops);
    }

    // Everything answered 200 reached the stream's consumers: the outbox drained, energy's copy complete.
    await pollUntil(async () => (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM pipelines.stream_outbox`))[0]!.n === 0, 30_000, "the outbox to drain");
    const storedTs = new Set(
      (await sql<{ ts: string }>(`SELECT (extract(epoch from ts) * 1000)::bigint AS ts FROM pipelines.readings WHERE pipeline_id = $1`, [gw.id])).map((r) => Number(r.ts)),
    );
    const lost = acceptedTs.filter((ts) => !storedTs.has(ts));
    let emsStored = 0;
    let emsInjected = 0;
    await pollUntil(
      async () => {
        const [counts] = await sql<{ n: number; injected: number }>(
          `SELECT count(*) FILTER (WHERE ts >= $2)::int AS n, count(*) FILTER (WHERE ts < $2)::int AS injected FROM ems.readings WHERE monitor_id = $1`,
          [gw.meter, t0],
        );
        emsStored = counts!.n;
        emsInjected = counts!.injected;
        return emsStored >= acceptedMeter && emsInjected === injected.length;
      },
      45_000,
      "energy's consumer to store every accepted energy reading",
    ).catch(() => undefined);
    const sites = new Set((await sql<{ site_id: string }>(`SELECT site_id::text FROM config.sites`)).map((r) => r.site_id));

    // Nothing given up on: no consumer group dead-lettered a readings batch.
    const jsm = await nc.jetstreamManager();
    const deadLetters = (await jsm.streams.info(jetStreamNames(cluster.namespace, "readings").dlqStream).catch(() => undefined))?.state.messages ?? 0;

    const during = outcomes.filter((o) => outages.some((x) => o.start >= x.down && o.start < x.up));
    // Those under way when PostgreSQL went too: each must have been answered within the bound.
    const affected = outcomes.filter((o) => outages.some((x) => o.start < x.up && o.start + o.ms >= x.down));
    const longest = Math.max(...affected.map((o) => o.ms));
    const statuses = (list: Outcome[]) => list.reduce<Record<string, number>>((acc, o) => ({ ...acc, [`${o.status} ${o.message ?? ""}`.trim()]: (acc[`${o.status} ${o.message ?? ""}`.trim()] ?? 0) + 1 }), {});
    const figures = {
      requests: outcomes.length,
      duringOutages: statuses(during),
      otherwise: statuses(outcomes.filter((o) => !during.includes(o))),
      longestWaitDuringOutageMs: longest,
      outages: outages.map((x) => ({ how: x.how, outageMs: x.up - x.down, readyDuring: x.readyDuring, recoveredMs: x.recoveredMs })),
      readingsAccepted: acceptedTs.length,
      readingsStored: storedTs.size,
      readingsLost: lost.length,
      energyAccepted: acceptedMeter,
      energyStoredByConsumer: emsStored,
      publishedDuringOutage: injected.length,
      storedAfterOutage: emsInjected,
      deadLetters,
      sitesAnswered200: sitesCreated.length,
      sitesMissing: sitesCreated.filter((id) => !sites.has(id)).length,
    };
    console.log(`pg-restart figures: ${JSON.stringify(figures, null, 2)}`);

    // Each outage was met: requests answered 503 while it lasted, and /ready said so.
    for (const x of outages) {
      const inside = outcomes.filter((o) => o.start >= x.down + 1000 && o.start < x.up);
      expect(inside.filter((o) => o.status === 503).length).toBeGreaterThan(0);
      expect(x.readyDuring).toBe(503);
      for (const kind of ["ingest", "write", "read"] as Kind[]) expect(x.recoveredMs[kind]).toBeLessThan(MAX_RECOVERY_MS);
    }
    // No hang and no fault: 200 or 503 `Service unavailable`, each within the bound.
    expect(longest).toBeLessThan(MAX_WAIT_MS);
    expect(outcomes.filter((o) => o.status !== 200 && !(o.status === 503 && o.message === "Service unavailable"))).toEqual([]);
    // Nothing answered 200 lost.
    expect(acceptedTs.length).toBeGreaterThan(0);
    expect(lost).toEqual([]);
    expect(emsStored).toBe(acceptedMeter);
    expect(emsInjected).toBe(injected.length);
    expect(deadLetters).toBe(0);
    expect(sitesCreated.length).toBeGreaterThan(0);
    expect(figures.sitesMissing).toBe(0);
    expect(await ready()).toBe(200);
  });
});
