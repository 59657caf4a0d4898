/**
 * `npm run load -- <service> [--url URL] [--duration S] [--connections N] [--out FILE]`
 *
 * Drives a service's heaviest routes with autocannon, then the same actions directly through a
 * broker (no HTTP, no gateway: the difference is the gateway's cost), and prints req/s, p50, p99
 * and errors per scenario plus a JSON report.
 *
 * Target: `--url` (a running installation: a port-forwarded api, for example); the direct calls
 * then join its cluster when TRANSPORTER (and NAMESPACE) are set, and are skipped otherwise.
 * Without `--url`, a node with api, auth, config and the service is started for the run on a
 * fresh database of DATABASE_URL's server (default: the local PostgreSQL the tests use).
 * Credentials: --user/--password, else ADMIN_USERNAME/ADMIN_PASSWORD.
 *
 * Services: config, auth, pipelines, alerting, notebooks, cm, ems. A scenario whose service
 * does not answer (503, or 404 when it never joined) is reported as skipped.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import autocannon from "autocannon";
import { ServiceBroker } from "moleculer";
import type { Principal } from "../lib/access";
import { readConfig } from "../lib/config";
import { startNode, type RunningNode } from "../bin/runtime";
import { brokerOptions } from "../moleculer.config";
import { createTestDatabase } from "../test/helpers/db";

export interface Fixture {
  site_id: string;
  plant_id: string;
  function_id: string;
  asset_id?: string;
  username: string;
}

interface Scenario {
  name: string;
  method: "GET" | "POST";
  path: (f: Fixture) => string;
  /** A JSON body; `[<id>]` in it becomes a fresh id per request (unique names for writes). */
  body?: (f: Fixture) => unknown;
  action: string;
  params: (f: Fixture) => Record<string, unknown>;
}

const qs = (params: Record<string, string>) => new URLSearchParams(params).toString();
const WEEK = () => ({ from: new Date(Date.now() - 7 * 86400_000).toISOString(), to: new Date().toISOString() });

export const SCENARIOS: Record<string, Scenario[]> = {
  config: [
    { name: "list sites", method: "GET", path: () => "/_config/sites/_list", action: "config.sites.list", params: () => ({}) },
    {
      name: "list plants",
      method: "GET",
      path: (f) => `/_config/plants/_list?${qs({ site_id: f.site_id })}`,
      action: "config.plants.list",
      params: (f) => ({ site_id: f.site_id }),
    },
    {
      name: "list functions",
      method: "GET",
      path: (f) => `/_config/functions/_list?${qs({ plant_id: f.plant_id })}`,
      action: "config.functions.list",
      params: (f) => ({ plant_id: f.plant_id }),
    },
    {
      name: "create function",
      method: "POST",
      path: () => "/_config/functions",
      body: (f) => ({ function_name: "load [<id>]", plant_id: f.plant_id }),
      action: "config.functions.create",
      params: (f) => ({ function_name: `load ${randomBytes(8).toString("hex")}`, plant_id: f.plant_id }),
    },
  ],
  auth: [
    { name: "authenticated request", method: "GET", path: () => "/_config/server-time", action: "config.serverTime", params: () => ({}) },
    { name: "list users", method: "GET", path: () => "/_config/users/_list", action: "auth.users.list", params: () => ({}) },
    {
      name: "fetch user",
      method: "GET",
      path: (f) => `/_config/users/${encodeURIComponent(f.username)}`,
      action: "auth.users.get",
      params: (f) => ({ username: f.username }),
    },
  ],
  pipelines: [
    {
      name: "list pipelines",
      method: "GET",
      path: (f) => `/_config/pipelines/_list?${qs({ plant_id: f.plant_id })}`,
      action: "pipelines.list",
      params: (f) => ({ plant_id: f.plant_id }),
    },
    {
      name: "count pipelines",
      method: "GET",
      path: (f) => `/_config/pipelines/_count?${qs({ plant_id: f.plant_id })}`,
      action: "pipelines.count",
      params: (f) => ({ plant_id: f.plant_id }),
    },
  ],
  alerting: [
    {
      name: "count alerts",
      method: "GET",
      path: (f) => `/_alerting/alerts/_count?${qs({ function_id: f.function_id })}`,
      action: "alerting.alerts.count",
      params: (f) => ({ function_id: f.function_id }),
    },
    {
      name: "list alerts",
      method: "GET",
      path: (f) => `/_alerting/alerts/_list?${qs({ function_id: f.function_id, is_hidden: "0" })}`,
      action: "alerting.alerts.list",
      params: (f) => ({ function_id: f.function_id, is_hidden: "0" }),
    },
    {
      name: "list watchers",
      method: "GET",
      path: (f) => `/_alerting/watchers/_list?${qs({ function_id: f.function_id })}`,
      action: "alerting.watchers.list",
      params: (f) => ({ function_id: f.function_id }),
    },
  ],
  notebooks: [
    { name: "list notebooks", method: "GET", path: () => "/_notebooks/notebooks/_all", action: "notebooks.all", params: () => ({}) },
    { name: "count notebooks", method: "GET", path: () => "/_notebooks/notebooks/_count", action: "notebooks.count", params: () => ({}) },
  ],
  cm: [
    {
      name: "assets of a function",
      method: "GET",
      path: (f) => `/_cm/assets/_list?${qs({ function_id: f.function_id })}`,
      action: "cm.assets.list",
      params: (f) => ({ function_id: f.function_id }),
    },
  ],
  ems: [
    {
      name: "energy of a function",
      method: "GET",
      path: (f) => `/_ems/monitor/_all?${qs({ function_id: f.function_id, label: "function", ...WEEK() })}`,
      action: "ems.all",
      params: (f) => ({ function_id: f.function_id, label: "function", ...WEEK() }),
    },
  ],
};

