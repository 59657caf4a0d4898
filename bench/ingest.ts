/**
 * `npm run bench:ingest`: edge gateways posting batches of readings to
 * `POST /_ingest/pipelines/<id>/readings`, with the durable stream on, against
 *   (a) every service in one process (in-process transporter; readings stream in the PostgreSQL log),
 *   (b) api+auth+config and pipelines as two processes over NATS (readings stream in JetStream),
 * and in the same run, per case, the baseline: `COPY` of as many rows straight into the same
 * table (`pipelines.readings`) with `pg`, on one connection.
 *
 * Printed per case: readings/s accepted and stored, p50/p99 latency of a batch, the ratio to
 * the baseline, and the loss check: the rows in the table equal the readings accepted, and every
 * accepted batch became one stream message (the outbox drained).
 *
 * Two shapes of plant, each run in every case: `four`, four gateways (pipelines) of 4 monitors × 2
 * tags (BENCH_GATEWAYS changes the four), and `one`, one gateway of 100 monitors × 5 tags (the
 * common plant: one gateway, many machines); BENCH_SHAPES picks (default `four,one`).
 *
 * Env: BENCH_DURATION_S (15), BENCH_WARMUP_S (3), BENCH_CONNECTIONS (8), BENCH_BATCH (1000),
 * BENCH_GATEWAYS (4), BENCH_SHAPES (four,one), BENCH_CASES (a,b), BENCH_ROUNDS (2: the cases take turns, so that other load on
 * the machine falls on all of them alike; the verdict is on each case's median round),
 * BENCH_INGEST_ROLLUPS (unset: the nodes' default, history rollups on; `on`, `off`; `both`: each case
 * runs with HISTORY_ROLLUPS=false then true in every round, so off and on take turns, and the
 * ratio of their medians is printed: on no more than 15 % below off). With rollups on, the
 * readings the rollups held when the load ended and how long they took to catch up are shown.
 * Also per run: the CPU time (Linux /proc) the service processes and the database's backends spent
 * per 1,000 readings, a cost that other load on the machine moves much less than readings/s.
 * Needs the machine's PostgreSQL and NATS (and Redis for b).
 */
import http from "node:http";
import os from "node:os";
import { connect } from "nats";
import { Client } from "pg";
import { createTestDatabase, type TestDatabase } from "../test/helpers/db";
import { startCluster, type Cluster } from "../test/helpers/cluster";
import type { HttpClient } from "../test/helpers/node";
import { copyFrom } from "./copy";
import { backendPids, cpuBetween, cpuMs } from "./cpu";
import { ok } from "./http";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 15);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const BATCH = Number(process.env.BENCH_BATCH ?? 1000);
const GATEWAYS = Number(process.env.BENCH_GATEWAYS ?? 4);
const CASES = (process.env.BENCH_CASES ?? "a,b").split(",");

/** How many gateways, and per gateway how many monitors of how many tags. */
interface Shape {
  name: string;
  gateways: number;
  monitors: number;
  tags: number;
}
const SHAPES: Record<string, Shape> = {
  four: { name: "four", gateways: GATEWAYS, monitors: 4, tags: 2 },
  one: { name: "one", gateways: 1, monitors: 100, tags: 5 },
};
const SHAPE_NAMES = (process.env.BENCH_SHAPES ?? "four,one").split(",").filter((n) => SHAPES[n]);
const describeShape = (s: Shape): string => `${s.gateways} pipeline${s.gateways === 1 ? "" : "s"} × ${s.monitors} monitors × ${s.tags} tags`;
/** The target: the floor for each shape and case, and the share of COPY's rate. */
const MIN_RATE = 100_000;
const MIN_COPY_RATIO = 0.5;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const NATS_URL = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";

