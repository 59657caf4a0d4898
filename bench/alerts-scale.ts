/**
 * Case `scale` of `npm run bench:alerts` (BENCH_ALERTS_CASES=scale): how the evaluation of the
 * readings stream scales out, one alerting replica against two, over the machine's NATS.
 *
 * A cluster of processes (api+auth+config, pipelines, and the alerting replicas); 32 gateways
 * (BENCH_ALERTS_SCALE_PIPELINES), so their keys spread over the stream's partitions, each with 8
 * monitors of two tags (16 series) and a watcher of 32 triggers (two per series, over 80 and 81,
 * minimum_duration 1 s). Each round, with alerting stopped, ingests a backlog of
 * BENCH_ALERTS_SCALE_READINGS readings (default 3,000,000: 10 s of evaluation at the best rate
 * seen on the 2-core machine) through the API in batches of 512 (32 per series, 100 ms apart by
 * timestamp), each gateway's batches in order; in every gateway's middle
 * batch its first series is hot, so each of its two triggers opens one alert (and the next batch
 * closes it). Then it starts the round's replicas and, once every one of them is ready (HEALTH_PORT
 * /ready: its stream subscription is made), times until each partition consumer of the alerting
 * group has nothing left (JetStream consumer info: num_pending + num_ack_pending = 0). Readings/s
 * is what was still pending when the last replica became ready over that time, so a replica's
 * start-up is not counted as evaluation.
 *
 * Rounds alternate (BENCH_ALERTS_SCALE_ROUNDS, "1,2,1,2": replicas per round) so that other load on
 * the machine falls on both alike; the verdict is on the medians: two replicas ≥ 1.7 × one. Each
 * round checks that the alerts opened are the expected number, none twice. Also printed, over the
 * same window: CPU seconds of each alerting replica, of the database's backends, of nats-server,
 * and how busy the whole machine was, so the table says whether alerting or the machine is the limit.
 * BENCH_ALERTS_SCALE_NODE_OPTIONS is passed to the replicas as NODE_OPTIONS (e.g. `--cpu-prof
 * --cpu-prof-dir=/tmp/prof` for a profile of each).
 */
import os from "node:os";
import { connect, type JetStreamManager } from "nats";
import { Client } from "pg";
import { DEFAULT_PARTITIONS, jetStreamNames } from "../lib/streams";
import { freePort, NATS_URL, pollUntil, startCluster, type Cluster, type ServiceProcess } from "../test/helpers/cluster";
import { create, createPlace, sleep } from "./alerts-common";
import { backendPids, cpuBetween, cpuMs, machineMs, natsServerPids } from "./cpu";

const PIPELINES = Number(process.env.BENCH_ALERTS_SCALE_PIPELINES ?? 32);
const READINGS = Number(process.env.BENCH_ALERTS_SCALE_READINGS ?? 3_000_000);
const ROUNDS = (process.env.BENCH_ALERTS_SCALE_ROUNDS ?? "1,2,1,2").split(",").map((n) => Number(n.trim()));
const PARTITIONS = Number(process.env.STREAM_PARTITIONS ?? DEFAULT_PARTITIONS);
const MONITORS = 8;
const SERIES = MONITORS * 2;
const BATCH = 512;
const STEP_MS = 100;
/** Batches each gateway posts per round, and the one whose first series is hot. */
const BATCHES = Math.max(3, Math.ceil(READINGS / PIPELINES / BATCH));
const HOT_BATCH = Math.floor(BATCHES / 2);
/** A round's readings span this much time by their timestamps. */
const ROUND_SPAN_MS = BATCHES * (BATCH / SERIES) * STEP_MS;
const TRIGGERS_ON_HOT_SERIES = 2;
const POST_CONNECTIONS = 8;
const TARGET = 1.7;

interface Gateway {
  id: string;
  key: string;
  monitors: string[];
}

export interface ScaleRound {
  round: number;
  replicas: number;
  /** Readings left when the last replica was ready, and the seconds until none was. */
  readings: number;
  seconds: number;
  rate: number;
  /** Seconds from the first replica's start to the last one ready, and readings evaluated meanwhile. */
  startupS: number;
  early: number;
  opened: number;
  expected: number;
  doubled: number;
  stillActive: number;
  /** Deadlocks PostgreSQL detected in the round's database meanwhile (each one stalls its partitions for deadlock_timeout). */
  deadlocks: number;
  /** CPU seconds over the timed window. */
  cpuAlerting: number[];
  cpuPg: number;
  cpuNats: number;
  /** Share of the machine's CPU time busy over the window (all processes, other agents' included). */
  machineBusy: number;
}

