/**
 * The bus and the cache of docker-compose.yml take no one uninvited: the machine's real
 * nats-server and redis-server, started as compose starts them (its command lines, its
 * deploy/nats/nats.conf, its environment, .env's variables given test values), on free loopback
 * ports with stores in a temp dir. A NATS client without credentials, or with a wrong password,
 * is refused; each service's user (as compose gives it) joins and publishes and subscribes across
 * the cluster's authenticated routes; a server without the route password cannot join the cluster.
 * Redis answers NOAUTH without its password and PONG with it. And the service's own code
 * (readConfig, brokerOptions, the JetStream adapter) connects with what compose gives it.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import Redis from "ioredis";
import { ServiceBroker } from "moleculer";
import { connect, type NatsConnection } from "nats";
import { parse } from "yaml";
import { ALL_SERVICES, readConfig } from "../../lib/config";
import { createStreamAdapter } from "../../lib/streams";
import { brokerOptions } from "../../moleculer.config";
import { freePort } from "../helpers/cluster";

const ROOT = path.resolve(__dirname, "../..");
const NATS_BIN = process.env.NATS_SERVER_BIN ?? "/usr/sbin/nats-server";
const REDIS_BIN = process.env.REDIS_SERVER_BIN ?? "redis-server";
const NODES = ["nats-1", "nats-2", "nats-3"];
const STEP_MS = 20_000;

interface ComposeService {
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  healthcheck?: { test?: string[] };
}
const compose = parse(fs.readFileSync(path.join(ROOT, "docker-compose.yml"), "utf8"), { merge: true }) as { services: Record<string, ComposeService> };

/** .env for the test: every variable compose requires, a fresh password each (the form .env.example asks for). */
const dotenv: Record<string, string> = {};
for (const m of fs.readFileSync(path.join(ROOT, "docker-compose.yml"), "utf8").matchAll(/\$\{([A-Z0-9_]+):\?/g)) {
  dotenv[m[1]!] ??= `k${randomBytes(4).toString("hex")}-${randomBytes(8).toString("hex")}_x`;
}

/** Compose's interpolation of `${VAR}`, `${VAR:?message}`, `${VAR:-default}` from the test's .env. */
function interpolate(text: string): string {
  return text.replace(/\$\{([A-Z0-9_]+)(?::([?-])([^}]*))?\}/g, (_, name: string, op?: string, rest?: string) => {
    const value = dotenv[name];
    if (value) return value;
    if (op === "?") throw new Error(`compose would refuse to start: ${name} is required (${rest})`);
    return op === "-" ? (rest ?? "") : "";
  });
}
const envOf = (svc: ComposeService): Record<string, string> => Object.fromEntries(Object.entries(svc.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]));

/** A path inside a container as the file of this repository a bind mount puts there. */
function hostPath(svc: ComposeService, inContainer: string): string {
  const mount = (svc.volumes ?? []).map((v) => v.split(":")).find(([, target]) => target === inContainer);
  if (!mount || !mount[0]!.startsWith(".")) throw new Error(`${inContainer} is not bind-mounted from the repository`);
  return path.resolve(ROOT, mount[0]!);
}