/** HISTORY_ROLLUPS of a run's nodes: "default" leaves it unset (the service's default, on). */
type Rollups = "default" | "off" | "on";
const ROLLUPS_ENV = process.env.BENCH_INGEST_ROLLUPS ?? "";
const ROLLUP_MODES: Rollups[] = ROLLUPS_ENV === "both" ? ["off", "on"] : ROLLUPS_ENV === "on" || ROLLUPS_ENV === "off" ? [ROLLUPS_ENV] : ["default"];
/** Rollups on may cost ingest at most this share of its rate without them. */
const ROLLUPS_MAX_LOSS = 0.15;

interface Gateway {
  id: string;
  key: string;
  monitors: { id: string; tags: string[] }[];
}

interface CaseResult {
  key: string;
  shape: string;
  round: number;
  label: string;
  rollups: Rollups;
  /** Whether the nodes folded rollups ("default" follows HISTORY_ROLLUPS of this process's environment, which they inherit). */
  folding: boolean;
  /** Readings in the minute rollups when the load ended, and seconds until they held every stored one (null: rollups off, or not within 60 s). */
  rolledAtEnd: number;
  catchUpS: number | null;
  /** CPU ms per 1,000 accepted readings from the load's start until the stream and rollups were done: the service processes, and the database's backends. */
  cpuNode: number;
  cpuPg: number;
  accepted: number;
  measuredAccepted: number;
  seconds: number;
  p50: number;
  p99: number;
  errors: number;
  stored: number;
  batches: number;
  published: number;
  copyRate: number;
}

/** A site, a plant, a function, and per gateway the shape's monitors and tags, registered as slaves. */
async function seed(http: HttpClient, shape: Shape): Promise<Gateway[]> {
  const site = (await ok<{ id: string }>(http, "POST", "/_config/sites", {
    site_name: "Bench site",
    location: "Bench",
    timezone: "UTC",
    longitude: "0",
    edge_firmware: {},
  })).id;
  const plant = (await ok<{ id: string }>(http, "POST", "/_config/plants", { plant_name: "Bench plant", site_id: site })).id;
  const fn = (await ok<{ id: string }>(http, "POST", "/_config/functions", { function_name: "Bench line", plant_id: plant })).id;
  const gateways: Gateway[] = [];
  for (let g = 0; g < shape.gateways; g++) {
    const monitors: Gateway["monitors"] = [];
    for (let m = 0; m < shape.monitors; m++) {
      const name = `G${g} M${m}`;
      const id = (await ok<{ id: string }>(http, "POST", "/_config/monitors", { monitor_name: name, monitor_type: "process-monitor", function_id: fn })).id;
      const tags = ["pressure", "temperature", "flow", "vibration", "current"].slice(0, shape.tags);
      await ok(http, "PUT", `/_config/monitors/${id}`, {
        monitor_name: name,
        monitor_type: "process-monitor",
        tags: tags.map((t) => ({ tag_id: t, tag_name: t, tag_desc: "", tag_unit: "", thresholds: {} })),
        specs: {},
        attributes: {},
      });
      monitors.push({ id, tags });
    }
    const created = await ok<{ id: string; ingest_key: string }>(http, "POST", "/_config/pipelines/edge-server", {
      pipeline_name: `Bench gateway ${g}`,
      function_id: fn,
      data_type: "Process",
      data_source: "Edge IOT Gateway",
      data_source_subtype: "Modbus RTU",
      settings: { mac_address: `02:be:0c:00:00:${g.toString(16).padStart(2, "0")}`, port: "/dev/ttyS0", stopbit: 1, bytesize: 8, parity: "N", baudrate: 19200, sampling_rate: 1 },
      gateway_firmware: { current_version: "1.0.0" },
      tags: [{ tag_name: "P", tag_desc: "", tag_unit: "bar", address: "40001", decode_bits: "16", decode_type: "float", scale: 1 }],
      registration: monitors.map((m, i) => ({ monitor_id: m.id, slave_id: String(i + 1), registered_by_asset: false })),
    });
    gateways.push({ id: created.id, key: created.ingest_key, monitors });
  }
  return gateways;
}

