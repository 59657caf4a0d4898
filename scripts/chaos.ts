/**
 * `npm run chaos`: the cluster as it runs in production, on this machine, under load and under
 * faults, and the counts that say whether anything was lost or doubled.
 *
 * - A 3-node NATS JetStream cluster of its own (streams with 3 replicas), a fresh database, a
 *   local SMTP receiver, and one process per service: api, auth, config, pipelines ×2,
 *   alerting ×2, notifier, cm, ems.
 * - Seeds per gateway: a site, plant, function and asset, load monitors and an alarm monitor
 *   (tags with thresholds), an edge pipeline, and a watcher whose trigger opens an alert when
 *   the alarm monitor's temperature reaches 80 °C and emails one user.
 * - Drives for the whole run: per gateway, a load loop posting batches of readings and a
 *   crossing loop posting, one after the other, batches holding one reading above the threshold
 *   and one below it (each accepted crossing opens and closes exactly one alert, so the alerts
 *   and emails expected are known exactly); every batch carries an Idempotency-Key and is sent
 *   again with the same key and bytes after a failure or no answer, with the back-off of docs/api-tour.md, Retries.
 *   Readers send GET lists that each service answers. Every request's wait is recorded.
 * - Faults in turn, a phase each, with steady load between: kill -9 of one replica of each pair,
 *   of each single service, then of a NATS node (and another, the first back). The script plays
 *   the orchestrator: it starts the process (node) again CHAOS_DOWN_S later.
 * - Then, after a bounded settle: readings accepted vs stored vs duplicated, alerts expected vs
 *   opened, emails expected vs received, a table per fault, and a verdict. Exit 1 when anything
 *   was lost or doubled, or a request waited over 2 s after a replica died while another
 *   replica of its service was running.
 *
 * Env: CHAOS_DURATION_S (18: each phase, from a kill to the next), CHAOS_DOWN_S (3: a killed
 * process's time down), CHAOS_FAULTS (pipelines,alerting,api,auth,config,notifier,cm,ems,nats:api,nats:alerting:
 * a service's first process, or a NATS node, by index (nats:0) or as the one a process is connected
 * to at that moment (nats:api)),
 * CHAOS_GATEWAYS (2), CHAOS_MONITORS (4 load monitors a gateway, 2 tags each), CHAOS_BATCH (200
 * readings), CHAOS_BATCH_EVERY_MS (250, per gateway), CHAOS_CROSS_EVERY_MS (1000, per gateway),
 * CHAOS_READERS (3), CHAOS_READ_EVERY_MS (100, per reader), CHAOS_SETTLE_S (60),
 * CHAOS_HTTP_TIMEOUT_MS (15000: a request unanswered this long counts as failed),
 * CHAOS_LOG_LEVEL (the services' LOG_LEVEL, warn).
 * Needs the machine's PostgreSQL and Redis, and nats-server (NATS_SERVER_BIN).
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import { ServiceBroker, type BrokerOptions } from "moleculer";
import { Client } from "pg";
import { pollUntil, startCluster, type Cluster, type ServiceProcess } from "../test/helpers/cluster";
import { startNatsCluster } from "../test/helpers/nats-cluster";
import { ADMIN, basic } from "../test/helpers/node";
import { startSmtp } from "../test/helpers/smtp";
import { gatewayBody, makePlace, makeUser, TAGS, watcherBody, type Place } from "../test/e2e/alerting-fixtures";

const num = (name: string, def: number) => {
  const v = Number(process.env[name] ?? def);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a number >= 0`);
  return v;
};
const PHASE_S = num("CHAOS_DURATION_S", 18);
const DOWN_S = num("CHAOS_DOWN_S", 3);
const GATEWAYS = Math.max(1, num("CHAOS_GATEWAYS", 2));
const MONITORS = Math.max(1, num("CHAOS_MONITORS", 4));
const BATCH = Math.max(1, num("CHAOS_BATCH", 200));
const BATCH_EVERY_MS = num("CHAOS_BATCH_EVERY_MS", 250);
const CROSS_EVERY_MS = num("CHAOS_CROSS_EVERY_MS", 1000);
const READERS = num("CHAOS_READERS", 3);
const READ_EVERY_MS = num("CHAOS_READ_EVERY_MS", 100);
const SETTLE_S = num("CHAOS_SETTLE_S", 60);
const HTTP_TIMEOUT_MS = num("CHAOS_HTTP_TIMEOUT_MS", 15_000);
const FAULTS = (process.env.CHAOS_FAULTS ?? "pipelines,alerting,api,auth,config,notifier,cm,ems,nats:api,nats:alerting")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
/** The rule (docs/operations.md, "Failure modes"): after a replica's death, while another replica runs, no request waits longer. */
const REPLICA_MAX_WAIT_MS = 2000;
/** The alarm's threshold (the trigger: temp >= 80) and the two values of a crossing. */
const HIGH = 90;
const LOW = 50;
const opsOf = (gateway: number) => `chaos-ops-${gateway}@example.com`;