export interface Figures {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export interface ScenarioReport {
  name: string;
  action: string;
  http: Figures | { skipped: string };
  broker: Figures | { skipped: string };
}

export interface LoadReport {
  service: string;
  target: string;
  duration_s: number;
  connections: number;
  started_at: string;
  scenarios: ScenarioReport[];
}

export interface LoadOptions {
  service: string;
  url?: string;
  durationS: number;
  connections: number;
  username: string;
  password: string;
  log?: (line: string) => void;
}

const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString("base64")}`;

async function request<T>(base: string, auth: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** What the scenarios read: a site, plant, function and asset of the run's own, made through the API. */
async function makeFixture(base: string, auth: string, username: string): Promise<Fixture> {
  const tag = randomBytes(3).toString("hex");
  const create = async (path: string, body: unknown): Promise<string> => {
    const res = await request<{ id: string }>(base, auth, "POST", path, body);
    if (res.status !== 200) throw new Error(`setup: POST ${path} answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id;
  };
  const site_id = await create("/_config/sites", {
    site_name: `Load ${tag}`,
    location: "Load test",
    timezone: "UTC",
    latitude: "0",
    edge_firmware: { current_version: "1.0.0", previous_version: "" },
  });
  const plant_id = await create("/_config/plants", { plant_name: `Load ${tag} Plant`, site_id });
  const function_id = await create("/_config/functions", { function_name: `Load ${tag} Function`, plant_id });
  const asset_id = await create("/_config/assets", { asset_name: `Load ${tag} Asset`, function_id, asset_category: "Rotating" });
  return { site_id, plant_id, function_id, asset_id, username };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const round = (n: number) => Math.round(n * 100) / 100;

/** The action called in a loop by `connections` concurrent callers for the duration. */
async function brokerLoad(broker: ServiceBroker, user: Principal, s: Scenario, f: Fixture, durationS: number, connections: number): Promise<Figures> {
  const latencies: number[] = [];
  let errors = 0;
  const until = Date.now() + durationS * 1000;
  const worker = async () => {
    while (Date.now() < until) {
      const t0 = process.hrtime.bigint();
      try {
        await broker.call(s.action, s.params(f), { meta: { user } });
      } catch {
        errors++;
      }
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: connections }, worker));
  latencies.sort((a, b) => a - b);
  const elapsed = (Date.now() - started) / 1000;
  return { requests: latencies.length, rps: round(latencies.length / elapsed), p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)), errors };
}

async function httpLoad(base: string, auth: string, s: Scenario, f: Fixture, durationS: number, connections: number): Promise<Figures> {
  const body = s.body?.(f);
  const opts = {
    url: base + s.path(f),
    method: s.method,
    connections,
    duration: durationS,
    headers: { authorization: auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body), idReplacement: true }),
  };
  const r = await autocannon(opts);
  return { requests: r.requests.total, rps: round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx };
}