/** One batch as a gateway sends it: every tag of every monitor, at successive instants. */
function batchBody(g: Gateway, seq: number): string {
  const readings = new Array(BATCH);
  const pairs = g.monitors.flatMap((m) => m.tags.map((t) => [m.id, t] as const));
  const t0 = Date.now() - 60_000;
  for (let i = 0; i < BATCH; i++) {
    const [monitor_id, tag_id] = pairs[i % pairs.length]!;
    readings[i] = { monitor_id, tag_id, ts: t0 + Math.floor(i / pairs.length) * 10 + (seq % 1000), value: Math.round(Math.random() * 100000) / 100 };
  }
  return JSON.stringify({ readings });
}

function post(agent: http.Agent, url: URL, key: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), authorization: `Bearer ${key}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const percentile = (sorted: number[], p: number): number => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : 0);

/** CONNECTIONS loops, each one gateway's stream of batches; the warm-up's batches count for the loss check only. */
async function load(baseUrl: string, gateways: Gateway[]) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let accepted = 0;
  let measuredAccepted = 0;
  let batches = 0;
  let errors = 0;
  const latencies: number[] = [];
  const warmupEnd = Date.now() + WARMUP_S * 1000;
  const end = warmupEnd + DURATION_S * 1000;
  let seq = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, c) => {
      const g = gateways[c % gateways.length]!;
      const url = new URL(`${baseUrl}/_ingest/pipelines/${g.id}/readings`);
      while (Date.now() < end) {
        const body = batchBody(g, seq++);
        const started = performance.now();
        try {
          const res = await post(agent, url, g.key, body);
          const ms = performance.now() - started;
          if (res.status !== 200) {
            errors++;
            continue;
          }
          const n = (JSON.parse(res.text) as { accepted: number }).accepted;
          accepted += n;
          batches++;
          if (started + performance.timeOrigin >= warmupEnd) {
            measuredAccepted += n;
            latencies.push(ms);
          }
        } catch {
          errors++;
        }
      }
    }),
  );
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { accepted, measuredAccepted, batches, errors, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return check();
}

/** The baseline: `rows` readings COPYed into pipelines.readings on one connection, in COPYs of 100,000. */
async function copyBaseline(db: Client, rows: number, gw: Gateway): Promise<number> {
  const site = (await db.query(`SELECT site_id FROM pipelines.pipelines WHERE pipeline_id = $1`, [gw.id])).rows[0].site_id as string;
  const per = 100_000;
  const t0 = Date.now() - 60_000;
  const started = performance.now();
  let copied = 0;
  for (let done = 0; done < rows; done += per) {
    const n = Math.min(per, rows - done);
    const batchId = crypto.randomUUID();
    const chunks: Buffer[] = [];
    let lines: string[] = [];
    for (let i = 0; i < n; i++) {
      const m = gw.monitors[i % gw.monitors.length]!;
      lines.push(`${new Date(t0 + i).toISOString()}\t${gw.id}\t${site}\t${m.id}\tpressure\t${(Math.random() * 1000).toFixed(2)}\t${batchId}\t${i}\n`);
      if (lines.length === 1000) {
        chunks.push(Buffer.from(lines.join("")));
        lines = [];
      }
    }
    if (lines.length) chunks.push(Buffer.from(lines.join("")));
    copied += await copyFrom(db, `COPY pipelines.readings (ts, pipeline_id, site_id, monitor_id, tag_id, value, batch_id, idx) FROM STDIN`, chunks);
  }
  const seconds = (performance.now() - started) / 1000;
  return copied / seconds;
}

/** CPU ms spent since `start` by its processes and any new ones in `pids`. */
function cpuSince(start: Map<number, number>, pids: number[]): number {
  return cpuBetween(start, cpuMs([...new Set([...start.keys(), ...pids])]));
}

/** Readings folded into the minute rollups (the bench's database holds only its own). */
async function rolledCount(pg: Client): Promise<number> {
  return Number((await pg.query(`SELECT coalesce(sum(n), 0) AS n FROM pipelines.reading_minutes`)).rows[0].n);
}

async function runCase(
  key: string,
  shape: Shape,
  round: number,
  label: string,
  processes: string[][],
  env: Record<string, string>,
  db: TestDatabase,
  rollups: Rollups,
): Promise<CaseResult> {
  label += `, ${describeShape(shape)}`;
  if (rollups !== "default") label += `, rollups ${rollups}`;
  process.stdout.write(`(${key}) ${label}: starting\n`);
  const rollupsEnv: Record<string, string> = rollups === "default" ? {} : { HISTORY_ROLLUPS: rollups === "on" ? "true" : "false" };
  const folding = rollups === "on" || (rollups === "default" && !["0", "false"].includes(process.env.HISTORY_ROLLUPS ?? ""));
  const cluster: Cluster = await startCluster({ processes, env: { LOG_LEVEL: "warn", ...env, ...rollupsEnv }, databaseUrl: db.url });
  const pg = new Client({ connectionString: db.url });
  await pg.connect();
  try {
    // The cluster answers once config does; the pipelines process may still be starting.
    await waitFor(async () => (await cluster.http("GET", "/_config/pipelines/_count?plant_id=00000000-0000-0000-0000-000000000000")).status === 200, 90_000);
    const gateways = await seed(cluster.http, shape);
    process.stdout.write(`(${key}) ${shape.gateways} gateway(s), ${CONNECTIONS} connections, batches of ${BATCH}: ${WARMUP_S} s warm-up + ${DURATION_S} s\n`);
    const nodePids = processes.map((p) => cluster.process(p[0]!).pid).filter((pid): pid is number => pid !== undefined);
    const nodeCpu0 = cpuMs(nodePids);
    const pgCpu0 = cpuMs(await backendPids(pg));
    const r = await load(cluster.baseUrl, gateways);
    const ids = gateways.map((g) => g.id);
    const loadEnded = performance.now();
    const rolledAtEnd = await rolledCount(pg);
    const stored = Number((await pg.query(`SELECT count(*) AS n FROM pipelines.readings WHERE pipeline_id = ANY($1::uuid[])`, [ids])).rows[0].n);
    await waitFor(async () => Number((await pg.query(`SELECT count(*) AS n FROM pipelines.stream_outbox`)).rows[0].n) === 0, 60_000);
    // Before the stream is counted (and, over NATS, deleted) and the COPY adds rows the stream never carried.
    let catchUpS: number | null = null;
    if (folding && (await waitFor(async () => (await rolledCount(pg)) >= stored, 60_000))) catchUpS = (performance.now() - loadEnded) / 1000;
    const perK = (ms: number) => (ms / Math.max(1, r.accepted)) * 1000;
    const cpuNode = perK(cpuSince(nodeCpu0, nodePids));
    const cpuPg = perK(cpuSince(pgCpu0, await backendPids(pg)));
    const published = await publishedCount(key, cluster.namespace, pg);
    process.stdout.write(`(${key}) baseline: COPY of ${r.accepted} rows\n`);
    const copyRate = await copyBaseline(pg, r.accepted, gateways[0]!);
    const result = { key, shape: shape.name, round, label, rollups, folding, rolledAtEnd, catchUpS, cpuNode, cpuPg, ...r, seconds: DURATION_S, stored, published, copyRate };
    const rolled = !folding ? "" : `; rollups held ${rolledAtEnd}/${stored} at the end, all ${catchUpS === null ? "NOT within 60 s" : `after ${catchUpS.toFixed(1)} s`}`;
    process.stdout.write(
      `(${key}) ${Math.round(r.measuredAccepted / DURATION_S)} readings/s, p99 ${r.p99.toFixed(1)} ms; COPY ${Math.round(copyRate)} rows/s${rolled}; ` +
        `CPU per 1,000 readings: service ${cpuNode.toFixed(1)} ms, PostgreSQL ${cpuPg.toFixed(1)} ms\n`,
    );
    return result;
  } finally {
    await pg.end();
    await cluster.stop();
  }
}

/** Messages the readings stream holds: the PostgreSQL log's rows, or JetStream's stream state. */
async function publishedCount(key: string, namespace: string, pg: Client): Promise<number> {
  if (key === "a") {
    return Number((await pg.query(`SELECT count(*) AS n FROM streams.messages WHERE stream = $1`, [`${namespace}.readings`])).rows[0].n);
  }
  const nc = await connect({ servers: NATS_URL });
  try {
    const jsm = await nc.jetstreamManager();
    const info = await jsm.streams.info(`${namespace}_readings`);
    const n = info.state.messages;
    await jsm.streams.delete(`${namespace}_readings`).catch(() => undefined);
    await jsm.streams.delete(`${namespace}_readings_dlq`).catch(() => undefined);
    await jsm.streams.delete(`${namespace}_waveforms`).catch(() => undefined);
    await jsm.streams.delete(`${namespace}_waveforms_dlq`).catch(() => undefined);
    return n;
  } finally {
    await nc.close();
  }
}

const rateOf = (r: CaseResult): number => r.measuredAccepted / r.seconds;
/** Every accepted reading over the whole load and, rollups on, the time their folding ran on after it. */
const rateWithCatchUp = (r: CaseResult): number => r.accepted / (WARMUP_S + r.seconds + (r.catchUpS ?? 0));

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

function report(results: CaseResult[]): void {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  console.log(`\nPOST /_ingest/pipelines/<id>/readings, batches of ${BATCH}, shapes ${SHAPE_NAMES.map((n) => describeShape(SHAPES[n]!)).join(" and ")}, ${CONNECTIONS} connections, ${DURATION_S} s after ${WARMUP_S} s warm-up, ${ROUNDS} round(s)`);
  console.log(`${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString()}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(", ")}\n`);
  console.log("| case | round | readings/s accepted (= stored) | batch p50 ms | batch p99 ms | COPY baseline rows/s | ratio | lost | errors | rollups at the end of load, caught up after | CPU ms per 1,000 readings: service / PostgreSQL |");
  console.log("|---|---:|---:|---:|---:|---:|---:|---|---:|---|---|");
  let failed = false;
  for (const r of results) {
    const lost = r.stored !== r.accepted || r.published !== r.batches;
    failed ||= lost || r.errors > 0 || (r.folding && r.catchUpS === null);
    const rolled = !r.folding ? "off" : `${r.rolledAtEnd}/${r.stored}, ${r.catchUpS === null ? "NOT within 60 s" : `${r.catchUpS.toFixed(1)} s`}`;
    console.log(
      `| (${r.key}) ${r.label} | ${r.round} | ${Math.round(rateOf(r))} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${Math.round(r.copyRate)} | ${(rateOf(r) / r.copyRate).toFixed(2)} | ${lost ? "YES" : "none"} (${r.stored}/${r.accepted} rows, ${r.published}/${r.batches} messages) | ${r.errors} | ${rolled} | ${r.cpuNode.toFixed(1)} / ${r.cpuPg.toFixed(1)} |`,
    );
  }
  console.log("");
  let rollupsCost = false;
  const medianRate = new Map<string, number>();
  for (const key of CASES.flatMap((k) => SHAPE_NAMES.map((n) => `${k}:${n}`))) {
    const [caseKey, shapeName] = key.split(":") as [string, string];
    const rates = new Map<Rollups, number>();
    const caughtUp = new Map<Rollups, number>();
    const cpu = new Map<Rollups, { node: number; pg: number }>();
    for (const mode of ROLLUP_MODES) {
      const mine = results.filter((r) => r.key === caseKey && r.shape === shapeName && r.rollups === mode);
      if (!mine.length) continue;
      const rate = median(mine.map(rateOf));
      const ratio = median(mine.map((r) => rateOf(r) / r.copyRate));
      rates.set(mode, rate);
      caughtUp.set(mode, median(mine.map(rateWithCatchUp)));
      cpu.set(mode, { node: median(mine.map((r) => r.cpuNode)), pg: median(mine.map((r) => r.cpuPg)) });
      failed ||= rate < MIN_RATE || ratio < MIN_COPY_RATIO;
      medianRate.set(`${key}:${mode}`, rate);
      console.log(
        `(${caseKey}) ${describeShape(SHAPES[shapeName]!)}${mode === "default" ? "" : `, rollups ${mode}`}, median over ${mine.length} round(s): ${Math.round(rate)} readings/s, ratio to COPY ${ratio.toFixed(2)}`,
      );
    }
    const on = rates.get("on");
    const off = rates.get("off");
    if (on !== undefined && off !== undefined) {
      rollupsCost ||= on < off * (1 - ROLLUPS_MAX_LOSS);
      const slower = (x: number) => `${Math.abs(100 * (1 - x)).toFixed(1)} % ${x < 1 ? "below" : "above"} off`;
      // A consumer that falls behind during the load moves its cost past the measured window.
      const withCatchUp = (caughtUp.get("on") ?? 0) / (caughtUp.get("off") ?? 1);
      console.log(
        `(${caseKey}, ${shapeName}) rollups on / off (medians): ${(on / off).toFixed(2)} (${slower(on / off)}); ` +
          `counting until the rollups caught up (all accepted / (warm-up + load + catch-up)): ${withCatchUp.toFixed(2)} (${slower(withCatchUp)})`,
      );
      const cpuOn = cpu.get("on")!;
      const cpuOff = cpu.get("off")!;
      console.log(
        `(${caseKey}, ${shapeName}) CPU ms per 1,000 readings (medians), off → on: service ${cpuOff.node.toFixed(1)} → ${cpuOn.node.toFixed(1)}, PostgreSQL ${cpuOff.pg.toFixed(1)} → ${cpuOn.pg.toFixed(1)}, ` +
          `together ×${((cpuOn.node + cpuOn.pg) / (cpuOff.node + cpuOff.pg)).toFixed(2)}`,
      );
    }
  }
  // One gateway of many machines against four small ones, in the same run.
  for (const key of CASES) {
    for (const mode of ROLLUP_MODES) {
      const one = medianRate.get(`${key}:one:${mode}`);
      const four = medianRate.get(`${key}:four:${mode}`);
      if (one !== undefined && four !== undefined) console.log(`(${key})${mode === "default" ? "" : ` rollups ${mode}:`} one pipeline / four pipelines (medians): ${(one / four).toFixed(2)}`);
    }
  }
  console.log(`\ntargets: >= ${MIN_RATE.toLocaleString("en")} readings/s and ratio to COPY >= ${MIN_COPY_RATIO} (medians, each case and shape), nothing lost, no errors: ${failed ? "MISSED" : "met"}`);
  if (ROLLUP_MODES.length > 1) console.log(`target: rollups on no more than ${ROLLUPS_MAX_LOSS * 100} % below off (medians, each case): ${rollupsCost ? "MISSED" : "met"}`);
}

async function main(): Promise<void> {
  const results: CaseResult[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const key of CASES) {
      for (const shape of SHAPE_NAMES.map((n) => SHAPES[n]!)) {
        for (const rollups of ROLLUP_MODES) {
          const db = await createTestDatabase("ims_bench");
          try {
            if (key === "a") {
              // Empty TRANSPORTER and REDIS_URL mean unset: in-process calls, memory cacher, the PostgreSQL stream log.
              results.push(await runCase("a", shape, round, "all services, one process", [["api", "auth", "config", "pipelines"]], { TRANSPORTER: "", REDIS_URL: "" }, db, rollups));
            } else if (key === "b") {
              results.push(await runCase("b", shape, round, "api+auth+config and pipelines: 2 processes, NATS + JetStream", [["api", "auth", "config"], ["pipelines"]], {}, db, rollups));
            }
          } finally {
            await db.drop();
          }
        }
      }
    }
  }
  report(results);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
