/**
 * `npm run bench:api`: authenticated `GET /_config/sites/_list` over 100 sites, measured with
 * autocannon against
 *   (a) every service in one process (in-process transporter, memory cacher: `npm start`'s way),
 *   (b) api, auth and config as three processes over NATS with the Redis cacher,
 *   (c) a bare `node:http` server running the same SQL through `pg` (bench/baseline.ts),
 * and, for information, (b2) api and auth in one process with config in another; each in
 * processes of its own, on one fresh database that the run creates and drops. Needs the
 * machine's PostgreSQL, NATS and Redis (the servers the tests use).
 *
 * The cases take turns, BENCH_ROUNDS times, so that load from elsewhere on the machine falls on
 * each alike; a case's figures are its medians over the rounds, a ratio the median of the
 * rounds' ratios, errors the sum over all rounds.
 *
 * Env: BENCH_DURATION_S (10 per case and round), BENCH_ROUNDS (3), BENCH_CONNECTIONS (10),
 * BENCH_WARMUP_S (2), BENCH_SITES (100), BENCH_COLOCATED (0 leaves out case b2).
 */
import os from "node:os";
import { isDeepStrictEqual } from "node:util";
import autocannon from "autocannon";
import { createTestDatabase } from "../test/helpers/db";
import { ADMIN, basic, httpClient } from "../test/helpers/node";
import { freePort, pollUntil, ServiceProcess, startCluster } from "../test/helpers/cluster";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2);
const SITES = Number(process.env.BENCH_SITES ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WITH_COLOCATED = process.env.BENCH_COLOCATED !== "0";
const PATH = "/_config/sites/_list";

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
  sameBody: boolean;
}

async function measure(baseUrl: string): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  const opts = { url: baseUrl + PATH, connections: CONNECTIONS, headers: { authorization: basic(ADMIN) }, timeout: 10 };
  if (WARMUP_S > 0) await autocannon({ ...opts, duration: WARMUP_S });
  const r = await autocannon({ ...opts, duration: DURATION_S });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx };
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

async function startBaseline(databaseUrl: string): Promise<Target> {
  const port = await freePort();
  const proc = new ServiceProcess(
    "baseline",
    { DATABASE_URL: databaseUrl, PORT: String(port), BASIC_USER: ADMIN.username, BASIC_PASSWORD: ADMIN.password },
    "bench/baseline.ts",
  );
  proc.start();
  const baseUrl = `http://127.0.0.1:${port}`;
  await pollUntil(async () => (await httpClient(baseUrl)("GET", PATH)).status === 200, 30_000, "the baseline", [proc]);
  return { key: "c", label: "bare node:http + pg (baseline)", baseUrl, stop: () => proc.stop() };
}

async function main(): Promise<void> {
  const db = await createTestDatabase("ims_bench");
  const targets: Target[] = [];
  const cluster = async (key: string, label: string, processes: string[][], env: Record<string, string>) => {
    process.stdout.write(`starting (${key}) ${label}\n`);
    const c = await startCluster({ processes, env, databaseUrl: db.url });
    const target = { key, label, baseUrl: c.baseUrl, stop: () => c.stop() };
    targets.push(target);
    return target;
  };
  try {
    // An empty TRANSPORTER and REDIS_URL mean unset (lib/config.ts): in-process calls, memory cacher.
    const a = await cluster("a", "all services, one process", [[]], { TRANSPORTER: "", REDIS_URL: "" });
    await seedSites(a.baseUrl);
    await cluster("b", "api, auth, config: 3 processes, NATS + Redis", [["api"], ["auth"], ["config"]], {});
    // Not a target: how much of (b) is the gateway's call to auth on every request.
    if (WITH_COLOCATED) await cluster("b2", "api+auth, config: 2 processes, NATS + Redis", [["api", "auth"], ["config"]], {});
    process.stdout.write("starting (c) the baseline\n");
    targets.push(await startBaseline(db.url));

    const reference = (await httpClient(a.baseUrl)("GET", PATH)).body;
    const same = new Map<string, boolean>();
    for (const t of targets) same.set(t.key, isDeepStrictEqual((await httpClient(t.baseUrl)("GET", PATH)).body, reference));

    // Rounds in turn, so that load from elsewhere on the machine falls on every case alike.
    const rounds: Figures[][] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const figures: Figures[] = [];
      for (const t of targets) {
        process.stdout.write(`round ${round}/${ROUNDS} (${t.key}): `);
        const m = await measure(t.baseUrl);
        console.log(`${Math.round(m.rps)} req/s, p99 ${m.p99} ms, ${m.errors} errors`);
        figures.push({ key: t.key, label: t.label, ...m, sameBody: same.get(t.key) === true });
      }
      rounds.push(figures);
    }
    report(rounds);
  } finally {
    for (const t of targets.reverse()) await t.stop().catch((err: unknown) => console.error(err));
    await db.drop();
  }
}

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function report(rounds: Figures[][]): void {
  const keys = rounds[0]?.map((f) => f.key) ?? [];
  const of = (key: string) => rounds.map((r) => r.find((f) => f.key === key)!);
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  const load = os.loadavg().map((l) => l.toFixed(1)).join(", ");
  console.log(
    `\nGET ${PATH} (${SITES} sites, Basic auth), ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_S} s per case (after ${WARMUP_S} s warm-up each); medians over the rounds`,
  );
  console.log(
    `${os.cpus().length} × ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString()}, load average ${load} (at the end)\n`,
  );
  console.log("| case | req/s | p50 ms | p99 ms | errors | same body as (a) |");
  console.log("|---|---:|---:|---:|---:|---|");
  for (const key of keys) {
    const all = of(key);
    const f = all[0]!;
    const errors = all.reduce((n, x) => n + x.errors, 0);
    const row = [Math.round(median(all.map((x) => x.rps))), median(all.map((x) => x.p50)), median(all.map((x) => x.p99))];
    console.log(`| (${key}) ${f.label} | ${row.join(" | ")} | ${errors} | ${f.sameBody ? "yes" : "NO"} |`);
  }
  if (!keys.includes("c")) return;
  // A ratio is taken within a round, where the cases ran minutes apart at most, then the median.
  const targets: Record<string, number | undefined> = { a: 0.5, b: 0.3, b2: undefined };
  console.log("");
  for (const key of keys.filter((k) => k in targets)) {
    const ratios = rounds.map((r) => r.find((f) => f.key === key)!.rps / r.find((f) => f.key === "c")!.rps);
    const ratio = median(ratios);
    const target = targets[key];
    const verdict = target === undefined ? "no target" : `target >= ${target}: ${ratio >= target ? "met" : "MISSED"}`;
    console.log(`${key}/c = ${ratio.toFixed(2)} (rounds: ${ratios.map((x) => x.toFixed(2)).join(", ")}; ${verdict})`);
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
