/**
 * `npm run bench:api`: authenticated reads of the configuration, measured with autocannon against
 *   (a) every service in one process (in-process transporter, memory cacher: `npm start`'s way),
 *   (b) api, auth and config as three processes over NATS with the Redis cacher,
 *   (c) a bare `node:http` server running the same SQL through `pg` (bench/baseline.ts),
 * and, for information, (b2) api and auth in one process with config in another (sites only);
 * each in processes of its own, on one fresh database that the run creates and drops. Needs the
 * machine's PostgreSQL, NATS and Redis (the servers the tests use).
 *
 * Case groups (BENCH_CASES, comma-separated; all by default):
 *   sites     GET /_config/sites/_list over BENCH_SITES sites;
 *   assets    GET /_config/assets/_list?function_id=… on a function with BENCH_ASSETS assets;
 *   monitors  GET /_config/monitors/_count over BENCH_ASSETS × BENCH_MONITORS_PER_ASSET monitors;
 *   audit     asset creates and updates, and an asset list, with and without the audit trail, on
 *             clusters of their own (bench/api-audit.ts says how);
 *   signin    a successful Basic request with and without failed sign-in throttling, on clusters
 *             of their own (bench/api-signin.ts says how).
 * Sites are created through the API; the assets and monitors are written with SQL into the config
 * schema (22,000 creates through the API would take minutes), then read back through the API.
 *
 * The cases take turns, BENCH_ROUNDS times, so that load from elsewhere on the machine falls on
 * each alike; a case's figures are its medians over the rounds, a ratio the median of the
 * rounds' ratios, errors the sum over all rounds. "SQL/req" is the database's committed
 * transactions (every statement outside a transaction is one) during the measurement, per
 * request: what the cache saves, and that no request makes a query per row.
 *
 * Env: BENCH_CASES, BENCH_DURATION_S (10 per case and round), BENCH_ROUNDS (3), BENCH_CONNECTIONS (10),
 * BENCH_WARMUP_S (2), BENCH_SITES (100), BENCH_ASSETS (2000), BENCH_MONITORS_PER_ASSET (10),
 * BENCH_COLOCATED (0 leaves out case b2).
 */