/** 32 gateways of 8 monitors (tags temp and vib), each with a watcher of two triggers per series. */
async function seed(cluster: Cluster): Promise<Gateway[]> {
  const { site, plant, fn } = await createPlace(cluster, "Scale");
  const gateways: Gateway[] = [];
  for (let g = 0; g < PIPELINES; g++) {
    const monitors: string[] = [];
    for (let m = 0; m < MONITORS; m++) {
      const tags = [
        { tag_id: "temp", tag_name: "Temperature", tag_desc: "", tag_unit: "C" },
        { tag_id: "vib", tag_name: "Vibration", tag_desc: "", tag_unit: "mm/s" },
      ];
      monitors.push((await create(cluster, "/_config/monitors", { monitor_name: `S${g}-${m}`, monitor_type: "process-monitor", function_id: fn, tags })).id);
    }
    const gw = await create(cluster, "/_config/pipelines/edge-server", {
      pipeline_name: `Scale gateway ${g}`,
      function_id: fn,
      data_type: "Process",
      data_source: "Edge IOT Gateway",
      data_source_subtype: "Modbus RTU",
      settings: { mac_address: `02:00:00:00:20:${g.toString(16).padStart(2, "0")}`, port: "/dev/ttyUSB0", stopbit: 1, bytesize: 8, parity: "N", baudrate: 9600, sampling_rate: 10 },
      gateway_firmware: { current_version: "2.1.0", previous_version: "2.0.0" },
      tags: [{ tag_name: "Temperature", tag_desc: "", tag_unit: "C", address: "40001", decode_bits: "16", decode_type: "float", scale: 1 }],
      registration: monitors.map((monitor_id, i) => ({ monitor_id, slave_id: String(i + 1), registered_by_asset: false })),
    });
    const triggers = monitors.flatMap((monitor_id, m) =>
      (["temp", "vib"] as const).flatMap((tag_id) =>
        [0, 1].map((k) => ({
          id: `${m}-${tag_id}-${k}`,
          name: `M${m} ${tag_id} over ${80 + k}`,
          minimum_duration: "1s",
          condition: [{ comparison: ">", monitor_id, tag_id, threshold: String(80 + k) }],
          notifyTo: { email: true, sms: false, whatsapp: false, users: ["oncall@example.com"] },
          severity: 1 + k,
          trigger_relation: "AND",
        })),
      ),
    );
    const res = await cluster.http<string>("POST", "/_alerting/watchers", {
      body: { watcher_name: `Scale watch ${g}`, function_id: fn, plant_id: plant, site_id: site, gateway_id: gw.id, is_enabled: 1, triggers },
    });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    gateways.push({ id: gw.id, key: gw.ingest_key ?? "", monitors });
  }
  return gateways;
}

/** Batch `j` of a gateway in a round starting at `base`: the 16 series in turn, increasing timestamps per series. */
function batchOf(g: Gateway, j: number, base: number): unknown[] {
  return Array.from({ length: BATCH }, (_, i) => {
    const series = i % SERIES;
    const hot = series === 0 && j === HOT_BATCH;
    return {
      monitor_id: g.monitors[series >> 1],
      tag_id: series & 1 ? "vib" : "temp",
      ts: base + (j * (BATCH / SERIES) + Math.floor(i / SERIES)) * STEP_MS,
      value: hot ? 90 : 20 + ((j * 31 + i * 7) % 100) / 10,
    };
  });
}

