/**
 * The process's own small HTTP server on HEALTH_PORT, apart from the API port so probes and
 * scrapes work on every node (the api gateway runs on one service only):
 *
 *   GET /live     200 while the process runs its event loop
 *   GET /ready    200 when the broker is started and its database(s), cache and transporter
 *                 answer, and (api) some service its routes need is reachable; 503 otherwise and
 *                 from the moment the node starts draining
 *   GET /metrics  Prometheus text (lib/metrics.ts)
 *
 * Readiness asks each dependency fresh on every probe (with a timeout), so a node goes unready
 * when PostgreSQL goes away and ready again when it is back, without a restart.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { ServiceBroker } from "moleculer";
import { prometheusReporterOf } from "./metrics";
import { settledWithin } from "./wait";

const CHECK_TIMEOUT_MS = 2000;

export interface Check {
  name: string;
  run(): Promise<void>;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, string>;
}

interface Queryable {
  isInitialized: boolean;
  query(sql: string): Promise<unknown>;
}

const isQueryable = (v: unknown): v is Queryable =>
  typeof v === "object" && v !== null && typeof (v as Queryable).query === "function" && "isInitialized" in v;

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  if (!(await settledWithin(p, ms))) throw new Error(`no answer in ${ms} ms`);
  return p;
}

/** What this node depends on right now: one check per DataSource, the cacher, the transporter. */
export function dependencyChecks(broker: ServiceBroker): Check[] {
  const checks: Check[] = [];
  for (const svc of broker.services) {
    const db = (svc as unknown as { db?: unknown }).db;
    if (!isQueryable(db)) continue;
    checks.push({
      name: `database:${svc.fullName}`,
      async run() {
        if (!db.isInitialized) throw new Error("not connected");
        await db.query("SELECT 1");
      },
    });
  }
  const client = (broker.cacher as unknown as { client?: { ping?: () => Promise<unknown> } } | null)?.client;
  if (client && typeof client.ping === "function") {
    checks.push({ name: "cache", run: async () => void (await client.ping!()) });
  }
  const transit = (broker as unknown as { transit?: { connected: boolean; tx?: { client?: { flush?: () => Promise<void> } } } }).transit;
  if (transit) {
    checks.push({
      name: "transporter",
      async run() {
        if (!transit.connected) throw new Error("not connected");
        // Moleculer's NATS transporter stays "connected" while its client reconnects (it is only
        // told of a close): a round trip to the server (PING/PONG) tells whether the bus answers now.
        const client = transit.tx?.client;
        if (client && typeof client.flush === "function") await client.flush();
      },
    });
  }
  // A service's own condition (the api: that some service its routes need is reachable).
  for (const svc of broker.services) {
    const own = (svc as unknown as { readinessCheck?: () => Promise<void> }).readinessCheck;
    if (typeof own === "function") checks.push({ name: `services:${svc.fullName}`, run: () => own.call(svc) });
  }
  return checks;
}

export async function readiness(broker: ServiceBroker, draining = false): Promise<Readiness> {
  // Draining is unready whatever the dependencies say: answered at once, without asking them.
  if (draining) return { ready: false, checks: { broker: "draining" } };
  const checks: Record<string, string> = {};
  if (!broker.started) checks.broker = "starting";
  else checks.broker = "ok";
  await Promise.all(
    dependencyChecks(broker).map(async (c) => {
      try {
        await withTimeout(c.run(), CHECK_TIMEOUT_MS);
        checks[c.name] = "ok";
      } catch (err) {
        checks[c.name] = `error: ${err instanceof Error ? err.message : String(err)}`;
      }
    }),
  );
  return { ready: Object.values(checks).every((v) => v === "ok"), checks };
}

export interface HealthServer {
  port: number;
  /** From now on /ready answers 503, so the load balancer stops sending work before the broker stops. */
  setDraining(): void;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: string, type = "application/json; charset=utf-8"): void {
  res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body), "Cache-Control": "no-store" });
  res.end(body);
}

export async function startHealthServer(broker: ServiceBroker, port: number, host = "0.0.0.0"): Promise<HealthServer> {
  let draining = false;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") return send(res, 405, JSON.stringify({ status: "method not allowed" }));
    if (path === "/live") return send(res, 200, JSON.stringify({ status: "ok" }));
    if (path === "/ready") {
      readiness(broker, draining).then(
        (r) => send(res, r.ready ? 200 : 503, JSON.stringify({ status: r.ready ? "ready" : "unready", checks: r.checks })),
        () => send(res, 503, JSON.stringify({ status: "unready" })),
      );
      return;
    }
    if (path === "/metrics") {
      const reporter = prometheusReporterOf(broker);
      if (!reporter) return send(res, 404, "metrics are disabled\n", "text/plain; charset=utf-8");
      return send(res, 200, reporter.render(), "text/plain; version=0.0.4; charset=utf-8");
    }
    send(res, 404, JSON.stringify({ status: "not found" }));
  });
  // Probes must never keep a stopping process alive.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    setDraining() {
      draining = true;
    },
    close() {
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
