/**
 * Notebooks over HTTP (operations 58-66), with runs on the machine's real Jupyter kernel
 * (python3-nbclient, python3-ipykernel) and the files checked on disk.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { basic, startTestNode, type TestNode } from "../helpers/node";
import { insertUsers, type TestUser } from "../helpers/users";
import { envelope } from "../helpers/envelope";

/** Generous: a kernel takes seconds to start on a loaded 2-core machine. */
const RUN_TIMEOUT_S = 90;
/** The node of the time-limit test. */
const SHORT_TIMEOUT_S = 15;
const PASSWORD = "NotebookPass123";
const S1 = randomUUID();
const S2 = randomUUID();
const P1 = randomUUID();
const P2 = randomUUID();

const user = (username: string, extra: Omit<TestUser, "username" | "password">): TestUser => ({ username, password: PASSWORD, ...extra });
const ana = user("ana@plant1.example", { user_type: "general-user", site_id: S1, plant_id: P1, modules: ["Notebooks"] });
const ben = user("ben@plant2.example", { user_type: "general-user", site_id: S1, plant_id: P2, modules: ["Notebooks"] });
const cai = user("cai@plant1.example", { user_type: "general-user", site_id: S1, plant_id: P1, modules: ["Notebooks"] });
const plantAdmin = user("pa@plant1.example", { user_type: "plant-admin", site_id: S1, plant_id: P1 });
const siteAdmin = user("sa@site1.example", { user_type: "site-admin", site_id: S1 });
const otherSiteAdmin = user("sa@site2.example", { user_type: "site-admin", site_id: S2 });
const noModule = user("nomod@plant1.example", { user_type: "general-user", site_id: S1, plant_id: P1, modules: ["Alerting"] });

const as = (u: TestUser) => ({ auth: { username: u.username, password: u.password } });

interface Created {
  notebook_id: string;
  username: string;
  notebook_name: string;
  path: string;
}

interface Notebook {
  notebook_id: string;
  notebook_name: string;
  status: string;
  created_at: number;
  updated_at: number;
  created_by: string;
  updated_by: string;
  last_run: string | null;
  no_of_runs: number;
  schedule: { period: string | null; until: string | null; time: string | null };
  attributes: { path: string; executed_path: string | null; last_run_status: string | null; last_run_error: string | null };
}

let t: TestNode;
let dir: string;

beforeAll(async () => {
  t = await startTestNode({
    services: ["api", "auth", "notebooks"],
    env: { NOTEBOOK_RUN_TIMEOUT_S: String(RUN_TIMEOUT_S), NOTEBOOK_CONCURRENCY: "2" },
  });
  dir = t.node.config.notebooksDir;
  await insertUsers(t.db.url, [ana, ben, cai, plantAdmin, siteAdmin, otherSiteAdmin, noModule]);
}, 60_000);

afterAll(async () => {
  await t?.stop();
  if (dir) fs.rmSync(path.dirname(dir), { recursive: true, force: true });
});

const err = envelope;

async function create(u: TestUser = ana): Promise<Created> {
  const res = await t.http<Created>("POST", "/_notebooks/notebooks", as(u));
  expect(res.status).toBe(200);
  return res.body;
}

async function fetchNotebook(id: string, u: TestUser = ana): Promise<Notebook> {
  const res = await t.http<Notebook>("GET", `/_notebooks/notebooks/${id}`, as(u));
  expect(res.status).toBe(200);
  return res.body;
}

async function putCells(id: string, sources: string[], u: TestUser = ana): Promise<void> {
  const res = await t.http("PUT", `/_notebooks/notebooks/${id}/_content`, {
    ...as(u),
    body: { cells: sources.map((source) => ({ cell_type: "code", source })) },
  });
  expect(res).toMatchObject({ status: 200, body: "Notebook saved" });
}