/** Posts every gateway's batches of the round, each gateway's in order, POST_CONNECTIONS gateways at a time. */
async function ingestBacklog(cluster: Cluster, gateways: Gateway[], base: number): Promise<void> {
  const queue = [...gateways];
  const worker = async () => {
    for (let g = queue.shift(); g; g = queue.shift()) {
      for (let j = 0; j < BATCHES; j++) {
        const readings = batchOf(g, j, base);
        const res = await fetch(`${cluster.baseUrl}/_ingest/pipelines/${g.id}/readings`, {
          method: "POST",
          headers: { authorization: `Bearer ${g.key}`, "content-type": "application/json" },
          body: JSON.stringify({ readings }),
        });
        const body = (await res.json()) as { accepted: number };
        if (res.status !== 200 || body.accepted !== readings.length) throw new Error(`ingest: ${res.status} ${JSON.stringify(body)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: POST_CONNECTIONS }, worker));
}

/**
 * Messages the alerting group has not finished (num_pending + num_ack_pending over its partition
 * consumers). With `done`, a partition found finished is not asked again (nothing is published
 * meanwhile): the polling's own load on NATS shrinks as the backlog does.
 */
async function unfinished(jsm: JetStreamManager, namespace: string, done?: Set<number>): Promise<number> {
  const names = jetStreamNames(namespace, "readings");
  const open = Array.from({ length: PARTITIONS }, (_, k) => k).filter((k) => !done?.has(k));
  const left = await Promise.all(
    open.map(async (k) => {
      const i = await jsm.consumers.info(names.stream, names.partitionDurable("alerting", k));
      const n = i.num_pending + i.num_ack_pending;
      if (n === 0) done?.add(k);
      return n;
    }),
  );
  return left.reduce((a, b) => a + b, 0);
}

/** An alerting replica of the cluster, started, with a health port of its own to tell when it is ready. */
async function alertingReplica(cluster: Cluster): Promise<{ proc: ServiceProcess; ready: () => Promise<boolean> }> {
  const port = await freePort();
  const proc = cluster.addProcess(["alerting"], {
    LOG_LEVEL: "warn",
    HEALTH_PORT: String(port),
    // Stopped between rounds with nothing in flight: no grace for load balancers to catch up.
    DRAIN_GRACE_S: "0",
    ...(process.env.BENCH_ALERTS_SCALE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_ALERTS_SCALE_NODE_OPTIONS } : {}),
  });
  const ready = async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/ready`)).status === 200;
    } catch {
      return false;
    }
  };
  return { proc, ready };
}