const ports = new Set<number>();
async function port(): Promise<number> {
  for (;;) {
    const p = await freePort();
    if (!ports.has(p)) {
      ports.add(p);
      return p;
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = STEP_MS): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}
async function getJson<T>(url: string): Promise<T | undefined> {
  const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
  return res.ok ? ((await res.json()) as T) : undefined;
}

const children: ChildProcess[] = [];
const output = new Map<ChildProcess, string[]>();
function start(bin: string, args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(bin, args, { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const tail: string[] = [];
  const keep = (b: Buffer) => {
    tail.push(b.toString());
    if (tail.length > 200) tail.shift();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  children.push(child);
  output.set(child, tail);
  return child;
}
const logsOf = (child: ChildProcess): string => (output.get(child) ?? []).join("");
process.once("exit", () => children.forEach((c) => c.exitCode === null && c.kill("SIGKILL")));

interface NatsNode {
  name: string;
  client: number;
  route: number;
  http: number;
  child: ChildProcess;
}
const dirs: string[] = [];
const tmp = (prefix: string): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
};

/**
 * Compose's command line for a NATS node with what belongs to the machine moved to loopback: its
 * config file from the repository, its store in a temp dir, its ports free ones, the other nodes'
 * route addresses theirs. Credentials and everything else as compose has them.
 */
function natsArgs(name: string, own: { client: number; route: number; http: number }, routeOf: Record<string, number>, storeDir: string): string[] {
  const svc = compose.services[name]!;
  const cmd = svc.command!.map(interpolate);
  const args = [...cmd];
  const set = (flag: string, f: (v: string) => string) => {
    const i = args.indexOf(flag);
    if (i < 0) throw new Error(`${name}'s command has no ${flag}`);
    args[i + 1] = f(args[i + 1]!);
  };
  set("-c", (v) => hostPath(svc, v));
  set("-sd", () => storeDir);
  set("-m", () => String(own.http));
  set("--cluster", (v) => v.replace(/@0\.0\.0\.0:6222$/, `@127.0.0.1:${own.route}`));
  set("--routes", (v) => v.replace(/@(nats-\d):6222/g, (_, n: string) => `@127.0.0.1:${routeOf[n]}`));
  return ["-a", "127.0.0.1", "-p", String(own.client), ...args];
}

const refused = async (opts: { servers: string; user?: string; pass?: string }): Promise<string> => {
  try {
    const nc = await connect({ ...opts, reconnect: false, timeout: 3000 });
    await nc.close();
    return "connected";
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
};

const nodes: NatsNode[] = [];
let redisPort = 0;
const open: NatsConnection[] = [];
const haveBins = spawnSync(NATS_BIN, ["--version"]).status === 0 && spawnSync(REDIS_BIN, ["--version"]).status === 0;
const suite = haveBins ? describe : describe.skip;

suite("the compose file's NATS cluster and Redis, with credentials", () => {
  beforeAll(async () => {
    const routeOf: Record<string, number> = {};
    const own: Record<string, { client: number; route: number; http: number }> = {};
    for (const name of NODES) {
      own[name] = { client: await port(), route: await port(), http: await port() };
      routeOf[name] = own[name].route;
    }
    for (const name of NODES) {
      const child = start(NATS_BIN, natsArgs(name, own[name]!, routeOf, tmp(`ims-${name}-`)), envOf(compose.services[name]!));
      nodes.push({ name, ...own[name]!, child });
    }
    // Compose's health check: the monitoring port's /healthz with JetStream enabled, no password.
    const health = compose.services["nats-1"]!.healthcheck!.test!.find((t) => t.includes("/healthz"))!;
    for (const n of nodes) {
      await until(`${n.name} healthy\n${logsOf(n.child)}`, async () => ((await fetch(health.replace("8222", String(n.http)), { signal: AbortSignal.timeout(1000) })).ok ? true : undefined));
    }
    const redis = compose.services.redis!;
    redisPort = await port();
    start(REDIS_BIN, [...redis.command!.slice(1).map(interpolate), "--port", String(redisPort), "--bind", "127.0.0.1", "--dir", tmp("ims-redis-"), "--save", ""], {});
    await until("redis listening", () => new Promise<true | undefined>((resolve) => {
      const s = net.connect(redisPort, "127.0.0.1", () => (s.end(), resolve(true)));
      s.on("error", () => resolve(undefined));
    }));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(open.map((nc) => nc.close().catch(() => undefined)));
    await Promise.all(
      children.map((c) =>
        c.exitCode !== null || c.signalCode !== null
          ? undefined
          : new Promise<void>((resolve) => {
              const hard = setTimeout(() => c.kill("SIGKILL"), 5000);
              c.once("exit", () => (clearTimeout(hard), resolve()));
              c.kill("SIGTERM");
            }),
      ),
    );
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }, 20_000);

  const url = (i: number) => `nats://127.0.0.1:${nodes[i]!.client}`;

  it("routes the three nodes to each other with the route password", async () => {
    for (const n of nodes) {
      await until(`${n.name}'s routes`, async () => ((await getJson<{ num_routes: number }>(`http://127.0.0.1:${n.http}/routez`))?.num_routes === 2 ? true : undefined));
    }
  }, 30_000);

  it("refuses a NATS client without credentials, and one with a wrong password", async () => {
    expect(await refused({ servers: url(0) })).toBe("AUTHORIZATION_VIOLATION");
    expect(await refused({ servers: url(1), user: "api", pass: "wrong" })).toBe("AUTHORIZATION_VIOLATION");
    expect(await refused({ servers: url(2), user: "api", pass: dotenv.NATS_PASSWORD_AUTH! })).toBe("AUTHORIZATION_VIOLATION");
    expect(await refused({ servers: url(0), user: "route", pass: dotenv.NATS_ROUTE_PASSWORD! })).toBe("AUTHORIZATION_VIOLATION");
  }, 20_000);

  it("lets each service in as its own user (as compose sets it), and they publish and subscribe across the cluster", async () => {
    const joining = [...ALL_SERVICES, "repl"].map((name) => ({ name, env: envOf(compose.services[name]!) }));
    const conns = await Promise.all(
      joining.map(async ({ name, env }, i) => {
        expect(env.NATS_USER).toBe(name);
        const nc = await connect({ servers: url(i % 3), user: env.NATS_USER, pass: env.NATS_PASSWORD!, reconnect: false, timeout: 3000 });
        open.push(nc);
        return nc;
      }),
    );
    const subject = `bus-check.${randomBytes(4).toString("hex")}`;
    const got = new Set<number>();
    conns.forEach((nc, i) => nc.subscribe(subject, { callback: () => got.add(i) }));
    await Promise.all(conns.map((nc) => nc.flush()));
    // Interest crosses the routes a moment after the subscriptions: publish until every one has it.
    await until("every service's subscription served", async () => {
      conns.at(-1)!.publish(subject, "hello");
      await conns.at(-1)!.flush();
      await sleep(100);
      return got.size === conns.length ? true : undefined;
    }, 10_000);
  }, 30_000);

  it("keeps a server without the route password out of the cluster", async () => {
    const rogue = { client: await port(), route: await port(), http: await port() };
    const child = start(
      NATS_BIN,
      ["-a", "127.0.0.1", "-p", String(rogue.client), "-m", String(rogue.http), "--cluster_name", "ims", "--cluster", `nats://127.0.0.1:${rogue.route}`, "--routes", `nats://127.0.0.1:${nodes[0]!.route},nats://route:wrong@127.0.0.1:${nodes[1]!.route}`],
      {},
    );
    await until("the rogue's attempts", async () => (/Authorization Violation/i.test(logsOf(child)) ? true : undefined), 10_000);
    await sleep(1000);
    expect((await getJson<{ num_routes: number }>(`http://127.0.0.1:${rogue.http}/routez`))?.num_routes).toBe(0);
    for (const n of nodes) expect((await getJson<{ num_routes: number }>(`http://127.0.0.1:${n.http}/routez`))?.num_routes).toBe(2);
  }, 30_000);

  it("answers NOAUTH in Redis without the password, PONG with it; compose's health check tells them apart", async () => {
    // No ready check: its INFO would meet NOAUTH and close the connection before the test asks.
    const bare = new Redis({ port: redisPort, host: "127.0.0.1", lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const redisUrl = envOf(compose.services.api!).REDIS_URL!.replace("@redis:6379", `@127.0.0.1:${redisPort}`);
    const good = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    bare.on("error", () => undefined);
    try {
      await bare.connect();
      await expect(bare.ping()).rejects.toThrow(/NOAUTH/);
      await expect(bare.get("any")).rejects.toThrow(/NOAUTH/);
      await expect(bare.call("AUTH", "wrong")).rejects.toThrow(/WRONGPASS/);
      await expect(bare.ping()).rejects.toThrow(/NOAUTH/);
      // REDIS_URL as compose gives it to every service.
      await good.connect();
      expect(await good.ping()).toBe("PONG");
    } finally {
      bare.disconnect();
      good.disconnect();
    }
    const redis = compose.services.redis!;
    const check = redis.healthcheck!.test!;
    expect(check[0]).toBe("CMD-SHELL");
    const shell = check[1]!.replace("redis-cli", `redis-cli -p ${redisPort}`);
    const run = (env: Record<string, string>) => spawnSync("sh", ["-c", shell], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, timeout: 5000 }).status;
    expect(run(envOf(redis))).toBe(0);
    expect(run({})).not.toBe(0);
  }, 20_000);

  it("connects the service's own transporter, streams and cacher with what compose gives a service", async () => {
    const env = envOf(compose.services.pipelines!);
    const cfg = readConfig({
      ...env,
      NODE_ENV: "development",
      TRANSPORTER: nodes.map((_, i) => url(i)).join(","),
      REDIS_URL: env.REDIS_URL!.replace("@redis:6379", `@127.0.0.1:${redisPort}`),
      NAMESPACE: `auth-${randomBytes(3).toString("hex")}`,
      LOG_LEVEL: "fatal",
    });
    expect(cfg.natsAuth).toEqual({ user: "pipelines", pass: dotenv.NATS_PASSWORD_PIPELINES });
    const broker = new ServiceBroker({ ...brokerOptions(cfg), metrics: false, nodeID: `${cfg.namespace}-pipelines` });
    const streams = createStreamAdapter(cfg, { warn: () => undefined, error: () => undefined });
    try {
      await broker.start();
      await broker.cacher!.set("bus-check", { ok: true });
      expect(await broker.cacher!.get("bus-check")).toEqual({ ok: true });
      await streams.start();
    } finally {
      await streams.stop().catch(() => undefined);
      await broker.stop();
    }
  }, 40_000);
});
