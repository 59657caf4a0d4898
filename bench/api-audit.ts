/**
 * bench:api's case `audit` (BENCH_CASES=audit): what the audit trail (docs/security.md) costs.
 * Two clusters of api, auth and config (three processes each, NATS + Redis, as case (b)), on two
 * fresh databases, alike but for AUDIT_TRAIL: on (every change stages its entry in its
 * transaction, config appends it to the hash chain) and off (AUDIT_TRAIL=false: no staging, the
 * writes as they were before the trail). In turns, BENCH_ROUNDS times, the order swapped each
 * round:
 *   writes  asset creates and updates, half and half, by BENCH_WRITE_CONNECTIONS connections at
 *           once (as fast as the machine answers): successful writes/s;
 *   reads   GET /_config/assets/_list?function_id=… (BENCH_AUDIT_READ_ASSETS assets): req/s.
 * The ratio on/off is taken within a round, then the median. After each "on" write run the
 * bench waits for the trail to catch up (every write's entry appended) and reports how long
 * that took: the entries are written after the answer, so that lag is part of the cost.
 */
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import { Client } from "pg";
import { createTestDatabase, type TestDatabase } from "../test/helpers/db";
import { ADMIN, basic, httpClient } from "../test/helpers/node";
import { pollUntil, startCluster, type Cluster } from "../test/helpers/cluster";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const WRITE_CONNECTIONS = Number(process.env.BENCH_WRITE_CONNECTIONS ?? 16);
const READ_ASSETS = Number(process.env.BENCH_AUDIT_READ_ASSETS ?? 100);
/** Assets the updates pick from. */
const UPDATED_ASSETS = 200;
/** The target: the trail may cost writes at most this share (15 %) of their throughput. */
const WRITE_COST_TARGET = 0.15;

interface Target {
  key: "on" | "off";
  cluster: Cluster;
  db: TestDatabase;
  readPath: string;
  writeFunction: string;
  assets: string[];
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Writes only: seconds from the end of the run until every entry was in the log (on), 0 (off). */
  drainS?: number;
  /** Writes only: CPU ms per successful write of the api, auth and config processes and the database's backends, catching up included. */
  cpu?: Record<Service, number>;
}

const SERVICES = ["api", "auth", "config", "pg"] as const;
/** The cluster's processes, and `pg`: the PostgreSQL backends serving its database. */
type Service = (typeof SERVICES)[number];

/** CPU ms a process has used so far (Linux /proc: user + system ticks of 10 ms); 0 where it cannot be read. */
function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** CPU ms used so far by each process of the target, and by each PostgreSQL backend of its database (by pid). */
async function cpuOf(t: Target): Promise<{ services: Record<Exclude<Service, "pg">, number>; pg: Map<number, number> }> {
  const pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  let pids: number[];
  try {
    pids = (await pg.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)).rows.map((r) => r.pid);
  } finally {
    await pg.end();
  }
  return {
    services: { api: cpuMs(t.cluster.process("api").pid), auth: cpuMs(t.cluster.process("auth").pid), config: cpuMs(t.cluster.process("config").pid) },
    pg: new Map(pids.map((pid) => [pid, cpuMs(pid)])),
  };
}

/** CPU ms used between two readings; a backend that came meanwhile counts from nothing. */
function cpuBetween(before: Awaited<ReturnType<typeof cpuOf>>, after: Awaited<ReturnType<typeof cpuOf>>): Record<Service, number> {
  let pg = 0;
  for (const [pid, ms] of after.pg) pg += ms - (before.pg.get(pid) ?? 0);
  return { api: after.services.api - before.services.api, auth: after.services.auth - before.services.auth, config: after.services.config - before.services.config, pg };
}

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function seed(cluster: Cluster, databaseUrl: string): Promise<Omit<Target, "key" | "cluster" | "db">> {
  const http = httpClient(cluster.baseUrl);
  const created = async (path: string, body: Record<string, unknown>): Promise<string> => {
    const res = await http<{ id: string }>("POST", path, { body });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id;
  };
  const site = await created("/_config/sites", { site_name: "Audit Bench Site", location: "Works", timezone: "Europe/Berlin", latitude: "52.52", edge_firmware: {} });
  const plant = await created("/_config/plants", { plant_name: "Audit Bench Plant", site_id: site });
  const readFunction = await created("/_config/functions", { function_name: "Read Function", plant_id: plant });
  const writeFunction = await created("/_config/functions", { function_name: "Write Function", plant_id: plant });
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    // Written with SQL, not through the API: the read list's assets, and the assets the updates change.
    for (const [fn, n, prefix] of [
      [readFunction, READ_ASSETS, "Read"],
      [writeFunction, UPDATED_ASSETS, "Updated"],
    ] as const) {
      await pg.query(
        `INSERT INTO config.assets (asset_id, asset_name, function_id, asset_category, is_critical, attributes, created_at)
         SELECT gen_random_uuid(), $3 || ' Asset ' || lpad(i::text, 5, '0'), $1, 'Motor', false, '{"kw": 7.5}'::jsonb, $2::bigint + i
           FROM generate_series(1, $4::int) i`,
        [fn, Date.now(), prefix, n],
      );
    }
    const { rows } = await pg.query<{ asset_id: string }>(`SELECT asset_id FROM config.assets WHERE function_id = $1`, [writeFunction]);
    // A write through the API starts a new cache generation: the rows written behind its back are read.
    await created("/_config/functions", { function_name: "Cache Function", plant_id: plant });
    return { readPath: `/_config/assets/_list?function_id=${readFunction}`, writeFunction, assets: rows.map((r) => r.asset_id) };
  } finally {
    await pg.end();
  }
}