async function runAndWait(id: string, u: TestUser = ana, node: TestNode = t, timeoutMs = 120_000): Promise<Notebook> {
  const get = async () => {
    const res = await node.http<Notebook>("GET", `/_notebooks/notebooks/${id}`, as(u));
    expect(res.status).toBe(200);
    return res.body;
  };
  const before = (await get()).no_of_runs;
  const res = await node.http("POST", "/_notebooks/notebooks/_run", { ...as(u), body: { nbkIds: [id], module: "Notebooks" } });
  expect(res).toMatchObject({ status: 200, body: {} });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const nb = await get();
    if (nb.no_of_runs > before) return nb;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`notebook ${id} did not finish its run in ${timeoutMs} ms`);
}

const onDisk = (relative: string) => path.join(dir, relative);

/** GET with a JSON body (ops 64 and 65 document one), which fetch refuses to send. */
function getWithBody(u: TestUser, urlPath: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${t.baseUrl}${urlPath}`,
      {
        method: "GET",
        headers: { authorization: basic(u), "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

describe("create (op 58)", () => {
  it("makes Untitled.ipynb, then Untitled1.ipynb, as valid nbformat 4 files in the user's folder", async () => {
    const first = await create(cai);
    expect(first).toEqual({
      notebook_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      username: cai.username,
      notebook_name: "Untitled.ipynb",
      path: `${cai.username}/Untitled.ipynb`,
    });
    const second = await create(cai);
    expect(second.notebook_name).toBe("Untitled1.ipynb");
    const file = onDisk(second.path);
    const json = JSON.parse(fs.readFileSync(file, "utf8"));
    expect(json).toMatchObject({ nbformat: 4, cells: [] });
    // nbformat's own validator, from the same Python that runs the notebooks.
    execFileSync("/usr/bin/python3", ["-c", "import nbformat,sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))", file]);
  });

  it("refuses a caller without the Notebooks module with 401", async () => {
    const res = await t.http("POST", "/_notebooks/notebooks", as(noModule));
    expect(res).toMatchObject({ status: 401, body: err(401, "Unauthorized access to module by general-user") });
  });
});

describe("fetch, list and count (ops 61-63)", () => {
  it("fetches a notebook as the spec's Notebook object", async () => {
    const c = await create();
    const nb = await fetchNotebook(c.notebook_id);
    expect(nb).toEqual({
      notebook_id: c.notebook_id,
      notebook_name: c.notebook_name,
      status: "Not Scheduled",
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
      created_by: ana.username,
      updated_by: ana.username,
      last_run: null,
      no_of_runs: 0,
      schedule: { period: null, until: null, time: null },
      attributes: { path: c.path, executed_path: null, last_run_status: null, last_run_error: null },
    });
    expect(Math.abs(nb.created_at - Date.now())).toBeLessThan(60_000);
  });

  it("answers an unknown or malformed id with 400 Notebook ID invalid.", async () => {
    for (const id of [randomUUID(), "not-an-id"]) {
      const res = await t.http("GET", `/_notebooks/notebooks/${id}`, as(ana));
      expect(res).toMatchObject({ status: 400, body: err(400, "Notebook ID invalid.") });
    }
  });

  it("lists the caller's notebooks with X-Total-Count, limit and offset, and refuses unknown query keys", async () => {
    const fresh = user(`lister-${Date.now()}@plant1.example`, { user_type: "general-user", site_id: S1, plant_id: P1, modules: ["Notebooks"] });
    await insertUsers(t.db.url, [fresh]);
    const a = await create(fresh);
    const b = await create(fresh);
    const all = await t.http<Notebook[]>("GET", "/_notebooks/notebooks/_all", as(fresh));
    expect(all.status).toBe(200);
    expect(all.body.map((n) => n.notebook_id)).toEqual([a.notebook_id, b.notebook_id]);
    expect(all.headers.get("x-total-count")).toBe("2");
    const page = await t.http<Notebook[]>("GET", "/_notebooks/notebooks/_all?limit=1&offset=1", as(fresh));
    expect(page.body.map((n) => n.notebook_id)).toEqual([b.notebook_id]);
    expect(page.headers.get("x-total-count")).toBe("2");
    const excess = await t.http("GET", "/_notebooks/notebooks/_all?site_id=x", as(fresh));
    expect(excess).toMatchObject({ status: 400, body: err(400, "Excess inputs") });

    const count = await t.http("GET", "/_notebooks/notebooks/_count", as(fresh));
    expect(count).toMatchObject({ status: 200, body: { "Total Notebooks": 2, "Not Scheduled": 2, Scheduled: 0 } });
    const countExcess = await t.http("GET", "/_notebooks/notebooks/_count?x=1", as(fresh));
    expect(countExcess).toMatchObject({ status: 400, body: err(400, "Excess inputs") });
  });
});

describe("access", () => {
  let anaNb: Created;
  let benNb: Created;
  let caiNb: Created;

  beforeAll(async () => {
    anaNb = await create(ana);
    benNb = await create(ben);
    caiNb = await create(cai);
  });

  const ids = async (u: TestUser) =>
    (await t.http<Notebook[]>("GET", "/_notebooks/notebooks/_all", as(u))).body.map((n) => n.notebook_id);

  it("answers another user's notebook exactly as a missing one", async () => {
    const id = anaNb.notebook_id;
    expect(await t.http("GET", `/_notebooks/notebooks/${id}`, as(ben))).toMatchObject({ status: 400, body: err(400, "Notebook ID invalid.") });
    expect(await t.http("PUT", `/_notebooks/notebooks/${id}`, { ...as(ben), body: { notebook_name: "mine" } })).toMatchObject({
      status: 400,
      body: err(400, "No Notebook found"),
    });
    expect(await t.http("DELETE", "/_notebooks/notebooks", { ...as(ben), body: { nbk_ids: [id] } })).toMatchObject({
      status: 200,
      body: err(200, "No notebooks deleted"),
    });
    expect(await t.http("POST", "/_notebooks/notebooks/_run", { ...as(ben), body: { nbkIds: [id], module: "Notebooks" } })).toMatchObject({
      status: 400,
      body: err(400, `Error occurred during notebook execution: Notebook ${id} not found`),
    });
    expect(await t.http("GET", `/_notebooks/notebooks/${id}/_content`, as(ben))).toMatchObject({ status: 400 });
    expect(await ids(ben)).not.toContain(id);
    expect((await fetchNotebook(id, ana)).notebook_name).toBe(anaNb.notebook_name);
  });

  it("lets a plant admin see its plant's users' notebooks, a site admin its site's, and no one else's", async () => {
    const plant = await ids(plantAdmin);
    expect(plant).toEqual(expect.arrayContaining([anaNb.notebook_id, caiNb.notebook_id]));
    expect(plant).not.toContain(benNb.notebook_id);
    expect(await ids(siteAdmin)).toEqual(expect.arrayContaining([anaNb.notebook_id, benNb.notebook_id, caiNb.notebook_id]));
    expect(await ids(otherSiteAdmin)).toEqual([]);
    expect((await fetchNotebook(benNb.notebook_id, siteAdmin)).created_by).toBe(ben.username);
  });
});

describe("rename (op 60)", () => {
  it("renames the file, adds .ipynb and keeps updated_by", async () => {
    const c = await create();
    const res = await t.http("PUT", `/_notebooks/notebooks/${c.notebook_id}`, { ...as(ana), body: { notebook_name: "Pump study" } });
    expect(res).toMatchObject({ status: 200, body: "Rename Successful" });
    const nb = await fetchNotebook(c.notebook_id);
    expect(nb.notebook_name).toBe("Pump study.ipynb");
    expect(nb.attributes.path).toBe(`${ana.username}/Pump study.ipynb`);
    expect(fs.existsSync(onDisk(nb.attributes.path))).toBe(true);
    expect(fs.existsSync(onDisk(c.path))).toBe(false);
  });

  it("takes twenty renames of one notebook at once one after another: the row and the file agree after", async () => {
    const c = await create();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.http("PUT", `/_notebooks/notebooks/${c.notebook_id}`, { ...as(ana), body: { notebook_name: `race-${i}` } })),
    );
    expect(answers.every((a) => a.status === 200 && a.body === "Rename Successful")).toBe(true);
    const nb = await fetchNotebook(c.notebook_id);
    expect(fs.existsSync(onDisk(nb.attributes.path))).toBe(true);
    // No other race-* file was left behind, and the notebook still reads.
    const folder = fs.readdirSync(path.dirname(onDisk(nb.attributes.path))).filter((f) => f.startsWith("race-"));
    expect(folder).toEqual([nb.notebook_name]);
    expect((await t.http("GET", `/_notebooks/notebooks/${c.notebook_id}/_content`, as(ana))).status).toBe(200);
  });

  it("refuses a name that exists, a missing name and an unknown notebook", async () => {
    const a = await create();
    const b = await create();
    await t.http("PUT", `/_notebooks/notebooks/${a.notebook_id}`, { ...as(ana), body: { notebook_name: "taken.ipynb" } });
    const clash = await t.http("PUT", `/_notebooks/notebooks/${b.notebook_id}`, { ...as(ana), body: { notebook_name: "taken" } });
    expect(clash).toMatchObject({
      status: 404,
      body: err(404, "Error occurred while renaming the notebook file: A notebook named taken.ipynb already exists"),
    });
    expect((await fetchNotebook(b.notebook_id)).notebook_name).toBe(b.notebook_name);
    for (const body of [{}, { notebook_name: "" }, { notebook_name: "  " }, { notebook_name: null }]) {
      const missing = await t.http("PUT", `/_notebooks/notebooks/${b.notebook_id}`, { ...as(ana), body });
      expect(missing).toMatchObject({ status: 400, body: err(400, "Missing new name") });
    }
    const unknown = await t.http("PUT", `/_notebooks/notebooks/${randomUUID()}`, { ...as(ana), body: { notebook_name: "x" } });
    expect(unknown).toMatchObject({ status: 400, body: err(400, "No Notebook found") });
    // The path without an id is the spec's rename with its id missing, not a wrong method.
    for (const path of ["/_notebooks/notebooks", "/_notebooks/notebooks/"]) {
      const noId = await t.http("PUT", path, { ...as(ana), body: { notebook_name: "x" } });
      expect(noId).toMatchObject({ status: 400, body: err(400, "Notebook ID is missing") });
    }
  });

  it.each([
    ["a parent folder", "../escaped"],
    ["a path far up", "../../../../tmp/escaped.ipynb"],
    ["an absolute path", "/etc/passwd"],
    ["a sub folder", "sub/dir.ipynb"],
    ["a NUL byte", "nul\u0000byte"],
    ["a hidden name", ".hidden"],
    ["300 characters", "x".repeat(300)],
    ["over 255 bytes of UTF-8", "é".repeat(200)],
  ])("refuses a name with %s with 400 and writes nothing outside the folder", async (_label, name) => {
    const c = await create();
    const res = await t.http("PUT", `/_notebooks/notebooks/${c.notebook_id}`, { ...as(ana), body: { notebook_name: name } });
    expect(res).toMatchObject({ status: 400, body: err(400, "Invalid input: notebook_name") });
    expect((await fetchNotebook(c.notebook_id)).notebook_name).toBe(c.notebook_name);
    expect(fs.existsSync(onDisk(c.path))).toBe(true);
    expect(fs.readdirSync(dir).every((entry) => fs.statSync(path.join(dir, entry)).isDirectory())).toBe(true);
    expect(fs.existsSync(path.join(dir, "escaped.ipynb"))).toBe(false);
    expect(fs.existsSync("/tmp/escaped.ipynb")).toBe(false);
  });
});

describe("run (op 64) on a real Jupyter kernel", () => {
  it("runs a cell that computes a value and stores the executed copy with its output", async () => {
    const c = await create();
    await putCells(c.notebook_id, ["x = 6 * 7\nprint(x)", "x + 1"]);
    const nb = await runAndWait(c.notebook_id);
    expect(nb.attributes).toMatchObject({ last_run_status: "succeeded", last_run_error: null });
    expect(nb.no_of_runs).toBe(1);
    expect(Date.parse(nb.last_run!)).toBeGreaterThan(Date.now() - 60_000);
    const executedPath = c.path.replace(/\.ipynb$/, ".executed.ipynb");
    expect(nb.attributes.executed_path).toBe(executedPath);
    const executed = await t.http<{ cells: { outputs: { text?: string[] | string; data?: Record<string, unknown> }[] }[] }>(
      "GET",
      `/_notebooks/notebooks/${c.notebook_id}/_content?executed=true`,
      as(ana),
    );
    expect(executed.status).toBe(200);
    const [first, second] = executed.body.cells;
    expect([first!.outputs[0]!.text].flat().join("")).toBe("42\n");
    expect([second!.outputs[0]!.data!["text/plain"]].flat().join("")).toBe("43");
    expect(fs.existsSync(onDisk(executedPath))).toBe(true);
    // The source is left as it was.
    const source = await t.http<{ cells: { outputs: unknown[] }[] }>("GET", `/_notebooks/notebooks/${c.notebook_id}/_content`, as(ana));
    expect(source.body.cells[0]!.outputs).toEqual([]);
  });

  it("marks the run failed with the failing cell's error", async () => {
    const c = await create();
    await putCells(c.notebook_id, ["a = 1", "a / 0", "print('never')"]);
    const nb = await runAndWait(c.notebook_id);
    expect(nb.attributes).toMatchObject({ last_run_status: "failed", last_run_error: "ZeroDivisionError: division by zero" });
    expect(nb.no_of_runs).toBe(1);
  });

  it("accepts GET with a body too, and refuses bad requests with the spec's messages", async () => {
    const c = await create();
    expect(await getWithBody(ana, "/_notebooks/notebooks/_run", { nbkIds: [c.notebook_id], module: "Notebooks" })).toMatchObject({
      status: 200,
      body: {},
    });
    for (const body of [{ module: "Notebooks" }, { nbkIds: [], module: "Notebooks" }]) {
      expect(await t.http("POST", "/_notebooks/notebooks/_run", { ...as(ana), body })).toMatchObject({
        status: 400,
        body: err(400, "Notebook ID(s) are required"),
      });
    }
    expect(await t.http("POST", "/_notebooks/notebooks/_run", { ...as(ana), body: { nbkIds: [c.notebook_id] } })).toMatchObject({
      status: 400,
      body: err(400, "Insufficient inputs"),
    });
    const ghost = randomUUID();
    expect(await t.http("POST", "/_notebooks/notebooks/_run", { ...as(ana), body: { nbkIds: [ghost], module: "Notebooks" } })).toMatchObject({
      status: 400,
      body: err(400, `Error occurred during notebook execution: Notebook ${ghost} not found`),
    });
  });
});

describe("schedule and unschedule (ops 65, 66)", () => {
  it("schedules, counts as Scheduled, and unschedules", async () => {
    const fresh = user(`sched-${Date.now()}@plant1.example`, { user_type: "general-user", site_id: S1, plant_id: P1, modules: ["Notebooks"] });
    await insertUsers(t.db.url, [fresh]);
    const a = await create(fresh);
    const b = await create(fresh);
    const res = await t.http("POST", "/_notebooks/notebooks/_schedule", {
      ...as(fresh),
      body: { nbk_ids: [a.notebook_id], until: "2099-12-31 23:00", period: "monday", time: "06:30" },
    });
    expect(res).toMatchObject({ status: 200, body: "Success" });
    const nb = await fetchNotebook(a.notebook_id, fresh);
    expect(nb).toMatchObject({ status: "Scheduled", schedule: { period: "Monday", until: "2099-12-31 23:00", time: "06:30" } });
    expect((await t.http("GET", "/_notebooks/notebooks/_count", as(fresh))).body).toEqual({
      "Total Notebooks": 2,
      "Not Scheduled": 1,
      Scheduled: 1,
    });
    // GET is accepted on the same path (contract); no period is every day, no time is 00:00 UTC.
    const daily = await getWithBody(fresh, "/_notebooks/notebooks/_schedule", { nbk_ids: [b.notebook_id], until: "2099-01-01 00:00" });
    expect(daily).toMatchObject({ status: 200, body: "Success" });
    expect((await fetchNotebook(b.notebook_id, fresh)).schedule).toEqual({ period: null, until: "2099-01-01 00:00", time: "00:00" });

    const un = await t.http("POST", "/_notebooks/notebooks/_unschedule", { ...as(fresh), body: { nbk_ids: [a.notebook_id, b.notebook_id] } });
    expect(un).toMatchObject({ status: 200, body: "Success" });
    expect(await fetchNotebook(a.notebook_id, fresh)).toMatchObject({ status: "Not Scheduled", schedule: { period: null, until: null, time: null } });
    expect((await t.http("GET", "/_notebooks/notebooks/_count", as(fresh))).body).toEqual({
      "Total Notebooks": 2,
      "Not Scheduled": 2,
      Scheduled: 0,
    });
  });

  it("unschedules when until is in the past", async () => {
    const c = await create();
    await t.http("POST", "/_notebooks/notebooks/_schedule", { ...as(ana), body: { nbk_ids: [c.notebook_id], until: "2099-01-01 00:00" } });
    expect((await fetchNotebook(c.notebook_id)).status).toBe("Scheduled");
    const res = await t.http("POST", "/_notebooks/notebooks/_schedule", {
      ...as(ana),
      body: { nbk_ids: [c.notebook_id], until: "2020-01-01 00:00", time: "10:00" },
    });
    expect(res).toMatchObject({ status: 200, body: "Success" });
    expect(await fetchNotebook(c.notebook_id)).toMatchObject({ status: "Not Scheduled", schedule: { period: null, until: null, time: null } });
  });

  it("refuses bad values with the spec's request-processing message", async () => {
    const c = await create();
    const post = (body: unknown) => t.http("POST", "/_notebooks/notebooks/_schedule", { ...as(ana), body });
    const id = c.notebook_id;
    expect(await post({ nbk_ids: [id], until: "2099-02-30 10:00" })).toMatchObject({
      status: 400,
      body: err(400, "Error occurred during request processing: until must be a date and time YYYY-MM-DD HH:MM (UTC)"),
    });
    expect(await post({ nbk_ids: [id], until: "2099-01-01 10:00", time: "25:00" })).toMatchObject({
      status: 400,
      body: err(400, "Error occurred during request processing: time must be HH:MM (UTC)"),
    });
    expect(await post({ nbk_ids: [id], until: "2099-01-01 10:00", period: "Funday" })).toMatchObject({
      status: 400,
      body: err(400, "Error occurred during request processing: period must be a day of the week"),
    });
    const ghost = randomUUID();
    expect(await post({ nbk_ids: [ghost], until: "2099-01-01 10:00" })).toMatchObject({
      status: 400,
      body: err(400, `Error occurred during request processing: Notebook ${ghost} not found`),
    });
    expect(await post({ nbk_ids: [id] })).toMatchObject({ status: 400, body: err(400, "Insufficient inputs") });
    expect((await fetchNotebook(id)).status).toBe("Not Scheduled");

    const un = await t.http("POST", "/_notebooks/notebooks/_unschedule", { ...as(ana), body: { nbk_ids: [ghost] } });
    expect(un).toMatchObject({ status: 500, body: err(500, `Error occurred during request processing: Notebook ${ghost} not found`) });
    const unMissing = await t.http("POST", "/_notebooks/notebooks/_unschedule", { ...as(ana), body: {} });
    expect(unMissing).toMatchObject({ status: 400, body: err(400, "Insufficient inputs") });
  });
});

describe("delete (op 59)", () => {
  it("deletes the notebook, its file and its executed copy; a second delete deletes nothing (envelope 200)", async () => {
    const c = await create();
    await putCells(c.notebook_id, ["1 + 1"]);
    const ran = await runAndWait(c.notebook_id);
    expect(fs.existsSync(onDisk(ran.attributes.executed_path!))).toBe(true);
    const res = await t.http("DELETE", "/_notebooks/notebooks", { ...as(ana), body: { nbk_ids: [c.notebook_id, randomUUID(), "junk"] } });
    expect(res).toMatchObject({ status: 200, body: "Success" });
    expect(fs.existsSync(onDisk(c.path))).toBe(false);
    expect(fs.existsSync(onDisk(ran.attributes.executed_path!))).toBe(false);
    expect(await t.http("GET", `/_notebooks/notebooks/${c.notebook_id}`, as(ana))).toMatchObject({ status: 400 });
    const again = await t.http("DELETE", "/_notebooks/notebooks", { ...as(ana), body: { nbk_ids: [c.notebook_id] } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(err(200, "No notebooks deleted"));
  });

  it("requires notebook ids", async () => {
    for (const body of [{}, { nbk_ids: [] }, { nbk_ids: "x" }]) {
      const res = await t.http("DELETE", "/_notebooks/notebooks", { ...as(ana), body });
      expect(res).toMatchObject({ status: 400, body: err(400, "Notebook IDs are required") });
    }
  });
});

describe("the run time limit", () => {
  let limited: TestNode;
  beforeAll(async () => {
    limited = await startTestNode({ services: ["api", "auth", "notebooks"], env: { NOTEBOOK_RUN_TIMEOUT_S: String(SHORT_TIMEOUT_S) } });
    await insertUsers(limited.db.url, [ana]);
  }, 60_000);
  afterAll(async () => {
    await limited?.stop();
    fs.rmSync(path.dirname(limited.node.config.notebooksDir), { recursive: true, force: true });
  });

  it("kills a run over the time limit, kernel included", async () => {
    const c = (await limited.http<Created>("POST", "/_notebooks/notebooks", as(ana))).body;
    const put = await limited.http("PUT", `/_notebooks/notebooks/${c.notebook_id}/_content`, {
      ...as(ana),
      // A heartbeat the kernel writes every 100 ms for as long as it lives.
      // Written whole (a temp file renamed), so the kill never leaves it empty.
      body: { cells: [{ cell_type: "code", source: "import os, time\nwhile True:\n    open('heartbeat.tmp', 'w').write(str(time.time()))\n    os.replace('heartbeat.tmp', 'heartbeat')\n    time.sleep(0.1)" }] },
    });
    expect(put.status).toBe(200);
    const started = Date.now();
    const nb = await runAndWait(c.notebook_id, ana, limited);
    expect(Date.now() - started).toBeLessThan((SHORT_TIMEOUT_S + 15) * 1000);
    expect(nb.attributes).toMatchObject({
      last_run_status: "failed",
      last_run_error: `time limit of ${SHORT_TIMEOUT_S} s exceeded`,
    });
    // The cell started (the kernel beat) and the kernel is gone: no beat after the run ended.
    const heartbeat = path.join(limited.node.config.notebooksDir, ana.username, "heartbeat");
    const last = fs.readFileSync(heartbeat, "utf8");
    expect(Number(last)).toBeGreaterThan(started / 1000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(fs.readFileSync(heartbeat, "utf8")).toBe(last);
  }, 90_000);
});

describe("without a Jupyter runtime", () => {
  let bare: TestNode;
  beforeAll(async () => {
    bare = await startTestNode({ services: ["api", "auth", "notebooks"], env: { NOTEBOOK_PYTHON: "/nonexistent/python3" } });
  }, 60_000);
  afterAll(async () => {
    await bare?.stop();
  });

  it("answers run with the contract's 500", async () => {
    const c = await bare.http<Created>("POST", "/_notebooks/notebooks");
    const res = await bare.http("POST", "/_notebooks/notebooks/_run", { body: { nbkIds: [c.body.notebook_id], module: "Notebooks" } });
    expect(res).toMatchObject({
      status: 500,
      body: err(500, "Error occurred during notebook execution: Jupyter runtime not available"),
    });
  });
});
