/**
 * A real cluster for tests and benchmarks: each group of services in its own Node process
 * (`bin/start.ts` under tsx, as `npm run start:service` runs it), joined over the machine's NATS
 * with a namespace of its own, on a fresh PostgreSQL database, with Redis as the cacher.
 *
 * Processes are spawned as `node --import tsx bin/start.ts` rather than through the `tsx` binary:
 * the binary forks a second node, and a signal meant to crash the service would then hit only
 * the wrapper.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { settledWithin } from "../../lib/wait";
import { createTestDatabase, type TestDatabase } from "./db";
import { ADMIN, httpClient, type HttpClient } from "./node";

export const REPO_ROOT = path.resolve(__dirname, "../..");
export const NATS_URL = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";
export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A GET route of each service that has one: the gateway knows every declared route, and looks
 * for the action's node before it checks credentials, so an anonymous GET answers 503 while the
 * service is away (or not up yet) and 401 once it is on the bus. Services without a route
 * (notifier) are reached through the others.
 */
const PROBES: Record<string, string> = {
  auth: "/_config/users/_list",
  config: "/_config/sites/_list",
  pipelines: "/_config/pipelines/_list",
  alerting: "/_alerting/watchers/_list",
  notebooks: "/_notebooks/notebooks/_all",
  cm: "/_cm/assets/_list",
  ems: "/_ems/monitor/_all",
};

function probePaths(services: string[]): string[] {
  return [...new Set(services)].flatMap((s) => (PROBES[s] ? [PROBES[s]] : []));
}