import os from "node:os";
import { isDeepStrictEqual } from "node:util";
import autocannon from "autocannon";
import { Client } from "pg";
import { createTestDatabase } from "../test/helpers/db";
import { ADMIN, basic, httpClient } from "../test/helpers/node";
import { freePort, pollUntil, ServiceProcess, startCluster } from "../test/helpers/cluster";
import { runAuditCase } from "./api-audit";
import { runSignInCase } from "./api-signin";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2);
const SITES = Number(process.env.BENCH_SITES ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WITH_COLOCATED = process.env.BENCH_COLOCATED !== "0";
const ASSETS = Number(process.env.BENCH_ASSETS ?? 2000);
const MONITORS_PER_ASSET = Number(process.env.BENCH_MONITORS_PER_ASSET ?? 10);
const GROUP_KEYS = ["sites", "assets", "monitors", "audit", "signin"] as const;
type GroupKey = (typeof GROUP_KEYS)[number];
const CASES = (process.env.BENCH_CASES ?? GROUP_KEYS.join(",")).split(",").map((c) => c.trim()).filter(Boolean);
for (const c of CASES) if (!(GROUP_KEYS as readonly string[]).includes(c)) throw new Error(`BENCH_CASES: unknown case group ${c}`);
const SITES_PATH = "/_config/sites/_list";

/** A request measured against several targets; `only` narrows the targets. */
interface Group {
  key: GroupKey;
  title: string;
  path: string;
  only?: string[];
  /** Ratios to the baseline with their target, undefined: no target. */
  targets: Record<string, number | undefined>;
  /** A p99 target in ms for case (a). */
  p99TargetA?: number;
}

interface Target {
  key: string;
  label: string;
  baseUrl: string;
  stop(): Promise<void>;
}

interface Figures {
  key: string;
  label: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  sqlPerRequest: number;
  sameBody: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Committed and rolled-back transactions of the bench database so far (PostgreSQL's statistics). */
async function transactions(stats: Client): Promise<number> {
  // Backends report their counts when idle, at most once a second: wait for the last report.
  await sleep(1500);
  await stats.query("SELECT pg_stat_clear_snapshot()");
  const { rows } = await stats.query<{ n: string }>(
    "SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()",
  );
  return Number(rows[0]?.n ?? 0);
}

async function measure(url: string, stats: Client): Promise<Omit<Figures, "key" | "label" | "sameBody">> {
  const opts = { url, connections: CONNECTIONS, headers: { authorization: basic(ADMIN) }, timeout: 10 };
  if (WARMUP_S > 0) await autocannon({ ...opts, duration: WARMUP_S });
  const before = await transactions(stats);
  const r = await autocannon({ ...opts, duration: DURATION_S });
  // Minus the two statements of the statistics queries themselves.
  const sql = (await transactions(stats)) - before - 2;
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
    sqlPerRequest: r.requests.total > 0 ? Math.max(0, sql) / r.requests.total : 0,
  };
}

async function seedSites(baseUrl: string): Promise<void> {
  const http = httpClient(baseUrl);
  for (let start = 0; start < SITES; start += 10) {
    await Promise.all(
      Array.from({ length: Math.min(10, SITES - start) }, async (_, i) => {
        const n = start + i + 1;
        const res = await http("POST", "/_config/sites", {
          body: {
            site_name: `Bench Site ${String(n).padStart(3, "0")}`,
            location: `Plant town ${n}`,
            timezone: "Europe/Berlin",
            latitude: "52.52",
            longitude: "13.40",
            edge_firmware: { current_version: "1.2.0", previous_version: "1.1.0" },
          },
        });
        if (res.status !== 200) throw new Error(`creating site ${n}: ${res.status} ${JSON.stringify(res.body)}`);
      }),
    );
  }
}

/**
 * A site, plant and function through the API, then ASSETS assets with MONITORS_PER_ASSET
 * monitors each written with SQL into the config schema; returns the function id once the API
 * counts them all. Distinct created_at values keep every list's order deterministic.
 */
async function seedAssets(baseUrl: string, databaseUrl: string): Promise<string> {
  const http = httpClient(baseUrl);
  const created = async (path: string, body: Record<string, unknown>): Promise<string> => {
    const res = await http<{ id: string }>("POST", path, { body });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id;
  };
  // Under the first site when the sites case seeded them, so that its list stays at BENCH_SITES sites.
  const sites = await http<{ site_id: string }[]>("GET", SITES_PATH);
  const site =
    sites.body[0]?.site_id ??
    (await created("/_config/sites", {
      site_name: "Bench Asset Site",
      location: "Works",
      timezone: "Europe/Berlin",
      latitude: "52.52",
      edge_firmware: {},
    }));
  const plant = await created("/_config/plants", { plant_name: "Bench Plant", site_id: site });
  const fn = await created("/_config/functions", { function_name: "Bench Function", plant_id: plant });
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const t0 = Date.now();
    await pg.query(
      `INSERT INTO config.assets (asset_id, asset_name, function_id, asset_category, is_critical, attributes, created_at)
       SELECT gen_random_uuid(), 'Bench Asset ' || lpad(i::text, 5, '0'), $1, CASE WHEN i % 3 = 0 THEN 'Pump' ELSE 'Motor' END,
              i % 5 = 0, '{"machine_type": "Induction motor", "rotating_speed": 1480, "manufacturer": "ACME", "kw": 7.5}'::jsonb, $2::bigint + i
         FROM generate_series(1, $3::int) i`,
      [fn, t0, ASSETS],
    );
    await pg.query(
      `INSERT INTO config.monitors (monitor_id, monitor_name, monitor_type, function_id, asset_id, tags, created_at)
       SELECT gen_random_uuid(), a.asset_name || ' M' || j, CASE WHEN j % 2 = 0 THEN 'energy-monitor' ELSE 'condition-monitor' END,
              a.function_id, a.asset_id,
              jsonb_build_array(jsonb_build_object('tag_id', gen_random_uuid(), 'tag_name', 'Tag ' || j, 'tag_unit', 'mm/s',
                                'thresholds', jsonb_build_object('caution', '4.5', 'warning', '7.1'))),
              a.created_at * 100 + j
         FROM config.assets a CROSS JOIN generate_series(1, $2::int) j WHERE a.function_id = $1`,
      [fn, MONITORS_PER_ASSET],
    );
    await pg.query("ANALYZE config.assets; ANALYZE config.monitors");
  } finally {
    await pg.end();
  }
  // Written behind the services' backs: a write through the API starts a new cache generation, so no read can be stale.
  await created("/_config/functions", { function_name: "Bench Function (cache)", plant_id: plant });
  const assets = await http("GET", `/_config/assets/_count?function_id=${fn}`);
  const monitors = await http("GET", "/_config/monitors/_count");
  if (assets.body !== ASSETS || monitors.body !== ASSETS * MONITORS_PER_ASSET) {
    throw new Error(`the API counts ${String(assets.body)} assets and ${String(monitors.body)} monitors after seeding`);
  }
  return fn;
}

async function startBaseline(databaseUrl: string): Promise<Target> {
  const port = await freePort();
  const proc = new ServiceProcess(
    "baseline",
    { DATABASE_URL: databaseUrl, PORT: String(port), BASIC_USER: ADMIN.username, BASIC_PASSWORD: ADMIN.password },
    "bench/baseline.ts",
  );
  proc.start();
  const baseUrl = `http://127.0.0.1:${port}`;
  await pollUntil(async () => (await httpClient(baseUrl)("GET", SITES_PATH)).status === 200, 30_000, "the baseline", [proc]);
  return { key: "c", label: "bare node:http + pg (baseline)", baseUrl, stop: () => proc.stop() };
}

async function main(): Promise<void> {
  // The audit trail's case runs on clusters and databases of its own.
  if (CASES.includes("audit")) await runAuditCase();
  if (CASES.includes("signin")) await runSignInCase();
  if (CASES.every((c) => c === "audit" || c === "signin")) return;
  const db = await createTestDatabase("ims_bench");
  const targets: Target[] = [];
  const cluster = async (key: string, label: string, processes: string[][], env: Record<string, string>) => {
    process.stdout.write(`starting (${key}) ${label}\n`);
    const c = await startCluster({ processes, env, databaseUrl: db.url });
    const target = { key, label, baseUrl: c.baseUrl, stop: () => c.stop() };
    targets.push(target);
    return target;
  };
  const stats = new Client({ connectionString: db.url });
  try {
    // An empty TRANSPORTER and REDIS_URL mean unset (lib/config.ts): in-process calls, memory cacher.
    const a = await cluster("a", "all services, one process", [[]], { TRANSPORTER: "", REDIS_URL: "" });
    const groups: Group[] = [];
    if (CASES.includes("sites")) {
      await seedSites(a.baseUrl);
      groups.push({ key: "sites", title: `GET ${SITES_PATH} (${SITES} sites)`, path: SITES_PATH, targets: { a: 0.5, b: 0.3, b2: undefined } });
    }
    if (CASES.includes("assets") || CASES.includes("monitors")) {
      process.stdout.write(`seeding ${ASSETS} assets with ${MONITORS_PER_ASSET} monitors each\n`);
      const fn = await seedAssets(a.baseUrl, db.url);
      const some = { only: ["a", "b", "c"], targets: { a: undefined, b: undefined } };
      if (CASES.includes("assets")) {
        const path = `/_config/assets/_list?function_id=${fn}`;
        groups.push({ key: "assets", title: `GET /_config/assets/_list?function_id=… (${ASSETS} assets)`, path, p99TargetA: 50, ...some });
      }
      if (CASES.includes("monitors")) {
        const total = ASSETS * MONITORS_PER_ASSET;
        groups.push({ key: "monitors", title: `GET /_config/monitors/_count (${total} monitors)`, path: "/_config/monitors/_count", ...some });
      }
    }
    await cluster("b", "api, auth, config: 3 processes, NATS + Redis", [["api"], ["auth"], ["config"]], {});
    // Not a target: how much of (b) is the gateway's call to auth on every request.
    if (WITH_COLOCATED && CASES.includes("sites")) {
      await cluster("b2", "api+auth, config: 2 processes, NATS + Redis", [["api", "auth"], ["config"]], {});
    }
    process.stdout.write("starting (c) the baseline\n");
    targets.push(await startBaseline(db.url));
    await stats.connect();

    const same = new Map<string, boolean>();
    for (const g of groups) {
      const reference = (await httpClient(a.baseUrl)("GET", g.path)).body;
      for (const t of targets) {
        same.set(`${g.key}/${t.key}`, isDeepStrictEqual((await httpClient(t.baseUrl)("GET", g.path)).body, reference));
      }
    }

    // Rounds in turn, so that load from elsewhere on the machine falls on every case alike.
    const rounds = new Map<GroupKey, Figures[][]>(groups.map((g) => [g.key, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      for (const g of groups) {
        const figures: Figures[] = [];
        for (const t of targets.filter((x) => !g.only || g.only.includes(x.key))) {
          process.stdout.write(`round ${round}/${ROUNDS} ${g.key} (${t.key}): `);
          const m = await measure(t.baseUrl + g.path, stats);
          console.log(`${Math.round(m.rps)} req/s, p99 ${m.p99} ms, ${m.errors} errors, ${m.sqlPerRequest.toFixed(2)} SQL/req`);
          figures.push({ key: t.key, label: t.label, ...m, sameBody: same.get(`${g.key}/${t.key}`) === true });
        }
        rounds.get(g.key)!.push(figures);
      }
    }
    console.log(
      `\n${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_S} s per case (after ${WARMUP_S} s warm-up each); medians over the rounds`,
    );
    console.log(
      `${os.cpus().length} × ${os.cpus()[0]?.model ?? "unknown CPU"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString()}, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(", ")} (at the end)`,
    );
    for (const g of groups) report(g, rounds.get(g.key)!);
  } finally {
    await stats.end().catch(() => undefined);
    for (const t of targets.reverse()) await t.stop().catch((err: unknown) => console.error(err));
    await db.drop();
  }
}

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function report(group: Group, rounds: Figures[][]): void {
  const keys = rounds[0]?.map((f) => f.key) ?? [];
  const of = (key: string) => rounds.map((r) => r.find((f) => f.key === key)!);
  console.log(`\n${group.title}, Basic auth\n`);
  console.log("| case | req/s | p50 ms | p99 ms | errors | SQL/req | same body as (a) |");
  console.log("|---|---:|---:|---:|---:|---:|---|");
  for (const key of keys) {
    const all = of(key);
    const f = all[0]!;
    const errors = all.reduce((n, x) => n + x.errors, 0);
    const row = [Math.round(median(all.map((x) => x.rps))), median(all.map((x) => x.p50)), median(all.map((x) => x.p99))];
    const sql = median(all.map((x) => x.sqlPerRequest)).toFixed(2);
    console.log(`| (${key}) ${f.label} | ${row.join(" | ")} | ${errors} | ${sql} | ${f.sameBody ? "yes" : "NO"} |`);
  }
  if (group.p99TargetA !== undefined && keys.includes("a")) {
    const p99s = of("a").map((x) => x.p99);
    const p99 = median(p99s);
    console.log(
      `\n(a) p99 = ${p99} ms (rounds: ${p99s.join(", ")}; target < ${group.p99TargetA} ms: ${p99 < group.p99TargetA ? "met" : "MISSED"})`,
    );
  }
  if (keys.includes("c")) {
    // A ratio is taken within a round, where the cases ran minutes apart at most, then the median.
    console.log("");
    for (const key of keys.filter((k) => k in group.targets)) {
      const ratios = rounds.map((r) => r.find((f) => f.key === key)!.rps / r.find((f) => f.key === "c")!.rps);
      const ratio = median(ratios);
      const target = group.targets[key];
      const verdict = target === undefined ? "no target" : `target >= ${target}: ${ratio >= target ? "met" : "MISSED"}`;
      console.log(`${key}/c = ${ratio.toFixed(2)} (rounds: ${ratios.map((x) => x.toFixed(2)).join(", ")}; ${verdict})`);
    }
  }
  const errors = rounds.flat().reduce((n, f) => n + f.errors, 0);
  console.log(`errors: ${errors} (target 0: ${errors === 0 ? "met" : "MISSED"})`);
  if (rounds[0]!.some((f) => !f.sameBody)) {
    console.log("a case answered a different body: its figures do not compare");
    process.exitCode = 1;
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
