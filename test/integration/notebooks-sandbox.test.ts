/**
 * The notebook sandbox (docs/security.md, Notebooks) with real kernels (python3-nbclient,
 * ipykernel) in bubblewrap: what a cell can reach of the service and the machine, what it can
 * read of the plant's data through `ims` as its owner, the memory and process limits, and a
 * removed user's notebooks. Each cell prints JSON that the test reads from the executed copy.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestNode, type TestNode } from "../helpers/node";
import { makeUser } from "../e2e/alerting-fixtures";
import { createEdge, edgeBody, hierarchy, ingest, type Hierarchy } from "../e2e/pipelines-fixtures";

interface Notebook {
  notebook_id: string;
  no_of_runs: number;
  attributes: { path: string; executed_path: string | null; last_run_status: string | null; last_run_error: string | null };
}
type Auth = { username: string; password: string };

const SECRET_ADMIN_PASSWORD = "AdminPass123";
let t: TestNode;
let h: Hierarchy;
let ana: Auth;
let ben: Auth;
const as = (u: Auth) => ({ auth: u });

beforeAll(async () => {
  t = await startTestNode({
    services: ["api", "auth", "config", "pipelines", "notebooks"],
    env: { NOTEBOOK_RUN_TIMEOUT_S: "90", NOTEBOOK_CONCURRENCY: "2", REDIS_URL: "redis://127.0.0.1:6379" },
  });
  h = await hierarchy(t, "Sbx");
  // ana: a general user of the plant with Notebooks and Condition Monitoring; ben: Notebooks only, another plant.
  ana = await makeUser(t.http, { username: "ana@sbx.example", user_type: "general-user", site_id: h.site, plant_id: h.plant, modules: ["Notebooks", "Condition Monitoring"] });
  const otherPlant = (await t.http<{ id: string }>("POST", "/_config/plants", { body: { plant_name: "Sbx Other", site_id: h.site } })).body.id;
  ben = await makeUser(t.http, { username: "ben@sbx.example", user_type: "general-user", site_id: h.site, plant_id: otherPlant, modules: ["Notebooks"] });
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

async function notebookOf(u: Auth, cells: string[]): Promise<string> {
  const created = await t.http<{ notebook_id: string }>("POST", "/_notebooks/notebooks", as(u));
  expect(created.status).toBe(200);
  const id = created.body.notebook_id;
  const put = await t.http("PUT", `/_notebooks/notebooks/${id}/_content`, { ...as(u), body: { cells: cells.map((source) => ({ cell_type: "code", source })) } });
  expect(put.status).toBe(200);
  return id;
}

async function run(u: Auth, id: string): Promise<Notebook> {
  const get = async () => (await t.http<Notebook>("GET", `/_notebooks/notebooks/${id}`, as(u))).body;
  const before = (await get()).no_of_runs;
  const res = await t.http("POST", "/_notebooks/notebooks/_run", { ...as(u), body: { nbkIds: [id], module: "Notebooks" } });
  expect(res).toMatchObject({ status: 200, body: {} });
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
    const nb = await get();
    if (nb.no_of_runs > before) return nb;
  }
  throw new Error(`notebook ${id} did not finish`);
}

/** What the cells printed, each line of JSON parsed. */
function printed(nb: Notebook): unknown[] {
  const executed = JSON.parse(fs.readFileSync(path.join(t.node.config.notebooksDir, nb.attributes.executed_path!), "utf8")) as {
    cells: { outputs: { output_type: string; text?: string | string[] }[] }[];
  };
  const text = executed.cells.flatMap((c) => c.outputs.filter((o) => o.output_type === "stream").map((o) => (Array.isArray(o.text) ? o.text.join("") : (o.text ?? "")))).join("");
  return text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as unknown);
}

async function runCells(u: Auth, cells: string[]): Promise<{ nb: Notebook; out: unknown[] }> {
  const nb = await run(u, await notebookOf(u, cells));
  return { nb, out: nb.attributes.executed_path ? printed(nb) : [] };
}