/** One service process: started, crashed, stopped and started again by the test. */
export class ServiceProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private tail: string[] = [];

  constructor(
    readonly name: string,
    private readonly env: Record<string, string>,
    /** The entry point, relative to the repository: the service runner unless told otherwise. */
    private readonly script = "bin/start.ts",
  ) {}

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last lines the process wrote, for a failure message. */
  output(): string {
    return this.tail.join("");
  }

  start(): void {
    if (this.running) throw new Error(`${this.name} is already running`);
    const child = spawn(process.execPath, ["--import", "tsx", this.script], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...this.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const keep = (chunk: Buffer) => {
      this.tail.push(chunk.toString("utf8"));
      if (this.tail.length > 200) this.tail.splice(0, this.tail.length - 200);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
    this.child = child;
    live.add(this);
  }

  /** Sends the signal and waits for the process to end; SIGKILL after `graceMs`. */
  async stop(signal: NodeJS.Signals = "SIGTERM", graceMs = 8000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill(signal);
    if (!(await settledWithin(this.exited, graceMs))) {
      child.kill("SIGKILL");
      await this.exited;
    }
    live.delete(this);
  }

  /** Last resort, synchronous: used when the test process itself is exiting. */
  killNow(): void {
    if (this.running) this.child?.kill("SIGKILL");
  }
}

/** Every process still running, so none outlives the test run, however it ends. */
const live = new Set<ServiceProcess>();
process.once("exit", () => {
  for (const p of live) p.killNow();
});

export interface ClusterOptions {
  /** One entry per process: the services it runs, e.g. [["api"], ["auth"], ["config"]]; [] runs them all, as `npm start` does. */
  processes: string[][];
  env?: Record<string, string>;
  /** An existing database; by default a fresh one is created and dropped with the cluster. */
  databaseUrl?: string;
  /** false: handed back as soon as the processes are spawned, without waiting for an answer through api, auth and config. */
  waitReady?: boolean;
}

export interface Cluster {
  namespace: string;
  baseUrl: string;
  http: HttpClient;
  db: TestDatabase | undefined;
  /** DATA_DIR of every process: the email outbox is under it. */
  dataDir: string;
  /** The process running the named service. */
  process(service: string): ServiceProcess;
  /** Polls HTTP until an authenticated read through api, auth and config succeeds. */
  waitReady(timeoutMs?: number): Promise<void>;
  /** Starts one more process in the cluster (not waited for), running these services, with `env` beside the cluster's. */
  addProcess(services: string[], env?: Record<string, string>): ServiceProcess;
  stop(): Promise<void>;
}

/** Polls `probe` until it resolves true; fails with the processes' output when one died or time ran out. */
export async function pollUntil(
  probe: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
  procs: ServiceProcess[] = [],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = "";
  while (Date.now() < deadline) {
    const dead = procs.find((p) => !p.running);
    if (dead) throw new Error(`${dead.name} exited while waiting for ${what}:\n${dead.output()}`);
    try {
      if (await probe()) return;
    } catch (err) {
      lastError = String(err);
    }
    await sleep(200);
  }
  const logs = procs.map((p) => `--- ${p.name}\n${p.output()}`).join("\n");
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} ${lastError}\n${logs}`);
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const namespace = `test-${randomBytes(4).toString("hex")}`;
  const db = opts.databaseUrl ? undefined : await createTestDatabase();
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "ims-cluster-"));
  const common: Record<string, string> = {
    TRANSPORTER: NATS_URL,
    REDIS_URL,
    NAMESPACE: namespace,
    DATABASE_URL: opts.databaseUrl ?? db!.url,
    DATA_DIR: dataDir,
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
    NODE_ENV: "test",
    ...(opts.env ?? {}),
  };
  const seen = new Map<string, number>();
  const processFor = (services: string[], extra: Record<string, string> = {}) => {
    const base = services.length ? services.join("+") : "all";
    // Replicas of one group (e.g. two config processes) get names, and so node ids, of their own.
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    const name = n === 1 ? base : `${base}#${n}`;
    // A stable node id: a restarted process takes its predecessor's place in every registry at
    // once, instead of the dead one being called until the heartbeat timeout drops it.
    const env: Record<string, string> = { ...common, SERVICES: services.join(","), NODE_ID: `${namespace}-${name}`, ...extra };
    if (services.length === 0 || services.includes("api")) env.PORT = String(port);
    return new ServiceProcess(name, env);
  };
  const procs = opts.processes.map((services) => processFor(services));
  for (const p of procs) p.start();

  const baseUrl = `http://127.0.0.1:${port}`;
  const http = httpClient(baseUrl);
  const cluster: Cluster = {
    namespace,
    baseUrl,
    http,
    db,
    dataDir,
    process(service) {
      const p = procs.find((x) => x.name === "all" || x.name.replace(/#\d+$/, "").split("+").includes(service));
      if (!p) throw new Error(`no process runs ${service}`);
      return p;
    },
    async waitReady(timeoutMs = 90_000) {
      await pollUntil(
        async () => (await http("GET", "/_config/sites/_list")).status === 200,
        timeoutMs,
        "the cluster to answer GET /_config/sites/_list",
        procs,
      );
      // Every service of the cluster on the bus, not only config: a test's first call may go anywhere.
      const all = opts.processes.some((p) => p.length === 0) ? [] : opts.processes.flat();
      for (const probe of all.length ? probePaths(all) : []) {
        await pollUntil(async () => ![404, 503].includes((await http("GET", probe, { auth: null })).status), timeoutMs, `the service behind GET ${probe}`, procs);
      }
    },
    addProcess(services, env) {
      const p = processFor(services, env);
      procs.push(p);
      p.start();
      return p;
    },
    async stop() {
      await Promise.all(procs.map((p) => p.stop("SIGTERM")));
      await db?.drop().catch(() => undefined);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    if (opts.waitReady !== false) await cluster.waitReady();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

/**
 * Another api replica of the cluster, on a port of its own (the cluster's api processes share
 * one): started, and answering `probe` as admin, before it is handed back.
 */
export async function startApiReplica(cluster: Cluster, probe: string, env: Record<string, string> = {}): Promise<{ process: ServiceProcess; http: HttpClient }> {
  const port = await freePort();
  const replica = new ServiceProcess("api#2", {
    TRANSPORTER: NATS_URL,
    REDIS_URL,
    NAMESPACE: cluster.namespace,
    DATA_DIR: cluster.dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
    NODE_ENV: "test",
    SERVICES: "api",
    NODE_ID: `${cluster.namespace}-api-2`,
    PORT: String(port),
    ...env,
  });
  replica.start();
  const http = httpClient(`http://127.0.0.1:${port}`);
  try {
    await pollUntil(async () => (await http("GET", probe)).status === 200, 60_000, "the second api replica", [replica]);
  } catch (err) {
    // The caller never gets the process to stop: a replica left running keeps jest from exiting.
    await replica.stop();
    throw err;
  }
  return { process: replica, http };
}