let serial = 0;

/** Creates and updates of assets in turn, each create with a name of its own. */
function writeRequests(t: Target) {
  const auth = { authorization: basic(ADMIN), "content-type": "application/json" };
  return [
    {
      method: "POST",
      path: "/_config/assets",
      headers: auth,
      setupRequest(req: Record<string, unknown>) {
        req.body = JSON.stringify({ asset_name: `Bench ${t.key} ${++serial}`, function_id: t.writeFunction, asset_category: "Rotating", attributes: { kw: 7.5 } });
        return req;
      },
    },
    {
      method: "PUT",
      headers: auth,
      setupRequest(req: Record<string, unknown>) {
        const id = t.assets[serial++ % t.assets.length]!;
        req.path = `/_config/assets/${id}`;
        req.body = JSON.stringify({ asset_name: `Updated ${id}`, function_id: t.writeFunction, asset_category: "Motor", is_critical: serial % 2 ? "yes" : "no", attributes: { kw: serial % 100 } });
        return req;
      },
    },
  ];
}

async function count(databaseUrl: string, sql: string): Promise<number> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    return Number((await pg.query<{ n: string }>(sql)).rows[0]?.n ?? 0);
  } finally {
    await pg.end();
  }
}

/** Asset writes each target answered with 2xx so far: an entry each, once the trail caught up. */
const answered = new Map<Target["key"], number>([
  ["on", 0],
  ["off", 0],
]);

/** Seconds until the log holds an entry for every asset write answered so far (entries are appended after the answer). */
async function drained(t: Target): Promise<number> {
  const started = Date.now();
  const expected = answered.get(t.key)!;
  await pollUntil(
    async () => (await count(t.db.url, `SELECT count(*) AS n FROM config.audit_log WHERE entity_type = 'asset'`)) >= expected,
    300_000,
    "the audit trail to catch up",
  );
  return (Date.now() - started) / 1000;
}

async function measureWrites(t: Target): Promise<Figures> {
  const base = { url: t.cluster.baseUrl, connections: WRITE_CONNECTIONS, timeout: 10, requests: writeRequests(t) };
  const took = (r: { requests: { total: number }; non2xx: number }) => answered.set(t.key, answered.get(t.key)! + r.requests.total - r.non2xx);
  if (WARMUP_S > 0) took(await autocannon({ ...base, duration: WARMUP_S }));
  const cpuBefore = await cpuOf(t);
  const r = await autocannon({ ...base, duration: DURATION_S });
  took(r);
  const drainS = t.key === "on" ? await drained(t) : 0;
  const ok = r.requests.total - r.non2xx;
  const used = cpuBetween(cpuBefore, await cpuOf(t));
  const cpu = Object.fromEntries(SERVICES.map((s) => [s, ok > 0 ? used[s] / ok : 0])) as Record<Service, number>;
  return { rps: ok / DURATION_S, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx, drainS, cpu };
}

async function measureReads(t: Target): Promise<Figures> {
  const opts = { url: t.cluster.baseUrl + t.readPath, connections: CONNECTIONS, headers: { authorization: basic(ADMIN) }, timeout: 10 };
  if (WARMUP_S > 0) await autocannon({ ...opts, duration: WARMUP_S });
  const r = await autocannon({ ...opts, duration: DURATION_S });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx };
}