describe("a notebook run's sandbox", () => {
  it("has none of the service's secrets in its environment, and runs as an unprivileged user", async () => {
    const { nb, out } = await runCells(ana, ["import json, os\nprint(json.dumps({'env': dict(os.environ), 'uid': os.getuid(), 'euid': os.geteuid()}))"]);
    expect(nb.attributes.last_run_status).toBe("succeeded");
    const { env, uid, euid } = out[0] as { env: Record<string, string>; uid: number; euid: number };
    const all = JSON.stringify(env);
    for (const secret of [t.db.url, SECRET_ADMIN_PASSWORD, "postgres://", "nats://", "redis://"]) expect(all).not.toContain(secret);
    for (const name of ["DATABASE_URL", "ADMIN_PASSWORD", "REDIS_URL", "TRANSPORTER", "TWILIO_AUTH_TOKEN", "SMTP_URL"]) expect(env).not.toHaveProperty(name);
    expect(env.IMS_API_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(uid).not.toBe(0);
    expect(euid).not.toBe(0);
  }, 150_000);

  it("reaches neither PostgreSQL, NATS, Redis nor MariaDB on loopback, nor the service's API without its door", async () => {
    const ports = { postgres: 5432, nats: 4222, redis: 6379, mariadb: 3306, api: Number(new URL(t.baseUrl).port) };
    const cell = [
      "import json, socket",
      `ports = ${JSON.stringify(ports)}`,
      "out = {}",
      "for name, port in ports.items():",
      "    try:",
      "        socket.create_connection(('127.0.0.1', port), timeout=3).close()",
      "        out[name] = 'connected'",
      "    except OSError as e:",
      "        out[name] = type(e).__name__",
      "print(json.dumps(out))",
    ].join("\n");
    const { nb, out } = await runCells(ana, [cell]);
    expect(nb.attributes.last_run_status).toBe("succeeded");
    const reached = out[0] as Record<string, string>;
    expect(Object.keys(reached).sort()).toEqual(Object.keys(ports).sort());
    for (const [name, result] of Object.entries(reached)) expect([name, result]).toEqual([name, "ConnectionRefusedError"]);
  }, 150_000);

  it("cannot open another user's notebook by its absolute path, nor the service's files", async () => {
    const bens = await notebookOf(ben, ["print('ben')"]);
    const bensPath = path.join(t.node.config.notebooksDir, (await t.http<Notebook>("GET", `/_notebooks/notebooks/${bens}`, as(ben))).body.attributes.path);
    expect(fs.existsSync(bensPath)).toBe(true);
    const targets = [bensPath, path.join(process.cwd(), "package.json"), "/etc/shadow", `/proc/${process.pid}/environ`];
    const cell = [
      "import json",
      `targets = ${JSON.stringify(targets)}`,
      "out = {}",
      "for p in targets:",
      "    try:",
      "        open(p).read(1)",
      "        out[p] = 'read'",
      "    except OSError as e:",
      "        out[p] = type(e).__name__",
      "print(json.dumps(out))",
    ].join("\n");
    const { nb, out } = await runCells(ana, [cell]);
    expect(nb.attributes.last_run_status).toBe("succeeded");
    for (const [target, result] of Object.entries(out[0] as Record<string, string>)) expect([target, result]).toEqual([target, "FileNotFoundError"]);
  }, 150_000);

  it("leaves no process behind: a child in a session of its own is gone after the run", async () => {
    // Written whole (a temp file renamed), so the kill never leaves it empty.
    const child = "import os, time\\nwhile True:\\n    open('child-beat.tmp', 'w').write(str(time.time()))\\n    os.replace('child-beat.tmp', 'child-beat')\\n    time.sleep(0.1)";
    const cell = ["import subprocess, sys, time", `subprocess.Popen([sys.executable, '-c', "${child}"], start_new_session=True)`, "time.sleep(1)", "print('{}')"].join("\n");
    const { nb } = await runCells(ana, [cell]);
    expect(nb.attributes.last_run_status).toBe("succeeded");
    const beat = path.join(t.node.config.notebooksDir, "ana@sbx.example", "child-beat");
    const last = fs.readFileSync(beat, "utf8");
    expect(Number(last)).toBeGreaterThan(Date.now() / 1000 - 60);
    await new Promise((r) => setTimeout(r, 1000));
    expect(fs.readFileSync(beat, "utf8")).toBe(last);
  }, 150_000);

  it("fails a run that takes 2 GiB with the memory limit's reason", async () => {
    const { nb } = await runCells(ana, ["x = b'x' * (2 << 30)\nprint(len(x))"]);
    expect(nb.attributes).toMatchObject({ last_run_status: "failed", last_run_error: "memory limit of 1024 MB exceeded" });
  }, 150_000);
});

describe("what a notebook's code cannot turn against the service", () => {
  it("plants a link to another user's notebook in its folder: the service never follows it", async () => {
    const bens = await notebookOf(ben, ["print('BEN PRIVATE')"]);
    const bensPath = path.join(t.node.config.notebooksDir, (await t.http<Notebook>("GET", `/_notebooks/notebooks/${bens}`, as(ben))).body.attributes.path);
    const decoy = await notebookOf(ana, ["print('decoy')"]);
    const decoyName = path.basename((await t.http<Notebook>("GET", `/_notebooks/notebooks/${decoy}`, as(ana))).body.attributes.path);
    const { nb } = await runCells(ana, [`import os\nos.unlink('${decoyName}')\nos.symlink('${bensPath}', '${decoyName}')\nprint('{}')`]);
    expect(nb.attributes.last_run_status).toBe("succeeded");
    expect(fs.lstatSync(path.join(t.node.config.notebooksDir, "ana@sbx.example", decoyName)).isSymbolicLink()).toBe(true);
    const read = await t.http("GET", `/_notebooks/notebooks/${decoy}/_content`, as(ana));
    expect(JSON.stringify(read.body)).not.toContain("BEN PRIVATE");
    expect(read).toMatchObject({ status: 400, body: { error: { message: "Error occurred during notebook retrieval: The notebook file does not exist" } } });
  }, 150_000);

  it("cannot forge its run's outcome: a success written to its stdout, stderr and any process's fd 3, then the runner killed, is a failed run", async () => {
    const cell = [
      "import os",
      "fake = b'{\"status\": \"succeeded\"}\\n'",
      "for fd in (1, 2):",
      "    os.write(fd, fake)",
      "for pid in os.listdir('/proc'):",
      "    if pid.isdigit():",
      "        try: os.write(os.open(f'/proc/{pid}/fd/3', os.O_WRONLY), fake)",
      "        except OSError: pass",
      // The runner (the kernel's parent) dies before it can report: only a forged line could say how the run went.
      "os.kill(os.getppid(), 9)",
    ].join("\n");
    const nb = await run(ana, await notebookOf(ana, [cell]));
    expect(nb.attributes.last_run_status).toBe("failed");
    expect(nb.attributes.last_run_error).toMatch(/^The runner exited/);
  }, 150_000);

  it("fails a run whose child the memory limit killed, even when the cell went on", async () => {
    const cell = ["import subprocess, sys", "r = subprocess.run([sys.executable, '-c', \"x = b'x' * (1536 << 20)\"])", "print(r.returncode)"].join("\n");
    const { nb } = await runCells(ana, [cell]);
    expect(nb.attributes).toMatchObject({ last_run_status: "failed", last_run_error: "memory limit of 1024 MB exceeded" });
  }, 150_000);

  it("cannot start more than 512 processes", async () => {
    const cell = [
      "import json, subprocess",
      "started = []",
      "try:",
      "    for i in range(700):",
      "        started.append(subprocess.Popen(['sleep', '30']))",
      "except OSError as e:",
      "    failed = type(e).__name__",
      "else:",
      "    failed = None",
      "print(json.dumps({'started': len(started), 'failed': failed}))",
      "for p in started: p.kill()",
    ].join("\n");
    const { nb, out } = await runCells(ana, [cell]);
    expect(nb.attributes.last_run_status).toBe("succeeded");
    const got = out[0] as { started: number; failed: string | null };
    expect(got.started).toBeLessThan(512);
    expect(got.failed).toBe("BlockingIOError");
  }, 150_000);
});

describe("reading the plant's data with ims, as the notebook's owner", () => {
  it("reads exactly what was ingested; writes, runs and routes outside the owner's modules are refused", async () => {
    const gw = await createEdge(t, edgeBody(h, [h.pump.id]));
    const base = Date.UTC(2026, 10, 20);
    const readings = Array.from({ length: 7 * 24 }, (_, i) => ({ monitor_id: h.pump.id, tag_id: "pressure", ts: base + i * 3_600_000, value: Math.round((4 + Math.sin(i / 9)) * 1000) / 1000 + 0.1 }));
    expect((await ingest(t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, { readings })).status).toBe(200);
    const from = new Date(base).toISOString();
    const to = new Date(base + 7 * 86_400_000).toISOString();
    const cell = [
      "import json, urllib.request, urllib.error, os, ims",
      `week = ims.history('${h.pump.id}', 'Pressure', '${from}', '${to}')`,
      `rows = ims.export('${h.pump.id}', '${from}', '${to}')`,
      `frame = ims.history_frame('${h.pump.id}', 'Pressure', '${from}', '${to}')`,
      "def status(call):",
      "    try:",
      "        call()",
      "        return 200",
      "    except ims.ImsError as e:",
      "        return e.status",
      "    except urllib.error.HTTPError as e:",
      "        return e.code",
      "base = os.environ['IMS_API_URL']",
      "post = lambda: urllib.request.urlopen(urllib.request.Request(base + '/_notebooks/notebooks', data=b'{}', method='POST'))",
      "print(json.dumps({'timestamp': week['timestamp'], 'value': week['value'], 'unit': week['tag_unit'], 'export': [[r['timestamp'], r['Pressure']] for r in rows],",
      "  'frame': [[t.value // 10**6, v] for t, v in frame['value'].items()],",
      "  'configuration': status(lambda: ims.get('/_config/sites/_list')), 'post': status(post),",
      "  'run': status(lambda: ims.get('/_notebooks/notebooks/_run')), 'notebooks': len(ims.get('/_notebooks/notebooks/_all'))}))",
    ].join("\n");
    const { nb, out } = await runCells(ana, [cell]);
    expect(nb.attributes.last_run_error).toBeNull();
    const got = out[0] as { timestamp: number[]; value: number[]; unit: string; export: [string, number][]; frame: [number, number][]; configuration: number; post: number; run: number; notebooks: number };
    expect(got.timestamp).toEqual(readings.map((r) => r.ts));
    expect(got.value).toEqual(readings.map((r) => r.value));
    expect(got.unit).toBe("bar");
    expect(got.export).toEqual(readings.map((r) => [new Date(r.ts).toISOString(), r.value]));
    // The DataFrame (pandas): indexed by time, the same values.
    expect(got.frame).toEqual(readings.map((r) => [r.ts, r.value]));
    // Configuration is not among ana's modules; a POST and the GET form of run change things.
    expect({ configuration: got.configuration, post: got.post, run: got.run }).toEqual({ configuration: 401, post: 403, run: 403 });
    // Her own notebooks only, as the API answers her.
    const mine = await t.http<unknown[]>("GET", "/_notebooks/notebooks/_all", as(ana));
    expect(got.notebooks).toBe(mine.body.length);
  }, 150_000);

  it("cannot read another plant's data", async () => {
    const { nb, out } = await runCells(ben, [
      "import json, ims",
      `try:\n    ims.history('${h.pump.id}', 'Pressure', '2026-11-20T00:00:00Z', '2026-11-21T00:00:00Z')\n    print(json.dumps('read'))\nexcept ims.ImsError as e:\n    print(json.dumps(e.status))`,
    ]);
    expect(nb.attributes.last_run_status).toBe("succeeded");
    expect([400, 401]).toContain(out[0]);
  }, 150_000);
});

describe("a removed user's notebooks", () => {
  it("are gone with the user, files and schedules too; a new user of the same name sees nothing of them", async () => {
    const cai = await makeUser(t.http, { username: "cai@sbx.example", user_type: "general-user", site_id: h.site, plant_id: h.plant, modules: ["Notebooks"] });
    const id = await notebookOf(cai, ["print('mine')"]);
    const sched = await t.http("POST", "/_notebooks/notebooks/_schedule", { ...as(cai), body: { nbk_ids: [id], until: "2099-01-01 00:00" } });
    expect(sched.status).toBe(200);
    const folder = path.join(t.node.config.notebooksDir, "cai@sbx.example");
    expect(fs.readdirSync(folder)).toContain("Untitled.ipynb");
    expect((await t.http("DELETE", `/_config/users/${cai.username}`)).status).toBe(200);
    const again = await makeUser(t.http, { username: "cai@sbx.example", user_type: "general-user", site_id: h.site, plant_id: h.plant, modules: ["Notebooks"] });
    const list = await t.http<unknown[]>("GET", "/_notebooks/notebooks/_all", as(again));
    expect(list).toMatchObject({ status: 200, body: [] });
    const count = await t.http("GET", "/_notebooks/notebooks/_count", as(again));
    expect(count.body).toEqual({ "Total Notebooks": 0, Scheduled: 0, "Not Scheduled": 0 });
    expect((await t.http("GET", `/_notebooks/notebooks/${id}`)).status).toBe(400);
    expect(fs.existsSync(path.join(folder, "Untitled.ipynb"))).toBe(false);
  }, 60_000);
});

describe("a machine that cannot sandbox", () => {
  let bare: TestNode;
  let privateDir: string;
  beforeAll(async () => {
    // A Python with Jupyter that the runs' users cannot reach (a copy in a private folder): no sandbox can be made.
    privateDir = fs.mkdtempSync(path.join(os.tmpdir(), "ims-private-python-"));
    const python = path.join(privateDir, "python3");
    fs.copyFileSync(fs.realpathSync("/usr/bin/python3"), python);
    fs.chmodSync(python, 0o755);
    execFileSync(python, ["-c", "import nbclient, ipykernel"]);
    bare = await startTestNode({ services: ["api", "auth", "notebooks"], env: { NOTEBOOK_PYTHON: python } });
  }, 60_000);
  afterAll(async () => {
    await bare?.stop();
    fs.rmSync(privateDir, { recursive: true, force: true });
  });

  it("answers run with 500 sandbox not available and never runs the notebook", async () => {
    const c = await bare.http<{ notebook_id: string }>("POST", "/_notebooks/notebooks");
    const res = await bare.http("POST", "/_notebooks/notebooks/_run", { body: { nbkIds: [c.body.notebook_id], module: "Notebooks" } });
    expect(res).toMatchObject({ status: 500, body: { error: { status: 500, message: "Error occurred during notebook execution: sandbox not available" } } });
    const nb = await bare.http<Notebook>("GET", `/_notebooks/notebooks/${c.body.notebook_id}`);
    expect(nb.body).toMatchObject({ no_of_runs: 0, attributes: { executed_path: null } });
  }, 60_000);
});

describe("the pod sandbox (NOTEBOOK_SANDBOX=pod, Kubernetes: the pod's NetworkPolicy keeps its network)", () => {
  let pod: TestNode;
  beforeAll(async () => {
    pod = await startTestNode({ services: ["api", "auth", "notebooks"], env: { NOTEBOOK_SANDBOX: "pod", NOTEBOOK_RUN_TIMEOUT_S: "90" } });
  }, 60_000);
  afterAll(async () => {
    await pod?.stop();
  });

  it("runs as the owner's uid with a clean environment, other owners' folders closed, nothing left after the run", async () => {
    // The admin's folder exists; a second user's kernel must not read it.
    const eve = await makeUser(pod.http, { username: "eve@pod.example", user_type: "saas-admin", modules: ["Notebooks"] });
    const adminFolder = path.join(pod.node.config.notebooksDir, "admin@localhost");
    await pod.http("POST", "/_notebooks/notebooks");
    const created = await pod.http<{ notebook_id: string }>("POST", "/_notebooks/notebooks", as(eve));
    const id = created.body.notebook_id;
    const child = "import os, time\\nwhile True:\\n    open('pod-beat.tmp', 'w').write(str(time.time()))\\n    os.replace('pod-beat.tmp', 'pod-beat')\\n    time.sleep(0.1)";
    const cell = [
      "import json, os, subprocess, sys, time",
      `subprocess.Popen([sys.executable, '-c', "${child}"], start_new_session=True)`,
      "time.sleep(1)",
      "try:",
      `    os.listdir(${JSON.stringify(adminFolder)})`,
      "    other = 'listed'",
      "except OSError as e:",
      "    other = type(e).__name__",
      "print(json.dumps({'uid': os.getuid(), 'env': sorted(os.environ), 'other': other}))",
    ].join("\n");
    expect((await pod.http("PUT", `/_notebooks/notebooks/${id}/_content`, { ...as(eve), body: { cells: [{ cell_type: "code", source: cell }] } })).status).toBe(200);
    expect((await pod.http("POST", "/_notebooks/notebooks/_run", { ...as(eve), body: { nbkIds: [id], module: "Notebooks" } })).status).toBe(200);
    let nb: Notebook | undefined;
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
      nb = (await pod.http<Notebook>("GET", `/_notebooks/notebooks/${id}`, as(eve))).body;
      if (nb.no_of_runs > 0) break;
    }
    expect(nb?.attributes.last_run_status).toBe("succeeded");
    const executed = JSON.parse(fs.readFileSync(path.join(pod.node.config.notebooksDir, nb!.attributes.executed_path!), "utf8")) as { cells: { outputs: { text: string | string[] }[] }[] };
    const text = executed.cells[0]!.outputs.map((o) => (Array.isArray(o.text) ? o.text.join("") : o.text)).join("");
    const got = JSON.parse(text) as { uid: number; env: string[]; other: string };
    expect(got.uid).toBeGreaterThanOrEqual(200_000);
    expect(got.env).not.toContain("DATABASE_URL");
    expect(got.env).not.toContain("ADMIN_PASSWORD");
    expect(got.other).toBe("PermissionError");
    const beat = path.join(pod.node.config.notebooksDir, "eve@pod.example", "pod-beat");
    const last = fs.readFileSync(beat, "utf8");
    await new Promise((r) => setTimeout(r, 1000));
    expect(fs.readFileSync(beat, "utf8")).toBe(last);
  }, 150_000);
});
