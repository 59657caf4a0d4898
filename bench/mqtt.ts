/**
 * `npm run bench:mqtt`: the MQTT front door (docs/sparkplug.md) against the ingestion API, in
 * the same run, on the same cluster: api+auth+config+pipelines in one process, mqtt in its own,
 * over NATS.
 *
 *   (a) one Sparkplug edge node of 500 metrics (one device: a monitor of 500 tags) publishing
 *       DDATA by alias at QoS 1 as fast as they are acknowledged (BENCH_MQTT_INFLIGHT in
 *       flight): readings/s stored;
 *   (b) the same pipeline posting batches of BENCH_BATCH readings to `/_ingest` over
 *       BENCH_CONNECTIONS connections, as `bench:ingest`'s one-gateway case does: readings/s;
 *   (c) BENCH_IDLE_NODES (1,000) edge nodes connected, born and idle: the mqtt process's resident
 *       memory before and after, per node.
 *
 * Env: BENCH_DURATION_S (15), BENCH_MQTT_INFLIGHT (16), BENCH_BATCH (1000), BENCH_CONNECTIONS (8),
 * BENCH_IDLE_NODES (1000). Needs PostgreSQL, Redis and NATS on 127.0.0.1.
 */
import fs from "node:fs";
import { Client } from "pg";
import { freePort, pollUntil, startCluster, type Cluster } from "../test/helpers/cluster";
import type { HttpClient } from "../test/helpers/node";
import { EdgeNode } from "../test/helpers/sparkplug";
import { ok } from "./http";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 15);
const INFLIGHT = Number(process.env.BENCH_MQTT_INFLIGHT ?? 16);
const BATCH = Number(process.env.BENCH_BATCH ?? 1000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const IDLE_NODES = Number(process.env.BENCH_IDLE_NODES ?? 1000);
const METRICS = 500;

const mac = (n: number) => `02:be:0d:${((n >> 16) & 255).toString(16).padStart(2, "0")}:${((n >> 8) & 255).toString(16).padStart(2, "0")}:${(n & 255).toString(16).padStart(2, "0")}`;
const edgeNodeOf = (m: string) => m.replace(/:/g, "");

function edgeBody(fn: string, n: number, registration: { monitor_id: string; slave_id: string; registered_by_asset: boolean }[]) {
  return {
    pipeline_name: `Bench node ${n}`,
    function_id: fn,
    data_type: "Process",
    data_source: "Edge IOT Gateway",
    data_source_subtype: "Modbus RTU",
    settings: { mac_address: mac(n), port: "/dev/ttyS0", stopbit: 1, bytesize: 8, parity: "N", baudrate: 19200, sampling_rate: 1 },
    gateway_firmware: { current_version: "1.0.0" },
    tags: [],
    registration,
  };
}

async function seed(http: HttpClient) {
  const site = (await ok<{ id: string }>(http, "POST", "/_config/sites", { site_name: "Bench site", location: "Bench", timezone: "UTC", longitude: "0", edge_firmware: {} })).id;
  const plant = (await ok<{ id: string }>(http, "POST", "/_config/plants", { plant_name: "Bench plant", site_id: site })).id;
  const fn = (await ok<{ id: string }>(http, "POST", "/_config/functions", { function_name: "Bench line", plant_id: plant })).id;
  const monitor = (await ok<{ id: string }>(http, "POST", "/_config/monitors", { monitor_name: "Bench machine", monitor_type: "process-monitor", function_id: fn })).id;
  const tags = Array.from({ length: METRICS }, (_, i) => `t${i}`);
  await ok(http, "PUT", `/_config/monitors/${monitor}`, {
    monitor_name: "Bench machine",
    monitor_type: "process-monitor",
    tags: tags.map((t) => ({ tag_id: t, tag_name: t, tag_desc: "", tag_unit: "", thresholds: {} })),
    specs: {},
    attributes: {},
  });
  const gw = await ok<{ id: string; ingest_key: string }>(http, "POST", "/_config/pipelines/edge-server", edgeBody(fn, 0, [{ monitor_id: monitor, slave_id: "1", registered_by_asset: false }]));
  return { fn, monitor, tags, gw };
}

async function stored(pg: Client, pipeline_id: string): Promise<number> {
  const { rows } = await pg.query<{ n: string }>(`SELECT count(*) AS n FROM pipelines.readings WHERE pipeline_id = $1`, [pipeline_id]);
  return Number(rows[0]!.n);
}

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

async function main(): Promise<void> {
  const port = await freePort();
  const url = `mqtt://127.0.0.1:${port}`;
  const cluster: Cluster = await startCluster({
    processes: [["api", "auth", "config", "pipelines"], ["mqtt"]],
    env: { MQTT_PORT: String(port), LOG_LEVEL: "warn", REQUEST_TIMEOUT_MS: "30000" },
  });
  const pg = new Client({ connectionString: cluster.db!.url });
  await pg.connect();
  try {
    const { fn, monitor, tags, gw } = await seed(cluster.http);
    const mqttProcess = cluster.process("mqtt");
    // (a) one node, 500 metrics a message, QoS 1, INFLIGHT messages awaiting their PUBACK.
    let node: EdgeNode | undefined;
    const connect = () => EdgeNode.connect({ url, username: gw.id, password: gw.ingest_key, edgeNode: edgeNodeOf(mac(0)), reconnect: false });
    await pollUntil(async () => !!(node = await connect().catch(() => undefined)), 60_000, "the front door", [mqttProcess]);
    if (!node) throw new Error("no front door");
    await node.nbirth();
    await node.send("DBIRTH", tags.map((t, i) => ({ name: t, alias: i + 1, type: "Double", value: 0 })), { device: "1" });
    let ts = Date.now() - 3_600_000;
    const before = await stored(pg, gw.id);
    const until = Date.now() + DURATION_S * 1000;
    let acked = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: INFLIGHT }, async () => {
        while (Date.now() < until) {
          const at = ts++;
          await node!.send("DDATA", tags.map((_, i) => ({ alias: i + 1, type: "Double", value: i, timestamp: at })), { device: "1", timestamp: at });
          acked++;
        }
      }),
    );
    const mqttSeconds = (Date.now() - started) / 1000;
    const mqttStored = (await stored(pg, gw.id)) - before;
    await node.close();
    const mqttRate = mqttStored / mqttSeconds;
    console.log(`(a) MQTT: 1 node × ${METRICS} metrics, QoS 1, ${INFLIGHT} in flight: ${acked} messages acknowledged, ${mqttStored} readings stored in ${mqttSeconds.toFixed(1)} s: ${Math.round(mqttRate)} readings/s (${acked * METRICS === mqttStored ? "every acknowledged reading stored" : "MISMATCH"})`);

    // (b) the same pipeline over HTTP, as bench:ingest's one-gateway case.
    const httpBefore = await stored(pg, gw.id);
    const httpUntil = Date.now() + DURATION_S * 1000;
    let hts = Date.now() - 7_200_000;
    const httpStarted = Date.now();
    let accepted = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (Date.now() < httpUntil) {
          const base = (hts += Math.ceil(BATCH / METRICS));
          const readings = Array.from({ length: BATCH }, (_, i) => ({ monitor_id: monitor, tag_id: tags[i % METRICS]!, ts: base + Math.floor(i / METRICS), value: i }));
          const res = await fetch(`${cluster.baseUrl}/_ingest/pipelines/${gw.id}/readings`, {
            method: "POST",
            headers: { authorization: `Bearer ${gw.ingest_key}`, "content-type": "application/json" },
            body: JSON.stringify({ readings }),
          });
          const body = (await res.json()) as { accepted: number };
          accepted += body.accepted;
        }
      }),
    );
    const httpSeconds = (Date.now() - httpStarted) / 1000;
    const httpStored = (await stored(pg, gw.id)) - httpBefore;
    const httpRate = httpStored / httpSeconds;
    console.log(`(b) HTTP /_ingest: the same pipeline, ${CONNECTIONS} connections × batches of ${BATCH}: ${httpStored} readings stored in ${httpSeconds.toFixed(1)} s: ${Math.round(httpRate)} readings/s (${accepted === httpStored ? "every accepted reading stored" : "MISMATCH"})`);
    console.log(`    MQTT / HTTP: ${(mqttRate / httpRate).toFixed(2)}`);

    // (c) idle nodes: born, then connected and silent.
    const created: { id: string; key: string; n: number }[] = [];
    for (let start = 1; start <= IDLE_NODES; start += 16) {
      const batch = Array.from({ length: Math.min(16, IDLE_NODES - start + 1) }, (_, k) => start + k);
      created.push(
        ...(await Promise.all(
          batch.map(async (n) => {
            const p = await ok<{ id: string; ingest_key: string }>(cluster.http, "POST", "/_config/pipelines/edge-server", edgeBody(fn, n, []));
            return { id: p.id, key: p.ingest_key, n };
          }),
        )),
      );
    }
    const pid = mqttProcess.pid!;
    const idleBefore = rssMb(pid);
    const nodes: EdgeNode[] = [];
    for (let i = 0; i < created.length; i += 50) {
      nodes.push(
        ...(await Promise.all(
          created.slice(i, i + 50).map(async (c) => {
            const n = await EdgeNode.connect({ url, username: c.id, password: c.key, edgeNode: edgeNodeOf(mac(c.n)), reconnect: false });
            await n.nbirth();
            return n;
          }),
        )),
      );
    }
    await new Promise((r) => setTimeout(r, 5000));
    const idleAfter = rssMb(pid);
    console.log(
      `(c) ${nodes.length} idle nodes connected and born: mqtt process RSS ${idleBefore.toFixed(0)} MB → ${idleAfter.toFixed(0)} MB, ${(((idleAfter - idleBefore) * 1024) / nodes.length).toFixed(1)} KB a node`,
    );
    await Promise.all(nodes.map((n) => n.close().catch(() => undefined)));
  } finally {
    await pg.end();
    await cluster.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