export async function runAuditCase(): Promise<void> {
  const targets: Target[] = [];
  try {
    for (const key of ["on", "off"] as const) {
      process.stdout.write(`starting (audit ${key}) api, auth, config: 3 processes, NATS + Redis, AUDIT_TRAIL=${key === "on"}\n`);
      const db = await createTestDatabase("ims_bench_audit");
      const cluster = await startCluster({ processes: [["api"], ["auth"], ["config"]], env: { AUDIT_TRAIL: key === "on" ? "true" : "false" }, databaseUrl: db.url }).catch(async (err: unknown) => {
        await db.drop();
        throw err;
      });
      targets.push({ key, cluster, db, ...(await seed(cluster, db.url)) });
    }
    const rounds: { writes: Record<string, Figures>; reads: Record<string, Figures> }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // The order swapped each round, so that drift on the machine falls on both alike.
      const order = round % 2 ? targets : [...targets].reverse();
      const writes: Record<string, Figures> = {};
      const reads: Record<string, Figures> = {};
      for (const t of order) {
        process.stdout.write(`round ${round}/${ROUNDS} audit writes (${t.key}): `);
        writes[t.key] = await measureWrites(t);
        const w = writes[t.key]!;
        const cpu = SERVICES.map((s) => `${s} ${w.cpu![s].toFixed(2)}`).join(", ");
        console.log(`${Math.round(w.rps)} writes/s, p99 ${w.p99} ms, ${w.errors} errors, CPU ms/write: ${cpu}${t.key === "on" ? `; trail caught up ${w.drainS!.toFixed(1)} s after` : ""}`);
      }
      for (const t of order) {
        process.stdout.write(`round ${round}/${ROUNDS} audit reads (${t.key}): `);
        reads[t.key] = await measureReads(t);
        console.log(`${Math.round(reads[t.key]!.rps)} req/s, p99 ${reads[t.key]!.p99} ms, ${reads[t.key]!.errors} errors`);
      }
      rounds.push({ writes, reads });
    }
    const entries = await count(targets[0]!.db.url, `SELECT count(*) AS n FROM config.audit_log`);
    const verify = await httpClient(targets[0]!.cluster.baseUrl)("GET", "/_config/audit/_verify");
    report(rounds);
    console.log(`\n(on) ${entries} entries in the log at the end; GET /_config/audit/_verify: ${JSON.stringify(verify.body)}`);
  } finally {
    for (const t of targets.reverse()) {
      await t.cluster.stop().catch((err: unknown) => console.error(err));
      await t.db.drop().catch((err: unknown) => console.error(err));
    }
  }
}

function report(rounds: { writes: Record<string, Figures>; reads: Record<string, Figures> }[]): void {
  console.log(`\nAudit trail: api, auth, config as 3 processes (NATS + Redis); ${ROUNDS} rounds of ${DURATION_S} s (after ${WARMUP_S} s warm-up), medians`);
  for (const [kind, unit, connections] of [
    ["writes", "writes/s", WRITE_CONNECTIONS],
    ["reads", "req/s", CONNECTIONS],
  ] as const) {
    const title = kind === "writes" ? "asset creates and updates (half each)" : "GET /_config/assets/_list?function_id=…";
    console.log(`\n${title}, ${connections} connections\n`);
    const writes = kind === "writes";
    console.log(`| AUDIT_TRAIL | ${unit} | p50 ms | p99 ms | errors |${writes ? " trail caught up after, s | CPU ms/write api, auth, config, pg |" : ""}`);
    console.log(`|---|---:|---:|---:|---:|${writes ? "---:|---:|" : ""}`);
    for (const key of ["on", "off"]) {
      const all = rounds.map((r) => r[kind][key]!);
      const cells = [Math.round(median(all.map((f) => f.rps))), median(all.map((f) => f.p50)), median(all.map((f) => f.p99)), all.reduce((n, f) => n + f.errors, 0)];
      const cpu = SERVICES.map((s) => median(all.map((f) => f.cpu?.[s] ?? 0)).toFixed(2)).join(", ");
      const extra = writes ? ` ${key === "on" ? median(all.map((f) => f.drainS ?? 0)).toFixed(1) : "-"} | ${cpu} |` : "";
      console.log(`| ${key} | ${cells.join(" | ")} |${extra}`);
    }
    const ratios = rounds.map((r) => r[kind].on!.rps / r[kind].off!.rps);
    const ratio = median(ratios);
    const verdict = kind === "writes" ? `cost ${((1 - ratio) * 100).toFixed(1)} % (target < ${WRITE_COST_TARGET * 100} %: ${1 - ratio < WRITE_COST_TARGET ? "met" : "MISSED"})` : "reads: no change expected";
    console.log(`\non/off = ${ratio.toFixed(3)} (rounds: ${ratios.map((x) => x.toFixed(3)).join(", ")}); ${verdict}`);
  }
}