async function runRound(cluster: Cluster, pg: Client, jsm: JetStreamManager, gateways: Gateway[], round: number, replicas: number, base: number): Promise<ScaleRound> {
  const namespace = cluster.namespace;
  await ingestBacklog(cluster, gateways, base);
  await pollUntil(async () => Number((await pg.query(`SELECT count(*) AS n FROM pipelines.stream_outbox`)).rows[0].n) === 0, 120_000, "the outbox to drain");
  const messages = gateways.length * BATCHES;
  await pollUntil(async () => (await unfinished(jsm, namespace)) === messages, 30_000, `${messages} messages pending for alerting`);

  const deadlocks = async () =>
    Number((await pg.query(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`)).rows[0].deadlocks);
  const deadlocks0 = await deadlocks();
  const started = performance.now();
  const nodes = await Promise.all(Array.from({ length: replicas }, () => alertingReplica(cluster)));
  let result: Omit<ScaleRound, "deadlocks">;
  try {
    const pending = new Set(nodes);
    await pollUntil(
      async () => {
        for (const n of [...pending]) if (await n.ready()) pending.delete(n);
        return pending.size === 0;
      },
      90_000,
      "the alerting replicas to be ready",
      nodes.map((n) => n.proc),
    );
    const t0 = performance.now();
    const pgPids = await backendPids(pg);
    const natsPids = natsServerPids(Number(new URL(NATS_URL).port || 4222));
    const alertingPids = nodes.map((n) => n.proc.pid!);
    const cpu0 = cpuMs([...alertingPids, ...pgPids, ...natsPids]);
    const machine0 = machineMs();
    const left = await unfinished(jsm, namespace);
    let t1 = t0;
    const done = new Set<number>();
    for (;;) {
      if (nodes.some((n) => !n.proc.running)) throw new Error(`an alerting replica exited:\n${nodes.map((n) => n.proc.output()).join("\n")}`);
      if ((await unfinished(jsm, namespace, done)) === 0) {
        t1 = performance.now();
        break;
      }
      if (performance.now() - t0 > 600_000) throw new Error("the backlog was not evaluated within 10 minutes");
      await sleep(100);
    }
    const machine1 = machineMs();
    const cpu1 = cpuMs([...alertingPids, ...(await backendPids(pg)), ...natsPids]);
    const only = (pids: number[]) => new Map([...cpu1].filter(([pid]) => pids.includes(pid)));
    const pgNow = [...cpu1.keys()].filter((pid) => !alertingPids.includes(pid) && !natsPids.includes(pid));
    const seconds = (t1 - t0) / 1000;
    const readings = left * BATCH;

    const range = [base, base + ROUND_SPAN_MS];
    const count = async (where: string) =>
      Number((await pg.query(`SELECT count(*)::int AS n FROM alerting.alerts WHERE start_ts >= $1 AND start_ts < $2 ${where}`, range)).rows[0].n);
    const opened = await count("");
    const stillActive = await count(`AND state = 'active'`);
    const doubled = Number(
      (await pg.query(`SELECT count(*)::int AS n FROM (SELECT 1 FROM alerting.alerts GROUP BY watcher_id, trigger_id, start_ts HAVING count(*) > 1) d`)).rows[0].n,
    );
    result = {
      round,
      replicas,
      readings,
      seconds,
      rate: readings / seconds,
      startupS: (t0 - started) / 1000,
      early: (messages - left) * BATCH,
      opened,
      expected: gateways.length * TRIGGERS_ON_HOT_SERIES,
      doubled,
      stillActive,
      cpuAlerting: alertingPids.map((pid) => cpuBetween(cpu0, only([pid])) / 1000),
      cpuPg: cpuBetween(cpu0, only(pgNow)) / 1000,
      cpuNats: cpuBetween(cpu0, only(natsPids)) / 1000,
      machineBusy: (machine1.busy - machine0.busy) / Math.max(1, machine1.total - machine0.total),
    };
  } finally {
    await Promise.all(nodes.map((n) => n.proc.stop("SIGTERM")));
  }
  // The statistics reach pg_stat_database when a backend's transaction ends; the replicas' have now.
  await sleep(1000);
  return { ...result, deadlocks: (await deadlocks()) - deadlocks0 };
}

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

/** Runs the rounds and prints the table; answers whether the target was met and every round's alerts were right. */
export async function scaleBench(): Promise<boolean> {
  const cluster = await startCluster({ processes: [["api", "auth", "config"], ["pipelines"]], env: { LOG_LEVEL: "warn" } });
  const pg = new Client({ connectionString: cluster.db!.url });
  await pg.connect();
  const nc = await connect({ servers: NATS_URL });
  const jsm = await nc.jetstreamManager();
  const results: ScaleRound[] = [];
  try {
    // One replica for the setup: it makes the group's partition consumers and answers the watchers' creation.
    const setup = await alertingReplica(cluster);
    const gateways = await (async () => {
      try {
        await pollUntil(
          async () => (await setup.ready()) && (await cluster.http("GET", "/_alerting/watchers/_list", { auth: null })).status === 401,
          90_000,
          "alerting",
          [setup.proc],
        );
        return await seed(cluster);
      } finally {
        await setup.proc.stop("SIGTERM");
      }
    })();
    const [{ n: triggers }] = (await pg.query(`SELECT count(*)::int AS n FROM alerting.triggers`)).rows;
    console.log(
      `Case scale. Setup: ${PIPELINES} gateways of ${MONITORS} monitors (${PIPELINES * SERIES} series), ${triggers} triggers; ` +
        `backlog per round ${(PIPELINES * BATCHES * BATCH).toLocaleString("en")} readings in ${PIPELINES * BATCHES} batches of ${BATCH}, ${PARTITIONS} partitions; rounds ${ROUNDS.join(",")}`,
    );
    // Each round's readings after the previous round's, all in the past.
    let base = Date.now() - (ROUNDS.length + 1) * ROUND_SPAN_MS - 60_000;
    for (let i = 0; i < ROUNDS.length; i++) {
      base += ROUND_SPAN_MS;
      const r = await runRound(cluster, pg, jsm, gateways, i + 1, ROUNDS[i]!, base);
      results.push(r);
      console.log(
        `round ${r.round}, ${r.replicas} replica(s): ${Math.round(r.rate).toLocaleString("en")} readings/s (${r.readings.toLocaleString("en")} in ${r.seconds.toFixed(1)} s), ` +
          `alerts ${r.opened}/${r.expected}, load average ${os.loadavg()[0]!.toFixed(1)}`,
      );
    }
  } finally {
    // The run's streams (readings, alerts, audit and their dead letters) go with it.
    const mine: string[] = [];
    for await (const s of jsm.streams.names()) if (s.startsWith(`${cluster.namespace.replace(/[^A-Za-z0-9_-]/g, "_")}_`)) mine.push(s);
    for (const s of mine) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
    await pg.end();
    await cluster.stop();
  }
  return report(results);
}

/** CPU seconds of the evaluation's processes (alerting, PostgreSQL, NATS) over a round's window. */
const cpuOf = (r: ScaleRound): number => r.cpuAlerting.reduce((a, b) => a + b, 0) + r.cpuPg + r.cpuNats;
/** Their share of the whole machine's CPU time over the window: what is left of `machineBusy` went to other work. */
const ours = (r: ScaleRound): number => cpuOf(r) / (r.seconds * os.cpus().length);

function report(results: ScaleRound[]): boolean {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  console.log(`\nAlert evaluation, 1 vs 2 alerting replicas over NATS: a backlog evaluated from the last replica ready until no partition consumer has anything pending`);
  console.log(`${os.cpus().length} × ${cpu}, Node ${process.version}, ${new Date().toISOString()}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(", ")}\n`);
  console.log(
    "| round | replicas | readings evaluated | seconds | readings/s | start-up s (readings meanwhile) | alerts opened / expected, doubled, left active | deadlocks " +
      "| CPU s: alerting replicas / PostgreSQL / NATS | each replica's share of a core | our share of the machine / machine busy | readings per CPU s |",
  );
  console.log("|---:|---:|---:|---:|---:|---|---|---:|---|---|---|---:|");
  let wrong = false;
  for (const r of results) {
    wrong ||= r.opened !== r.expected || r.doubled > 0 || r.stillActive > 0;
    console.log(
      `| ${r.round} | ${r.replicas} | ${r.readings.toLocaleString("en")} | ${r.seconds.toFixed(1)} | ${Math.round(r.rate).toLocaleString("en")} | ${r.startupS.toFixed(1)} (${r.early.toLocaleString("en")}) | ` +
        `${r.opened} / ${r.expected}, ${r.doubled}, ${r.stillActive} | ${r.deadlocks} | ${r.cpuAlerting.map((c) => c.toFixed(1)).join(" + ")} / ${r.cpuPg.toFixed(1)} / ${r.cpuNats.toFixed(1)} | ` +
        `${r.cpuAlerting.map((c) => `${((100 * c) / r.seconds).toFixed(0)} %`).join(", ")} | ${(100 * ours(r)).toFixed(0)} % / ${(100 * r.machineBusy).toFixed(0)} % | ${Math.round(r.readings / cpuOf(r)).toLocaleString("en")} |`,
    );
  }
  const one = results.filter((r) => r.replicas === 1);
  const two = results.filter((r) => r.replicas === 2);
  if (!one.length || !two.length) {
    console.log(`\nalerts right in every round: ${wrong ? "NO" : "yes"} (the ratio needs rounds of 1 and 2 replicas)`);
    return !wrong;
  }
  const ratio = median(two.map((r) => r.rate)) / median(one.map((r) => r.rate));
  console.log(
    `\nmedians: 1 replica ${Math.round(median(one.map((r) => r.rate))).toLocaleString("en")} readings/s, 2 replicas ${Math.round(median(two.map((r) => r.rate))).toLocaleString("en")} readings/s, ratio ${ratio.toFixed(2)} (target ≥ ${TARGET}): ${ratio >= TARGET ? "met" : "MISSED"}`,
  );
  const perK = (rs: ScaleRound[]) => median(rs.map((r) => (cpuOf(r) * 1e6) / r.readings));
  console.log(`CPU ms per 1,000 readings (alerting + PostgreSQL + NATS, medians): 1 replica ${perK(one).toFixed(1)}, 2 replicas ${perK(two).toFixed(1)}`);
  // What the rate would be with the whole machine for these processes, at the CPU cost measured.
  const ceiling = (os.cpus().length * 1e6) / perK(results);
  console.log(
    `at that cost the machine's ${os.cpus().length} cores evaluate at most ${Math.round(ceiling).toLocaleString("en")} readings/s, ` +
      `${(ceiling / median(one.map((r) => r.rate))).toFixed(2)} × the one-replica median; ` +
      `the machine was ${(100 * Math.min(...results.map((r) => r.machineBusy))).toFixed(0)}–${(100 * Math.max(...results.map((r) => r.machineBusy))).toFixed(0)} % busy, ` +
      `these processes ${(100 * Math.min(...results.map(ours))).toFixed(0)}–${(100 * Math.max(...results.map(ours))).toFixed(0)} % of it`,
  );
  console.log(`alerts right in every round (each expected alert opened once, closed): ${wrong ? "NO" : "yes"}`);
  return ratio >= TARGET && !wrong;
}
