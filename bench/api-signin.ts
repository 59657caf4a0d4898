/**
 * bench:api's case `signin` (BENCH_CASES=signin): what failed sign-in throttling costs a
 * successful Basic request (the throttle: docs/security.md). Four clusters on one fresh database,
 * alike in pairs but for SIGNIN_THROTTLE (on; off, the toggle that exists for this comparison):
 *   (a) every service in one process (memory throttle store, as `npm start`);
 *   (b) api, auth and config as three processes over NATS, Redis as the throttle's store.
 * Each answers GET /_config/server-time (the cheapest authenticated read, so that the sign-in is
 * the largest share of the request) with the bootstrap admin's Basic credentials, two ways:
 *   repeat  one client: after its first request the gateway holds the caller verified (5 s),
 *           and a verified caller from the same address skips the throttle: its cost is nil
 *           by construction, and this shows it;
 *   fresh   a new client address on every request (X-Forwarded-For from the trusted loopback
 *           proxy): each is a miss of that cache, so each pays the throttle's check (a Redis
 *           round trip in (b)) and records the address as one the user signs in from, besides
 *           the call to auth that it pays anyway: the throttle's whole cost.
 * In turns, BENCH_ROUNDS times, on and off swapped each round; a ratio on/off is taken within a
 * round, then the median. BENCH_SIGNIN_MODES (`a,b` by default) narrows the clusters.
 */
import os from "node:os";
import autocannon from "autocannon";
import { createTestDatabase } from "../test/helpers/db";
import { ADMIN, basic } from "../test/helpers/node";
import { startCluster, type Cluster } from "../test/helpers/cluster";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const PATH = "/_config/server-time";
const MODES = (process.env.BENCH_SIGNIN_MODES ?? "a,b").split(",").filter((m): m is Mode => m === "a" || m === "b");

type Callers = "repeat" | "fresh";
type Mode = "a" | "b";
type Throttle = "on" | "off";

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Addresses never used twice in a run: 10.x.y.z from a counter (the cluster trusts loopback as its proxy). */
let addresses = 0;
function nextAddress(): string {
  const n = ++addresses;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

async function measure(baseUrl: string, callers: Callers): Promise<Figures> {
  const opts = {
    url: baseUrl + PATH,
    connections: CONNECTIONS,
    headers: { authorization: basic(ADMIN) },
    timeout: 10,
    ...(callers === "fresh"
      ? {
          requests: [
            {
              method: "GET",
              path: PATH,
              setupRequest: (req: Record<string, unknown>) => ({
                ...req,
                headers: { ...(req.headers as Record<string, string>), "x-forwarded-for": nextAddress() },
              }),
            },
          ],
        }
      : {}),
  };
  if (WARMUP_S > 0) await autocannon({ ...opts, duration: WARMUP_S });
  const r = await autocannon({ ...opts, duration: DURATION_S });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx };
}

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export async function runSignInCase(): Promise<void> {
  const db = await createTestDatabase("ims_bench_signin");
  const clusters = new Map<string, Cluster>();
  try {
    for (const mode of MODES) {
      // "off" first: a cluster started earlier measured slower than its twin in an A/A run (same
      // settings), so any such bias falls on the comparison, not on the throttle's side.
      for (const throttle of ["off", "on"] as const) {
        process.stdout.write(`signin: starting (${mode}) throttle ${throttle}\n`);
        const env: Record<string, string> = {
          SIGNIN_THROTTLE: throttle === "on" ? "true" : "false",
          // The bench's client addresses come through loopback as through an ingress.
          TRUST_PROXY: "127.0.0.1,::1",
          // An empty TRANSPORTER and REDIS_URL mean unset (lib/config.ts): in-process calls, memory cacher and throttle store.
          ...(mode === "a" ? { TRANSPORTER: "", REDIS_URL: "" } : {}),
        };
        const processes = mode === "a" ? [[]] : [["api"], ["auth"], ["config"]];
        clusters.set(`${mode}/${throttle}`, await startCluster({ processes, env, databaseUrl: db.url }));
      }
    }
    const results = new Map<string, Figures[]>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const callers of ["repeat", "fresh"] as const) {
        for (const mode of MODES) {
          const order: Throttle[] = round % 2 ? ["on", "off"] : ["off", "on"];
          for (const throttle of order) {
            const key = `${callers}/${mode}/${throttle}`;
            process.stdout.write(`round ${round}/${ROUNDS} ${key}: `);
            const f = await measure(clusters.get(`${mode}/${throttle}`)!.baseUrl, callers);
            console.log(`${Math.round(f.rps)} req/s, p50 ${f.p50} ms, p99 ${f.p99} ms, ${f.errors} errors`);
            results.set(key, [...(results.get(key) ?? []), f]);
          }
        }
      }
    }
    report(results);
  } finally {
    for (const c of clusters.values()) await c.stop().catch((err: unknown) => console.error(err));
    await db.drop();
  }
}

function report(results: Map<string, Figures[]>): void {
  console.log(
    `\nSign-in throttling: GET ${PATH}, Basic auth, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_S} s per case (after ${WARMUP_S} s warm-up); medians over the rounds`,
  );
  console.log(
    `${os.cpus().length} × ${os.cpus()[0]?.model ?? "unknown CPU"}, Node ${process.version}, ${new Date().toISOString()}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(", ")} (at the end)\n`,
  );
  console.log("| case | callers | throttle on req/s | off req/s | on/off (rounds) | p99 on ms | p99 off ms | errors |");
  console.log("|---|---|---:|---:|---|---:|---:|---:|");
  const label: Record<Mode, string> = { a: "(a) one process, memory store", b: "(b) 3 processes, NATS + Redis store" };
  for (const callers of ["repeat", "fresh"] as const) {
    for (const mode of MODES) {
      const on = results.get(`${callers}/${mode}/on`) ?? [];
      const off = results.get(`${callers}/${mode}/off`) ?? [];
      const ratios = on.map((f, i) => f.rps / off[i]!.rps);
      const errors = [...on, ...off].reduce((n, f) => n + f.errors, 0);
      console.log(
        `| ${label[mode]} | ${callers} | ${Math.round(median(on.map((f) => f.rps)))} | ${Math.round(median(off.map((f) => f.rps)))} | ` +
          `${median(ratios).toFixed(3)} (${ratios.map((r) => r.toFixed(3)).join(", ")}) | ${median(on.map((f) => f.p99))} | ${median(off.map((f) => f.p99))} | ${errors} |`,
      );
    }
  }
}