export function formatReport(report: LoadReport): string {
  const rows = report.scenarios.flatMap((s) =>
    (["http", "broker"] as const).map((via) => {
      const f = s[via];
      return "skipped" in f
        ? [s.name, via, "-", "-", "-", "-", `skipped: ${f.skipped}`]
        : [s.name, via, String(f.rps), `${f.p50} ms`, `${f.p99} ms`, String(f.errors), ""];
    }),
  );
  const head = ["scenario", "via", "req/s", "p50", "p99", "errors", ""];
  const widths = head.map((_, i) => Math.max(...[head, ...rows].map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [
    `load: ${report.service} against ${report.target}, ${report.duration_s} s x ${report.connections} connections per scenario`,
    line(head),
    ...rows.map(line),
  ].join("\n");
}

export async function runLoad(opts: LoadOptions): Promise<LoadReport> {
  const log = opts.log ?? (() => undefined);
  const scenarios = SCENARIOS[opts.service];
  if (!scenarios) throw new Error(`unknown service "${opts.service}"; one of ${Object.keys(SCENARIOS).join(", ")}`);

  let node: RunningNode | undefined;
  let dropDb: (() => Promise<void>) | undefined;
  let broker: ServiceBroker | undefined;
  let ownBroker = false;
  let base = opts.url?.replace(/\/$/, "");
  try {
    if (!base) {
      // A node for the run: api, auth, config and the service, on a database of its own.
      const db = await createTestDatabase("ims_load");
      dropDb = db.drop;
      const services = [...new Set(["api", "auth", "config", opts.service])];
      node = await startNode(
        readConfig({
          ...process.env,
          SERVICES: services.join(","),
          DATABASE_URL: db.url,
          PORT: "0",
          NAMESPACE: `load-${randomBytes(3).toString("hex")}`,
          TRANSPORTER: "",
          LOG_LEVEL: process.env.LOG_LEVEL ?? "fatal",
          ADMIN_USERNAME: opts.username,
          ADMIN_PASSWORD: opts.password,
          DATA_DIR: `/tmp/ims-load-${randomBytes(3).toString("hex")}`,
        }),
      );
      const api = node.broker.getLocalService("api") as unknown as { server: Server };
      base = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
      broker = node.broker;
    } else if (process.env.TRANSPORTER) {
      broker = new ServiceBroker({
        ...brokerOptions(readConfig({ ...process.env, SERVICES: "api", LOG_LEVEL: "fatal" })),
        nodeID: `load-${process.pid}`,
        cacher: null,
        metrics: { enabled: false },
      });
      ownBroker = true;
      await broker.start();
      await broker.waitForServices(["auth", opts.service], 5000).catch(() => undefined);
    }

    const auth = basic(opts.username, opts.password);
    log(`target ${base}; setting up`);
    const fixture = await makeFixture(base, auth, opts.username.toLowerCase());
    const user = broker ? await broker.call<Principal, { username: string; password: string }>("auth.authenticate", { username: opts.username, password: opts.password }) : undefined;

    const report: LoadReport = {
      service: opts.service,
      target: base,
      duration_s: opts.durationS,
      connections: opts.connections,
      started_at: new Date().toISOString(),
      scenarios: [],
    };
    for (const s of scenarios) {
      const probe = await request<{ error?: { message: string } }>(base, auth, s.method, s.path(fixture), s.body ? JSON.parse(JSON.stringify(s.body(fixture)).replace("[<id>]", "probe")) : undefined);
      // 503: the service is away; 404: it never joined this installation (the gateway knows its routes from it).
      if (probe.status === 503 || probe.status === 404) {
        const skipped = { skipped: `${s.action}: ${probe.body?.error?.message ?? probe.status}` };
        report.scenarios.push({ name: s.name, action: s.action, http: skipped, broker: skipped });
        log(`${s.name}: skipped (${probe.status})`);
        continue;
      }
      if (probe.status !== 200) throw new Error(`${s.name}: ${s.method} ${s.path(fixture)} answered ${probe.status} ${JSON.stringify(probe.body)}`);
      log(`${s.name}: http`);
      const http = await httpLoad(base, auth, s, fixture, opts.durationS, opts.connections);
      log(`${s.name}: broker`);
      const direct = broker && user ? await brokerLoad(broker, user, s, fixture, opts.durationS, opts.connections) : { skipped: "set TRANSPORTER (and NAMESPACE) to call the actions directly" };
      report.scenarios.push({ name: s.name, action: s.action, http, broker: direct });
    }
    return report;
  } finally {
    if (ownBroker) await broker?.stop();
    await node?.stop();
    await dropDb?.();
  }
}

function argValue(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  if (i >= 0) return argv[i + 1];
  const eq = argv.find((a) => a.startsWith(`--${name}=`));
  return eq?.slice(name.length + 3);
}

async function main(argv: string[]): Promise<void> {
  const service = argv.find((a, i) => !a.startsWith("--") && (i === 0 || !argv[i - 1]!.startsWith("--")));
  if (!service || !SCENARIOS[service]) {
    console.error(`usage: npm run load -- <${Object.keys(SCENARIOS).join("|")}> [--url URL] [--duration S] [--connections N] [--out FILE] [--user U --password P]`);
    process.exit(2);
  }
  const report = await runLoad({
    service,
    url: argValue(argv, "url"),
    durationS: Number(argValue(argv, "duration") ?? 10),
    connections: Number(argValue(argv, "connections") ?? 10),
    username: argValue(argv, "user") ?? process.env.ADMIN_USERNAME ?? "admin@localhost",
    password: argValue(argv, "password") ?? process.env.ADMIN_PASSWORD ?? "LoadTest123",
    log: (line) => console.error(`[load] ${line}`),
  });
  console.log(formatReport(report));
  const out = argValue(argv, "out");
  if (out) fs.writeFileSync(out, JSON.stringify(report, null, 2));
  console.log(JSON.stringify(report));
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
