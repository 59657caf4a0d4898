/**
 * A 3-node NATS JetStream cluster as the bus (docs/operations.md, "The NATS cluster"):
 * api+auth+config, pipelines, alerting and notifier each in a process of its own, TRANSPORTER
 * listing the three nodes, STREAM_REPLICAS=3. A gateway posts readings without pause (an
 * Idempotency-Key per batch, the same batch again after a failure, as a real gateway does), in
 * cycles that cross an alert threshold. One NATS node is killed (SIGKILL), started again, then
 * another is killed. No service is restarted by hand.
 *
 * What a user checks: ingestion answers 200 again within 5 s of each kill; every batch answered
 * 200 is stored exactly once; each hot cycle opens its alert exactly once. And STREAM_REPLICAS:
 * a stream made with another number of replicas is scaled to it at start; where it cannot be
 * (a single server), that is said once and the stream goes on as it is.
 */
import { execFileSync } from "node:child_process";
import { connect, type NatsConnection } from "nats";
import { Client } from "pg";
import { JetStreamAdapter, jetStreamNames } from "../../lib/streams";
import { NATS_URL, pollUntil, startCluster, type Cluster, type ServiceProcess } from "../helpers/cluster";
import { RAW_READINGS_ONLY } from "../helpers/node";
import { startNatsCluster, type NatsCluster } from "../helpers/nats-cluster";
import { gatewayBody, makePlace, watcherBody, type Place } from "../e2e/alerting-fixtures";

jest.setTimeout(300_000);

/** The longest a gateway may go without a 200 after a NATS node dies. */
const MAX_RECOVERY_MS = 5000;
/** A cycle of batches: the first HOT of them are above the threshold, the rest below it. */
const CYCLE = 12;
const HOT = 4;
const READINGS_PER_BATCH = 10;
/** A gateway's own patience with one request. */
const GATEWAY_TIMEOUT_MS = 15_000;

let nats: NatsCluster;
let cluster: Cluster;
let pg: Client;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNatsCluster({ size: 3 });
  cluster = await startCluster({
    processes: [["api", "auth", "config"], ["pipelines"], ["alerting"], ["notifier"]],
    env: { ...RAW_READINGS_ONLY, TRANSPORTER: nats.url, STREAM_REPLICAS: "3" },
  });
  pg = new Client({ connectionString: cluster.db!.url });
  await pg.connect();
  nc = await connect({ servers: nats.urls, maxReconnectAttempts: -1 });
}, 180_000);

afterAll(async () => {
  await nc?.close().catch(() => undefined);
  await pg?.end();
  await cluster?.stop();
  await nats?.stop();
}, 60_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  batch: number;
  start: number;
  end: number;
  status: number;
}

/** The node (index into nats.urls) each server name belongs to, asked of each node itself. */
async function nodeIndexByName(): Promise<Map<string, number>> {
  const byName = new Map<string, number>();
  for (const [i, url] of nats.urls.entries()) {
    const c = await connect({ servers: url, maxReconnectAttempts: 0 });
    byName.set(c.info!.server_name, i);
    await c.close();
  }
  return byName;
}

/** The NATS client ports a process holds connections to (ss shows a process's sockets to its user). */
function connectedPorts(proc: ServiceProcess): Set<number> {
  const out = execFileSync("ss", ["-tnpH", "state", "established"], { encoding: "utf8" });
  const ports = new Set<number>();
  for (const line of out.split("\n")) {
    if (!line.includes(`pid=${proc.pid},`)) continue;
    const peer = line.trim().split(/\s+/)[3] ?? "";
    ports.add(Number(peer.slice(peer.lastIndexOf(":") + 1)));
  }
  return ports;
}

const portOf = (url: string): number => Number(url.slice(url.lastIndexOf(":") + 1));