const SINGLES = ["api", "auth", "config", "notifier", "cm", "ems"];
const REPLICATED = ["pipelines", "alerting"];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (msg: string) => console.log(`[chaos ${new Date().toISOString().slice(11, 19)}] ${msg}`);

// ---------------------------------------------------------------------------------------------
// Requests, each recorded with its wait.

type Kind = "ingest" | "crossing" | "read";

interface Sent {
  kind: Kind;
  start: number;
  end: number;
  /** 0: no answer (refused, reset, or none within CHAOS_HTTP_TIMEOUT_MS). */
  status: number;
  path: string;
}

const sent: Sent[] = [];
let baseUrl = "";

async function request(kind: Kind, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
  const start = Date.now();
  let status = 0;
  let text = "";
  try {
    const res = await fetch(baseUrl + path, { method, headers, body, signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
    text = await res.text();
    status = res.status;
  } catch {
    status = 0;
  }
  sent.push({ kind, start, end: Date.now(), status, path: path.replace(/\?.*$/, "") });
  return { status, text };
}

// ---------------------------------------------------------------------------------------------
// Gateways: load and crossings, every batch with its key, retried as docs/api-tour.md (Retries) tells gateways to.

interface Gateway {
  index: number;
  id: string;
  key: string;
  place: Place;
  /** Load monitors (every tag of TAGS each). */
  monitors: string[];
}

interface Totals {
  /** Readings of the batches answered 200 (each key counted once). */
  accepted: number;
  batches: number;
  /** Batches given up after the deadline without a 200. */
  abandoned: number;
  /** Sends after the first of a batch. */
  retries: number;
  /** Per gateway, the high reading's ts of each accepted crossing: the alerts expected. */
  crossings: Map<string, number[]>;
}

const totals: Totals = { accepted: 0, batches: 0, abandoned: 0, retries: 0, crossings: new Map() };
let drive = true;
/** Batches still unanswered at this instant are given up (after the drive has stopped). */
let giveUpAt = Infinity;

/** The back-off of docs/api-tour.md, Retries: 0.5 s, 1 s, 2 s, … up to 10 s, each with jitter. */
const backoff = (attempt: number) => Math.round(Math.min(10_000, 500 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2));

/** Sends one batch until it is answered 200; the same key and bytes every time. */
async function sendBatch(gw: Gateway, kind: Kind, readings: unknown[]): Promise<{ accepted: number } | undefined> {
  const key = randomUUID();
  const body = JSON.stringify({ readings });
  const headers = { authorization: `Bearer ${gw.key}`, "content-type": "application/json", "idempotency-key": key };
  for (let attempt = 1; ; attempt++) {
    const res = await request(kind, "POST", `/_ingest/pipelines/${gw.id}/readings`, headers, body);
    if (res.status === 200) {
      const answer = JSON.parse(res.text) as { accepted: number; rejected: unknown[] };
      if (answer.rejected.length) throw new Error(`readings rejected: ${res.text.slice(0, 300)}`);
      totals.accepted += answer.accepted;
      totals.batches += 1;
      return answer;
    }
    // Other 4xx say the request is wrong: the script's fault, not the cluster's.
    if (res.status !== 0 && res.status !== 409 && res.status !== 429 && res.status < 500) throw new Error(`batch refused: ${res.status} ${res.text.slice(0, 300)}`);
    if (Date.now() > giveUpAt) {
      totals.abandoned += 1;
      return undefined;
    }
    totals.retries += 1;
    await sleep(backoff(attempt));
  }
}

/** Waits until `every` ms after `since`, unless the drive stopped. */
async function pace(since: number, every: number): Promise<void> {
  const rest = since + every - Date.now();
  if (rest > 0 && drive) await sleep(rest);
}

/**
 * Batches of every tag of every load monitor at successive instants, 1 ms apart and never
 * repeated, values well under the thresholds (the gateway's series alone decide the rows).
 */
async function loadLoop(gw: Gateway): Promise<void> {
  const series = gw.monitors.flatMap((monitor_id) => TAGS.map((t) => ({ monitor_id, tag_id: t.tag_id })));
  const instants = Math.max(1, Math.ceil(BATCH / series.length));
  let ts = Date.now() - 3_600_000;
  while (drive) {
    const started = Date.now();
    const readings = [];
    for (let i = 0; i < instants; i++, ts++) {
      for (const s of series) readings.push({ ...s, ts, value: Math.round((s.tag_id === "temp" ? 55 : 2) * (0.9 + Math.random() * 0.2) * 100) / 100 });
    }
    await sendBatch(gw, "ingest", readings);
    await pace(started, BATCH_EVERY_MS);
  }
}

/**
 * The alarm monitor's temperature, one batch at a time (the next only once the last is
 * answered, so the series' clock only moves forward): a reading at 90 °C and one at 50 °C a
 * millisecond later. Each accepted batch opens an alert and closes it.
 */
async function crossingLoop(gw: Gateway): Promise<void> {
  const opened: number[] = [];
  totals.crossings.set(gw.id, opened);
  let last = 0;
  while (drive) {
    const started = Date.now();
    const ts = Math.max(started, last + 2);
    last = ts + 1;
    const m = gw.place.monitor_id;
    const answer = await sendBatch(gw, "crossing", [
      { monitor_id: m, tag_id: "temp", ts, value: HIGH },
      { monitor_id: m, tag_id: "temp", ts: ts + 1, value: LOW },
    ]);
    // Both readings kept: an alert opens and closes (a batch with a reading refused would be no crossing).
    if (answer?.accepted === 2) opened.push(ts);
    await pace(started, CROSS_EVERY_MS);
  }
}

/** GET lists answered by each service, in turn. */
function readPaths(gateways: Gateway[]): string[] {
  const { function_id: fn, plant_id, site_id } = gateways[0]!.place;
  const from = new Date(Date.now() - 86_400_000).toISOString();
  const to = new Date(Date.now() + 86_400_000).toISOString();
  return [
    "/_config/sites/_list",
    `/_config/monitors/_list?function_id=${fn}`,
    `/_config/users/_list?site_id=${site_id}&plant_id=${plant_id}`,
    `/_config/pipelines/_list?function_id=${fn}`,
    `/_alerting/watchers/_list?function_id=${fn}`,
    `/_alerting/alerts/_count?function_id=${fn}`,
    `/_cm/assets/_list?function_id=${fn}`,
    `/_ems/monitor/_all?function_id=${fn}&from=${from}&to=${to}&label=function`,
  ];
}

async function readLoop(paths: string[], offset: number): Promise<void> {
  const headers = { authorization: basic(ADMIN) };
  for (let i = offset; drive; i++) {
    const started = Date.now();
    await request("read", "GET", paths[i % paths.length]!, headers);
    await pace(started, READ_EVERY_MS);
  }
}

// ---------------------------------------------------------------------------------------------
// Setup and seeding.

async function ok<T>(what: string, send: () => Promise<{ status: number; text: string }>): Promise<T> {
  let res = await send();
  // 503 while a process has not yet learnt of the others.
  for (let i = 0; i < 50 && res.status === 503; i++) {
    await sleep(200);
    res = await send();
  }
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
  return JSON.parse(res.text) as T;
}

async function seed(cluster: Cluster): Promise<Gateway[]> {
  const http = cluster.http;
  const adminCall = (method: string, path: string, body: unknown) => async () => {
    const res = await http(method, path, { body });
    return { status: res.status, text: JSON.stringify(res.body) };
  };
  const gateways: Gateway[] = [];
  for (let g = 0; g < GATEWAYS; g++) {
    const place = await makePlace(http, `chaos-${g}`);
    // Notified of its plant's alerts only: a user per gateway's plant.
    const ops = opsOf(g);
    await makeUser(http, { username: ops, user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id });
    const monitors: string[] = [];
    for (let m = 0; m < MONITORS; m++) {
      const created = await ok<{ id: string }>(
        `monitor ${g}/${m}`,
        adminCall("POST", "/_config/monitors", { monitor_name: `Load ${g}-${m}`, monitor_type: "condition-monitor", asset_id: place.asset_id, tags: TAGS }),
      );
      monitors.push(created.id);
    }
    const body = {
      ...gatewayBody(place, `Chaos gateway ${g}`),
      registration: [place.monitor_id, ...monitors].map((monitor_id, i) => ({ monitor_id, slave_id: String(i + 1), registered_by_asset: false })),
    };
    const gw = await ok<{ id: string; ingest_key: string }>(`gateway ${g}`, adminCall("POST", "/_config/pipelines/edge-server", body));
    const watcher = watcherBody(place, gw.id, { watcher_name: `Chaos watch ${g}` }, {
      id: "cross",
      name: "Alarm temperature high",
      minimum_duration: "0s",
      notifyTo: { email: true, sms: false, whatsapp: false, users: [ops] },
    });
    // Thresholds on the load monitors too, never crossed: their batches go through the evaluator.
    watcher.triggers.push({
      ...watcher.triggers[0]!,
      id: "load",
      name: "Load temperature extreme",
      trigger_relation: "OR",
      condition: monitors.map((monitor_id) => ({ comparison: ">", monitor_id, tag_id: "temp", threshold: "200" })),
    });
    await ok(`watcher ${g}`, adminCall("POST", "/_alerting/watchers", watcher));
    gateways.push({ index: g, id: gw.id, key: gw.ingest_key, place, monitors });
  }
  return gateways;
}

// ---------------------------------------------------------------------------------------------
// The orchestrator's view: which process runs, and when one is back in the api's rotation.

interface NodeInfo {
  id: string;
  available: boolean;
  instanceID?: string;
}

class Registry {
  constructor(
    private readonly bystander: ServiceBroker,
    private readonly apiNode: string,
  ) {}

  /** The api's view of the nodes. */
  async nodes(): Promise<NodeInfo[]> {
    return this.bystander.call<NodeInfo[], Record<string, never>>("$node.list", {}, { nodeID: this.apiNode, timeout: 2000 });
  }

  /** The nodes the api would send the action to now. */
  async rotation(action: string): Promise<string[]> {
    const actions = await this.bystander.call<{ name: string; endpoints?: { nodeID: string; available: boolean }[] }[], { withEndpoints: boolean }>(
      "$node.actions",
      { withEndpoints: true },
      { nodeID: this.apiNode, timeout: 2000 },
    );
    return (actions.find((a) => a.name === action)?.endpoints ?? []).filter((e) => e.available).map((e) => e.nodeID);
  }
}

// ---------------------------------------------------------------------------------------------
// Faults.

/**
 * The NATS nodes a process is connected to (the transporter's and the streams' connections; Linux): its sockets (/proc/<pid>/fd) matched against
 * the TCP connections of /proc/<pid>/net/tcp by inode, the remote port against the nodes' ports.
 */
function natsNodesOf(pid: number, urls: string[]): number[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    const link = (() => {
      try {
        return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return "";
      }
    })();
    const m = /^socket:\[(\d+)\]$/.exec(link);
    if (m) inodes.add(m[1]!);
  }
  const ports = urls.map((u) => Number(new URL(u).port));
  const found = new Set<number>();
  for (const file of ["tcp", "tcp6"]) {
    const lines = fs.readFileSync(`/proc/${pid}/net/${file}`, "utf8").split("\n").slice(1);
    for (const line of lines) {
      const cols = line.trim().split(/\s+/);
      // local_address rem_address st … inode; state 01 is ESTABLISHED.
      if (cols.length < 10 || cols[3] !== "01" || !inodes.has(cols[9]!)) continue;
      const node = ports.indexOf(parseInt(cols[2]!.split(":")[1]!, 16));
      if (node >= 0) found.add(node);
    }
  }
  return [...found].sort();
}

interface Phase {
  name: string;
  /** The process (or NATS node) killed; none for the baseline. */
  target: string;
  replica: boolean;
  at: number;
  /** Seconds from the kill until the process was started again, and until it was back. */
  restartedAfterS?: number;
  backAfterS?: number;
  note?: string;
}

interface PhaseFigures {
  requests: number;
  failed: number;
  failedIngest: number;
  failedRead: number;
  longestMs: number;
  longestKind: string;
}

function figuresOf(from: number, to: number): PhaseFigures {
  const inWindow = sent.filter((s) => s.end >= from && s.end < to);
  const failed = inWindow.filter((s) => s.status < 200 || s.status > 299);
  let longest: Sent | undefined;
  for (const s of inWindow) if (!longest || s.end - s.start > longest.end - longest.start) longest = s;
  return {
    requests: inWindow.length,
    failed: failed.length,
    failedIngest: failed.filter((s) => s.kind !== "read").length,
    failedRead: failed.filter((s) => s.kind === "read").length,
    longestMs: longest ? longest.end - longest.start : 0,
    longestKind: longest ? `${longest.kind === "read" ? `GET ${longest.path}` : longest.kind}${longest.status === 200 ? "" : ` ${longest.status || "no answer"}`}` : "",
  };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const started = Date.now();
  const extra = ["cm", "ems"];
  const processes = [...SINGLES, ...REPLICATED, ...REPLICATED.map((s) => `${s}#2`)];
  const faults = FAULTS.filter((f) => SINGLES.includes(f) || REPLICATED.includes(f) || /^nats:\d+$/.test(f) || processes.includes(f.replace(/^nats:/, "")));
  const unknown = FAULTS.filter((f) => !faults.includes(f));
  if (unknown.length) throw new Error(`CHAOS_FAULTS: unknown ${unknown.join(", ")} (services ${[...REPLICATED, ...SINGLES].join(", ")}, or nats:<node>)`);

  log(`${os.cpus().length} cores, Node ${process.version}; phases of ${PHASE_S} s, a killed process down ${DOWN_S} s; faults: ${faults.join(", ")}`);
  const cleanup: (() => Promise<unknown>)[] = [];
  const onSignal = () => {
    log("interrupted: cleaning up");
    drive = false;
    void runCleanup().finally(() => process.exit(130));
  };
  let cleaned = false;
  const runCleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    for (const step of cleanup.reverse()) await step().catch((err: unknown) => log(`cleanup: ${(err as Error).message}`));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    const nats = await startNatsCluster({ size: 3 });
    cleanup.push(() => nats.stop());
    const smtp = await startSmtp();
    cleanup.push(() => smtp.stop());
    log(`NATS cluster ${nats.url}; SMTP receiver ${smtp.url}; starting the services`);

    const cluster = await startCluster({
      processes: [["api"], ["auth"], ["config"], ["pipelines"], ["alerting"], ["notifier"], ...extra.map((s) => [s])],
      env: { TRANSPORTER: nats.url, STREAM_REPLICAS: "3", SMTP_URL: smtp.url, LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? "warn" },
    });
    cleanup.push(() => cluster.stop());
    baseUrl = cluster.baseUrl;
    const procs = new Map<string, ServiceProcess>();
    for (const s of [...SINGLES, ...REPLICATED]) procs.set(s, cluster.process(s));
    for (const s of REPLICATED) procs.set(`${s}#2`, cluster.addProcess([s]));
    const nodeOf = (name: string) => `${cluster.namespace}-${name}`;

    const bystander = new ServiceBroker({
      namespace: cluster.namespace,
      nodeID: nodeOf(`chaos-${process.pid}`),
      transporter: nats.url as BrokerOptions["transporter"],
      logger: false,
    });
    await bystander.start();
    cleanup.push(() => bystander.stop());
    const registry = new Registry(bystander, nodeOf("api"));
    const all = [...procs.values()];
    await pollUntil(async () => (await registry.rotation("pipelines.ingest.readings")).length === 2, 90_000, "two pipelines replicas in the api's rotation", all);
    await pollUntil(async () => (await registry.rotation("alerting.alerts.list")).length === 2, 90_000, "two alerting replicas in the api's rotation", all);

    const db = new Client({ connectionString: cluster.db!.url });
    await db.connect();
    cleanup.push(() => db.end());
    const gateways = await seed(cluster);
    log(`cluster up and seeded in ${((Date.now() - started) / 1000).toFixed(0)} s: ${all.length} service processes, ${GATEWAYS} gateways of ${MONITORS + 1} monitors`);

    // Every read path answers 200 before the drive: a failure later is the fault's.
    const paths = readPaths(gateways);
    for (const path of paths) await ok(`GET ${path}`, () => request("read", "GET", path, { authorization: basic(ADMIN) }));
    sent.length = 0;

    // The drive.
    const loops: Promise<void>[] = [];
    for (const gw of gateways) loops.push(loadLoop(gw), crossingLoop(gw));
    for (let r = 0; r < READERS; r++) loops.push(readLoop(paths, r * 3));
    let loopError: unknown;
    const driving = Promise.all(loops).catch((err: unknown) => {
      loopError = err;
      drive = false;
    });

    const phases: Phase[] = [{ name: "no fault (baseline)", target: "", replica: false, at: Date.now() }];
    await sleep(PHASE_S * 1000);

    for (const fault of faults) {
      if (loopError) break;
      const nats_ = /^nats:(.+)$/.exec(fault);
      if (nats_) {
        // A node by its index, or the one a process is connected to now.
        const of = nats_[1]!;
        const byIndex = /^\d+$/.test(of);
        const connected = byIndex ? [Number(of)] : natsNodesOf(procs.get(of)!.pid!, nats.urls);
        const i = connected[0];
        if (i === undefined) throw new Error(`no NATS connection found for ${of}`);
        const phase: Phase = {
          name: `NATS node ${i} killed${byIndex ? "" : ` (${of} connected to ${connected.length > 1 ? `nodes ${connected.join(" and ")}` : "it"})`}`,
          target: `nats-${i}`,
          replica: false,
          at: Date.now(),
        };
        phases.push(phase);
        log(`${phase.name}`);
        await nats.kill(i);
        await sleep(DOWN_S * 1000);
        await nats.restart(i);
        phase.restartedAfterS = (Date.now() - phase.at) / 1000;
        await nats.ready();
        phase.backAfterS = (Date.now() - phase.at) / 1000;
      } else {
        const proc = procs.get(fault)!;
        const replica = REPLICATED.includes(fault.replace(/#\d+$/, ""));
        const before = (await registry.nodes().catch(() => [])).find((n) => n.id === nodeOf(proc.name))?.instanceID;
        const phase: Phase = { name: `${proc.name} killed${replica ? " (a replica; the other runs)" : ""}`, target: proc.name, replica, at: Date.now() };
        phases.push(phase);
        log(phase.name);
        await proc.stop("SIGKILL");
        await sleep(DOWN_S * 1000);
        proc.start();
        phase.restartedAfterS = (Date.now() - phase.at) / 1000;
        // Back: the new instance known and available to the api (the api itself: answering).
        const back =
          fault === "api"
            ? async () => (await request("read", "GET", "/_config/sites/_list", { authorization: basic(ADMIN) })).status === 200
            : async () => {
                const node = (await registry.nodes()).find((n) => n.id === nodeOf(proc.name));
                return !!node && node.available && node.instanceID !== before;
              };
        await pollUntil(back, 90_000, `${proc.name} back`, all).catch((err: unknown) => {
          phase.note = (err as Error).message.split("\n")[0];
        });
        phase.backAfterS = (Date.now() - phase.at) / 1000;
      }
      log(`  restarted after ${phase_(phases).restartedAfterS?.toFixed(1)} s, back after ${phase_(phases).backAfterS?.toFixed(1)} s`);
      await sleep(Math.max(2000, phase_(phases).at + PHASE_S * 1000 - Date.now()));
    }

    // Stop sending new batches; the ones unanswered go on being sent until the settle's end.
    const driveEnd = Date.now();
    drive = false;
    giveUpAt = driveEnd + SETTLE_S * 1000;
    log("drive stopped; waiting for the batches in flight and the stream consumers");
    await driving;
    if (loopError) throw loopError;
    const answeredAt = Date.now();

    // Settle: stored rows, alerts and emails reach what is expected, or stop moving, within SETTLE_S.
    const expectedAlerts = [...totals.crossings.values()].reduce((n, l) => n + l.length, 0);
    const counts = async () => {
      const r = (await db.query(`SELECT count(*)::int AS rows, count(DISTINCT (monitor_id, tag_id, ts))::int AS distinct_rows FROM pipelines.readings`)).rows[0] as { rows: number; distinct_rows: number };
      const a = (await db.query(`SELECT count(*)::int AS n FROM alerting.alerts WHERE trigger_id = 'cross' AND is_hidden = 0`)).rows[0] as { n: number };
      const mails = smtp.received.filter((m) => m.text.includes("Alert ID: ")).length;
      return { ...r, alerts: a.n, mails };
    };
    const settleEnd = Date.now() + SETTLE_S * 1000;
    /** Seconds after the drive stopped when each count reached what was expected. */
    const reached: Record<"readings" | "alerts" | "emails", number | undefined> = { readings: undefined, alerts: undefined, emails: undefined };
    const mark = (c: Awaited<ReturnType<typeof counts>>) => {
      const at = (Date.now() - driveEnd) / 1000;
      if (reached.readings === undefined && c.distinct_rows >= totals.accepted) reached.readings = at;
      if (reached.alerts === undefined && c.alerts >= expectedAlerts) reached.alerts = at;
      if (reached.emails === undefined && c.mails >= expectedAlerts) reached.emails = at;
    };
    let c = await counts();
    mark(c);
    while (Date.now() < settleEnd && Object.values(reached).some((x) => x === undefined)) {
      await sleep(500);
      c = await counts();
      mark(c);
    }
    // A doubled alert or email would come from a redelivery: give it a moment to show.
    await sleep(3000);
    c = await counts();
    const settledS = (Date.now() - driveEnd) / 1000;

    // Alerts by the crossing that opened them (start_ts is the high reading's time).
    const alertRows = (await db.query(`SELECT a.alert_id, a.watcher_id, a.start_ts::bigint AS start_ts, w.gateway_id FROM alerting.alerts a JOIN alerting.watchers w USING (watcher_id) WHERE a.trigger_id = 'cross' AND a.is_hidden = 0`)).rows as {
      alert_id: string;
      start_ts: string;
      gateway_id: string;
    }[];
    const openedBy = new Map<string, string[]>();
    for (const a of alertRows) {
      const k = `${a.gateway_id}/${a.start_ts}`;
      openedBy.set(k, [...(openedBy.get(k) ?? []), a.alert_id]);
    }
    const expectedKeys = new Set([...totals.crossings].flatMap(([gw, list]) => list.map((ts) => `${gw}/${ts}`)));
    const alertsMissed = [...expectedKeys].filter((k) => !openedBy.has(k)).length;
    const alertsDoubled = [...openedBy.values()].reduce((n, ids) => n + ids.length - 1, 0);
    const alertsUnexpected = [...openedBy.keys()].filter((k) => !expectedKeys.has(k)).length;
    // Emails per alert: one each (one recipient, email only).
    const mailsPerAlert = new Map<string, number>();
    for (const m of smtp.received) {
      const id = /Alert ID: ([0-9a-f-]{36})/.exec(m.text)?.[1];
      if (id) mailsPerAlert.set(id, (mailsPerAlert.get(id) ?? 0) + m.to.length);
    }
    const openedIds = alertRows.map((a) => a.alert_id);
    const mailsMissed = openedIds.filter((id) => !mailsPerAlert.has(id)).length + alertsMissed;
    const mailsDoubled = [...mailsPerAlert.values()].reduce((n, k) => n + Math.max(0, k - 1), 0);

    const lost = Math.max(0, totals.accepted - c.distinct_rows);
    const unacknowledged = Math.max(0, c.distinct_rows - totals.accepted);
    const duplicated = c.rows - c.distinct_rows;

    // The report.
    const ends = [...phases.slice(1).map((p) => p.at), answeredAt];
    const rows = phases.map((p, i) => ({ p, f: figuresOf(p.at, ends[i]!) }));
    const slow = rows.filter((r) => r.p.replica && r.f.longestMs > REPLICA_MAX_WAIT_MS);
    const perKind = (k: Kind) => sent.filter((s) => s.kind === k);
    const longestOf = (list: Sent[]) => list.reduce((m, s) => Math.max(m, s.end - s.start), 0);

    console.log("");
    console.log(`npm run chaos: ${os.cpus().length} cores, Node ${process.version}, ${new Date().toISOString()}; ${all.length} service processes, 3 NATS nodes (streams R3)`);
    console.log(
      `drive: ${GATEWAYS} gateways × (load batches of ${BATCH} readings every ${BATCH_EVERY_MS} ms + a crossing every ${CROSS_EVERY_MS} ms), ${READERS} readers every ${READ_EVERY_MS} ms; phases of ${PHASE_S} s; a killed process (or NATS node) started again by the script ${DOWN_S} s later, as Kubernetes would`,
    );
    console.log("");
    console.log("| fault | replica (another ran) | restarted after s | back after s | requests | failed (ingest / read) | longest wait ms | |");
    console.log("|---|---|---:|---:|---:|---|---:|---|");
    for (const { p, f } of rows) {
      const verdict = p.replica ? (f.longestMs > REPLICA_MAX_WAIT_MS ? "OVER 2 s" : "≤ 2 s") : "";
      console.log(
        `| ${p.name} | ${p.target ? (p.replica ? "yes" : "no") : ""} | ${p.restartedAfterS?.toFixed(1) ?? ""} | ${p.backAfterS?.toFixed(1) ?? ""}${p.note ? ` (${p.note})` : ""} | ${f.requests} | ${f.failed} (${f.failedIngest} / ${f.failedRead}) | ${f.longestMs} (${f.longestKind}) | ${verdict} |`,
      );
    }
    console.log("");
    console.log("| what | expected | found | lost / missed | doubled |");
    console.log("|---|---:|---:|---:|---:|");
    console.log(`| readings (accepted → rows in pipelines.readings) | ${totals.accepted} | ${c.rows} | ${lost} | ${duplicated} |`);
    console.log(`| alerts (crossings accepted → opened) | ${expectedKeys.size} | ${alertRows.length} | ${alertsMissed} | ${alertsDoubled} |`);
    console.log(`| notifications (alerts opened → emails received) | ${openedIds.length} | ${[...mailsPerAlert.values()].reduce((n, k) => n + k, 0)} | ${mailsMissed} | ${mailsDoubled} |`);
    console.log("");
    console.log(
      `batches answered 200: ${totals.batches}, sends again with the same key: ${totals.retries}, given up: ${totals.abandoned}` +
        (unacknowledged ? `, readings stored whose batch was never answered 200: ${unacknowledged}` : "") +
        (alertsUnexpected ? `, alerts of no accepted crossing: ${alertsUnexpected}` : ""),
    );
    console.log(
      `requests: ${sent.length} (${perKind("ingest").length} load, ${perKind("crossing").length} crossing, ${perKind("read").length} read); longest wait over the run: ` +
        `${longestOf(sent)} ms (load ${longestOf(perKind("ingest"))}, crossing ${longestOf(perKind("crossing"))}, read ${longestOf(perKind("read"))}); ` +
        `settled ${settledS.toFixed(1)} s after the drive stopped (all readings stored after ${reached.readings?.toFixed(1) ?? "-"} s, alerts opened ${reached.alerts?.toFixed(1) ?? "-"} s, emails in ${reached.emails?.toFixed(1) ?? "-"} s); run ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );

    // Every request that waited over 2 s, against the fault before it: what a reader would look into.
    const long = sent.filter((x) => x.end - x.start > REPLICA_MAX_WAIT_MS).sort((a, b) => a.start - b.start);
    if (long.length) {
      console.log(`\nrequests that waited over ${REPLICA_MAX_WAIT_MS / 1000} s: ${long.length}`);
      for (const x of long.slice(0, 20)) {
        const p = [...phases].reverse().find((ph) => ph.at <= x.start) ?? phases[0]!;
        console.log(`  ${x.kind} ${x.path}: ${x.status || "no answer"} after ${x.end - x.start} ms, sent ${((x.start - p.at) / 1000).toFixed(1)} s after "${p.name}"`);
      }
    }

    if (alertsMissed) {
      // Each missed crossing: when it was sent (its ts is the send time), against the fault before it.
      for (const k of [...expectedKeys].filter((x) => !openedBy.has(x))) {
        const [gw, ts] = k.split("/");
        const p = [...phases].reverse().find((ph) => ph.at <= Number(ts)) ?? phases[0]!;
        const stored = (await db.query(`SELECT count(*)::int AS n FROM pipelines.readings WHERE pipeline_id = $1 AND ts IN (to_timestamp($2 / 1000.0), to_timestamp(($2 + 1) / 1000.0))`, [gw, Number(ts)])).rows[0];
        console.log(`missed crossing: gateway ${gateways.findIndex((g) => g.id === gw)}, ts ${new Date(Number(ts)).toISOString()}, ${((Number(ts) - p.at) / 1000).toFixed(1)} s after "${p.name}", its 2 readings stored: ${stored.n}`);
      }
      for (const [name, proc] of procs) {
        const lines = proc.output().split("\n").filter((l) => /ERROR|dead-letter|lost/.test(l));
        if (lines.length) console.log(`--- ${name}: errors and dead letters\n${lines.slice(-20).join("\n")}`);
      }
    }

    if (mailsMissed || alertsMissed || lost) {
      // Where the missing ones stand: staged in alerting's outbox, recorded by the notifier, or neither.
      const outbox = (await db.query(`SELECT stream, count(*)::int AS n FROM alerting.stream_outbox GROUP BY stream`)).rows;
      const notes = (await db.query(`SELECT status, count(*)::int AS n, max(attempts) AS attempts, min(last_error) AS error FROM notifier.notifications WHERE idempotency_key LIKE 'alert:%' GROUP BY status`)).rows;
      const unmailed = openedIds.filter((id) => !mailsPerAlert.has(id));
      const recorded = unmailed.length
        ? (await db.query(`SELECT count(*)::int AS n FROM notifier.notifications WHERE split_part(idempotency_key, ':', 2) = ANY($1)`, [unmailed])).rows[0]
        : { n: 0 };
      const opened = (await db.query(`SELECT min(opened_at) AS first, max(opened_at) AS last FROM alerting.alerts WHERE alert_id = ANY($1)`, [unmailed])).rows[0];
      console.log(`\ndiagnosis: alerting outbox ${JSON.stringify(outbox)}; notifier rows ${JSON.stringify(notes)}; of the ${unmailed.length} alerts without email, ${recorded.n} recorded by the notifier, opened ${new Date(Number(opened.first)).toISOString()} to ${new Date(Number(opened.last)).toISOString()}`);
      for (const name of ["notifier", "alerting", "alerting#2"]) console.log(`--- ${name} (last lines)\n${procs.get(name)!.output().split("\n").slice(-40).join("\n")}`);
    }

    const problems: string[] = [];
    if (lost) problems.push(`${lost} readings lost`);
    if (duplicated) problems.push(`${duplicated} readings duplicated`);
    if (alertsMissed || alertsDoubled) problems.push(`alerts ${alertsMissed} missed, ${alertsDoubled} doubled`);
    if (mailsMissed || mailsDoubled) problems.push(`notifications ${mailsMissed} missed, ${mailsDoubled} doubled`);
    if (totals.abandoned) problems.push(`${totals.abandoned} batches never answered 200 within the settle`);
    for (const r of slow) problems.push(`${r.p.name}: a request waited ${r.f.longestMs} ms (> ${REPLICA_MAX_WAIT_MS})`);
    console.log("");
    console.log(
      problems.length
        ? `VERDICT: FAIL: ${problems.join("; ")}`
        : `VERDICT: PASS: 0 lost, 0 doubled (readings, alerts, notifications); no wait over ${REPLICA_MAX_WAIT_MS / 1000} s after a replica's death`,
    );
    return problems.length ? 1 : 0;
  } finally {
    drive = false;
    await runCleanup();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

const phase_ = (phases: Phase[]): Phase => phases[phases.length - 1]!;

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`chaos: ${(err as Error).stack ?? String(err)}`);
    process.exit(2);
  },
);