describe("a 3-node NATS JetStream cluster as the bus", () => {
  it("keeps ingestion and alerting going through the death of one node, then another", async () => {
    const services = ["api", "pipelines", "alerting", "notifier"].map((s) => cluster.process(s));
    const pids = services.map((p) => p.pid);
    const place: Place = await makePlace(cluster.http, "natsc");
    // The api answers once it knows every service, but pipelines and alerting may not yet know
    // config's (`Service 'config.functions.resolve' is not registered`: 503, nothing done): a caller tries again.
    const until200 = async <T>(what: string, send: () => Promise<{ status: number; body: unknown }>): Promise<T> => {
      let last = { status: 0, body: undefined as unknown };
      await pollUntil(async () => (last = await send()).status !== 503, 30_000, what, services);
      if (last.status !== 200) throw new Error(`${what}: ${last.status} ${JSON.stringify(last.body)}`);
      return last.body as T;
    };
    const gw = await until200<{ id: string; ingest_key: string }>("the gateway", () =>
      cluster.http("POST", "/_config/pipelines/edge-server", { body: gatewayBody(place, "NATS cluster gateway") }),
    );
    const watcher = watcherBody(place, gw.id, { watcher_name: "NATS cluster watch" }, { minimum_duration: "1s" });
    await until200("the watcher", () => cluster.http("POST", "/_alerting/watchers", { body: watcher }));

    const names = jetStreamNames(cluster.namespace, "readings");
    const jsm = await nc.jetstreamManager();
    const byName = await nodeIndexByName();

    // The gateway: batch b carries readings b*1000 .. b*1000+450 ms after t0, hot or cold by its place in the cycle.
    const t0 = Date.now() - 3_600_000;
    const outcomes: Outcome[] = [];
    const accepted: number[] = [];
    let stopAfterCycle = false;
    let batch = 0;
    const gateway = (async () => {
      for (;;) {
        if (stopAfterCycle && batch % CYCLE === 0) return;
        const hot = batch % CYCLE < HOT;
        const body = JSON.stringify({
          readings: Array.from({ length: READINGS_PER_BATCH }, (_, i) => ({
            monitor_id: place.monitor_id,
            tag_id: "temp",
            ts: t0 + batch * 1000 + i * 50,
            value: hot ? 90 : 20,
          })),
        });
        const key = `natsc-${cluster.namespace}-${batch}`;
        // The same batch under the same key until it is answered 200.
        for (;;) {
          const start = Date.now();
          let status = 0;
          try {
            const res = await fetch(`${cluster.baseUrl}/_ingest/pipelines/${gw.id}/readings`, {
              method: "POST",
              headers: { authorization: `Bearer ${gw.ingest_key}`, "content-type": "application/json", "idempotency-key": key },
              body,
              signal: AbortSignal.timeout(GATEWAY_TIMEOUT_MS),
            });
            status = res.status;
            await res.text();
          } catch {
            status = 0;
          }
          outcomes.push({ batch, start, end: Date.now(), status });
          if (status === 200) break;
          await sleep(100);
        }
        accepted.push(batch);
        batch++;
      }
    })();

    const alertsOpened = async (): Promise<number> =>
      (await pg.query(`SELECT count(*)::int AS n FROM alerting.alerts WHERE trigger_id = 't1' AND is_hidden = 0`)).rows[0].n as number;

    const kills: { node: number; why: string; at: number; recoveredMs: number }[] = [];
    let lastKilled = -1;
    /** Kills node i; resolves once a request sent after the kill was answered 200. */
    const kill = async (node: number, why: string) => {
      const at = Date.now();
      await nats.kill(node);
      let recoveredMs = Infinity;
      await pollUntil(
        async () => {
          const first = outcomes.find((o) => o.start >= at && o.status === 200);
          if (first) recoveredMs = first.end - at;
          return !!first;
        },
        60_000,
        `a 200 after NATS node ${node} died`,
        services,
      );
      kills.push({ node, why, at, recoveredMs });
    };
    const streamLeader = async (): Promise<number | undefined> => {
      const info = await jsm.streams.info(names.stream);
      return info.cluster?.leader === undefined ? undefined : byName.get(info.cluster.leader);
    };

    try {
      // The cluster works before anything dies: an alert opened, the stream on three nodes.
      await pollUntil(async () => (await alertsOpened()) >= 1, 60_000, "the first alert", services);
      const info = await jsm.streams.info(names.stream);
      expect(info.config.num_replicas).toBe(3);
      expect(info.cluster?.replicas).toHaveLength(2);
      expect((await jsm.streams.info(names.dlqStream)).config.num_replicas).toBe(3);

      // First the readings stream's leader.
      const first = (await streamLeader()) ?? 0;
      await kill(first, "the readings stream's leader");
      await sleep(8000);
      await nats.restart(first);
      await nats.ready();
      await sleep(5000);

      // Then a node the api is connected to (other than the first), else the stream's leader, else the next one.
      const apiPorts = connectedPorts(cluster.process("api"));
      const apiNode = nats.urls.findIndex((u, i) => i !== first && apiPorts.has(portOf(u)));
      const leader = await streamLeader().catch(() => undefined);
      const [second, why] =
        apiNode >= 0 ? [apiNode, "a node the api is connected to"] : leader !== undefined && leader !== first ? [leader, "the readings stream's leader"] : [(first + 1) % 3, "another node"];
      await kill(second, why);
      lastKilled = second;
      await sleep(8000);
    } finally {
      stopAfterCycle = true;
      await gateway;
    }

    const cycles = accepted.length / CYCLE;
    // Every accepted batch reaches the database once, and alerting sees every hot cycle.
    await pollUntil(async () => (await alertsOpened()) >= cycles, 60_000, `${cycles} alerts`, services);
    await pollUntil(async () => (await pg.query(`SELECT count(*)::int AS n FROM pipelines.stream_outbox`)).rows[0].n === 0, 30_000, "the outbox to drain", services);
    await sleep(3000);
    const stored = (
      await pg.query(`SELECT count(*)::int AS n, count(DISTINCT ts)::int AS distinct_ts FROM pipelines.readings WHERE pipeline_id = $1`, [gw.id])
    ).rows[0] as { n: number; distinct_ts: number };
    const perBatch = (
      await pg.query(
        `SELECT ((extract(epoch from ts) * 1000)::bigint - $2::bigint) / 1000 AS batch, count(*)::int AS n FROM pipelines.readings WHERE pipeline_id = $1 GROUP BY 1`,
        [gw.id, t0],
      )
    ).rows.map((r: { batch: string; n: number }) => [Number(r.batch), r.n]);
    const alerts = (await pg.query(`SELECT start_ts FROM alerting.alerts WHERE trigger_id = 't1' AND is_hidden = 0 ORDER BY start_ts`)).rows.map(
      (r: { start_ts: string }) => Number(r.start_ts),
    );

    // The longest time without a 200, over the whole run and after each kill.
    const ok = outcomes.filter((o) => o.status === 200);
    let longestGapMs = 0;
    for (let i = 1; i < ok.length; i++) longestGapMs = Math.max(longestGapMs, ok[i]!.end - ok[i - 1]!.end);
    const figures = {
      requests: outcomes.length,
      failed: outcomes.filter((o) => o.status !== 200).reduce<Record<number, number>>((acc, o) => ({ ...acc, [o.status]: (acc[o.status] ?? 0) + 1 }), {}),
      batchesAnswered200: accepted.length,
      readingsAccepted: accepted.length * READINGS_PER_BATCH,
      readingsStored: stored.n,
      distinctReadingsStored: stored.distinct_ts,
      cycles,
      alertsOpened: alerts.length,
      kills: kills.map((k) => ({ node: k.node, why: k.why, recoveredMs: k.recoveredMs })),
      longestGapMs,
      // Calls lost as a process's NATS connection moved to another node, sent again (lib/failfast.ts).
      callsSentAgain: services.map((p) => [...p.output().matchAll(/(\d+) call\(s\) to '[^']+' were lost/g)].reduce((n, m) => n + Number(m[1]), 0)),
    };
    console.log(`nats-cluster figures: ${JSON.stringify(figures, null, 2)}`);

    // Ingestion answered 200 again within the bound after each kill.
    expect(kills).toHaveLength(2);
    for (const k of kills) expect(k.recoveredMs).toBeLessThan(MAX_RECOVERY_MS);
    expect(longestGapMs).toBeLessThan(MAX_RECOVERY_MS);
    // Every batch answered 200 stored exactly once.
    expect(accepted.length).toBeGreaterThan(3 * CYCLE);
    expect(stored.n).toBe(accepted.length * READINGS_PER_BATCH);
    expect(stored.distinct_ts).toBe(stored.n);
    expect(perBatch.sort((a, b) => a[0]! - b[0]!)).toEqual(accepted.map((b) => [b, READINGS_PER_BATCH]));
    // Each hot cycle opened its alert once, from its first hot reading.
    expect(alerts).toEqual(Array.from({ length: cycles }, (_, c) => t0 + c * CYCLE * 1000));
    // No service restarted by hand, none died.
    expect(services.map((p) => p.pid)).toEqual(pids);
    for (const p of services) expect(p.running).toBe(true);

    // All three nodes again, for what follows.
    await nats.restart(lastKilled);
    await nats.ready();
  });
});

describe("STREAM_REPLICAS", () => {
  const settings = (namespace: string, replicas: number) => ({ namespace, maxDeliveries: 5, maxAgeS: 3600, replicas });
  const logger = () => {
    const warnings: string[] = [];
    return { warnings, warn: (...args: unknown[]) => void warnings.push(args.map(String).join(" ")), error: () => undefined };
  };
  let seq = 0;
  const namespace = () => `test-replicas-${Date.now().toString(36)}-${++seq}`;

  /** Publishes one message, again while the stream has no leader (it moves as it is scaled); true once stored. */
  const publish = (a: JetStreamAdapter, id: string) =>
    pollUntil(async () => (await a.publish("orders", [{ id, payload: "{}" }]).then(() => true)), 15_000, `message ${id} stored`);

  /** Both messages through a durable group. */
  async function consume(a: JetStreamAdapter): Promise<string[]> {
    const got: string[] = [];
    const sub = await a.subscribe("orders", "billing", async (m) => void got.push(m.id));
    await pollUntil(async () => got.length === 2, 15_000, "both messages");
    await sub.close();
    return got;
  }

  it("scales a stream made with 1 replica to 3 on the cluster, its dead-letter stream too", async () => {
    const ns = namespace();
    const names = jetStreamNames(ns, "orders");
    const old = new JetStreamAdapter(nats.url, settings(ns, 1), logger());
    await old.start();
    const log = logger();
    const next = new JetStreamAdapter(nats.url, settings(ns, 3), log);
    try {
      await publish(old, "a");
      const jsm = await nc.jetstreamManager();
      expect((await jsm.streams.info(names.stream)).config.num_replicas).toBe(1);
      await next.start();
      await publish(next, "b");
      for (const stream of [names.stream, names.dlqStream]) {
        expect((await jsm.streams.info(stream)).config.num_replicas).toBe(3);
        // A leader and two followers once the new copies are placed.
        await pollUntil(
          async () => {
            const { cluster } = await jsm.streams.info(stream);
            return !!cluster?.leader && new Set([cluster.leader, ...(cluster.replicas ?? []).map((r) => r.name)]).size === 3;
          },
          15_000,
          `${stream} on three nodes`,
        );
      }
      expect(await consume(next)).toEqual(["a", "b"]);
      expect(log.warnings).toEqual([]);
    } finally {
      await next.destroy(["orders"]).catch(() => undefined);
      await Promise.all([old.stop(), next.stop().catch(() => undefined)]);
    }
  });

  it("keeps a stream it cannot scale (more replicas than nodes) working as it is, and says so once", async () => {
    const ns = namespace();
    const names = jetStreamNames(ns, "orders");
    const old = new JetStreamAdapter(nats.url, settings(ns, 1), logger());
    await old.start();
    const log = logger();
    const next = new JetStreamAdapter(nats.url, settings(ns, 5), log);
    try {
      await publish(old, "a");
      await next.start();
      await publish(next, "b");
      expect(await consume(next)).toEqual(["a", "b"]);
      const jsm = await nc.jetstreamManager();
      const replicas = (await jsm.streams.info(names.stream)).config.num_replicas;
      if (replicas === 1) {
        // Refused: said once for the stream and once for its dead-letter stream.
        expect(log.warnings.sort()).toEqual([
          expect.stringMatching(new RegExp(`^stream ${names.stream} keeps 1 replica\\(s\\), not the 5 of STREAM_REPLICAS`)),
          expect.stringMatching(new RegExp(`^stream ${names.dlqStream} keeps 1 replica\\(s\\), not the 5 of STREAM_REPLICAS`)),
        ]);
      } else {
        // nats-server 2.9 at times records the 5 without the nodes to place them (seen in CI); the stream works all the same (above).
        expect(replicas).toBe(5);
      }
    } finally {
      await old.destroy(["orders"]).catch(() => undefined);
      await Promise.all([old.stop(), next.stop()]);
    }
  });

  it("makes streams with 1 replica on a single server, and says so once", async () => {
    const ns = namespace();
    const log = logger();
    const single = new JetStreamAdapter(NATS_URL, settings(ns, 3), log);
    await single.start();
    try {
      await publish(single, "a");
      await publish(single, "b");
      expect(await consume(single)).toEqual(["a", "b"]);
      const direct = await connect({ servers: NATS_URL });
      const info = await (await direct.jetstreamManager()).streams.info(jetStreamNames(ns, "orders").stream);
      await direct.close();
      expect(info.config.num_replicas).toBe(1);
      expect(log.warnings).toEqual([expect.stringMatching(/is a single server, not a cluster: streams keep 1 replica, not the 3 of STREAM_REPLICAS/)]);
    } finally {
      await single.destroy(["orders"]);
      await single.stop();
    }
  });
});

describe("a consumer starting while JetStream has lost its quorum", () => {
  it("waits for it rather than failing its start, then gets every message", async () => {
    // Within SETUP_PATIENCE_MS (30 s) of lib/streams/jetstream.ts.
    const ns = `test-quorum-${Date.now().toString(36)}`;
    const settings = { namespace: ns, maxDeliveries: 5, maxAgeS: 3600, replicas: 3 };
    const quiet = { warn: () => undefined, error: () => undefined };
    const producer = new JetStreamAdapter(nats.url, settings, quiet);
    await producer.start();
    const consumer = new JetStreamAdapter(nats.url, settings, quiet);
    try {
      await producer.publish("orders", [{ id: "a", payload: "{}" }]);
      // Two of three nodes down: no JetStream meta leader, no stream leader.
      await nats.kill(1);
      await nats.kill(2);
      // A process starting now: its adapter's start and its consumer's setup.
      const got: string[] = [];
      let outcome = "pending";
      const subscribing = consumer.start().then(() => consumer.subscribe("orders", "billing", async (m) => void got.push(m.id)));
      subscribing.then(
        () => (outcome = "subscribed"),
        (err: unknown) => (outcome = `failed: ${String(err)}`),
      );
      await sleep(8000);
      // Still waiting, or (when the surviving node had not yet noticed its quorum gone) already
      // subscribed: either way, not failed.
      expect(outcome).not.toMatch(/^failed/);
      await nats.restart(1);
      await nats.restart(2);
      await nats.ready();
      const sub = await subscribing;
      // The stream's leader is elected again after the quorum returns: up to SETUP_PATIENCE_MS on a loaded 2-core machine.
      await pollUntil(async () => (await producer.publish("orders", [{ id: "b", payload: "{}" }]).then(() => true)), 30_000, "message b stored");
      // The consumer's own subscription comes back after its stream's leader, on the same loaded machine: the same patience.
      await pollUntil(async () => got.length === 2, 30_000, "both messages");
      await sub.close();
      expect(got).toEqual(["a", "b"]);
    } finally {
      await nats.restart(1).catch(() => undefined);
      await nats.restart(2).catch(() => undefined);
      await producer.destroy(["orders"]).catch(() => undefined);
      await Promise.all([producer.stop(), consumer.stop().catch(() => undefined)]);
    }
  }, 150_000);
});
