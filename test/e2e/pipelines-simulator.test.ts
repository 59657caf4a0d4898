/**
 * The gateway simulator (scripts/simulate.ts) against a node, as the walkthrough of docs/api-tour.md runs
 * it: heartbeats show in the list, a start action is acked and the pipeline becomes running,
 * readings of every registered monitor are stored (a rising kWh counter for the energy monitor),
 * waveforms of the condition monitor arrive, and a stop action stops the stream; --backfill sends
 * every tag's history at its step, which _history then reads back.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import path from "node:path";
import { Client } from "pg";
import { RAW_READINGS_ONLY, startTestNode, type TestNode } from "../helpers/node";
import { createEdge, edgeBody, eventually, hierarchy, type Hierarchy } from "./pipelines-fixtures";

let t: TestNode;
let h: Hierarchy;
let pg: Client;
let sim: ChildProcess | undefined;
let backfiller: ChildProcess | undefined;
let output = "";

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "pipelines"], env: { ...RAW_READINGS_ONLY } });
  pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  h = await hierarchy(t, "Sim");
});
afterAll(async () => {
  sim?.kill("SIGKILL");
  backfiller?.kill("SIGKILL");
  await pg?.end();
  await t?.stop();
});

type Listed = { pipeline_id: string; status: string; total_events: number; heart_beats: Record<string, number | null> };

it("streams a registered gateway's monitors once started, and stops when told", async () => {
  const gw = await createEdge(t, edgeBody(h, [h.pump.id, h.fan.id, h.meter.id], { function_enabled_in_registration: true }));
  sim = spawn(process.execPath, ["--import", "tsx", "scripts/simulate.ts", "--pipeline", gw.id, "--key", gw.ingest_key, "--url", t.baseUrl, "--rate", "5", "--waveform-every", "1"], {
    cwd: path.resolve(__dirname, "../.."),
    stdio: ["ignore", "pipe", "pipe"],
  });
  sim.stdout?.on("data", (c: Buffer) => (output += c.toString()));
  sim.stderr?.on("data", (c: Buffer) => (output += c.toString()));
  const listed = async () =>
    ((await t.http<Listed[]>("GET", `/_config/pipelines/_list?plant_id=${h.plant}`)).body.find((p) => p.pipeline_id === gw.id) ?? ({} as Listed));

  // The simulator sends its four components' heartbeats one after the other: wait for all four.
  const allBeating = (p: Listed) => !!p.heart_beats && Object.values(p.heart_beats).every((v) => typeof v === "number");
  const beating = await eventually(listed, allBeating, 150, 200);
  expect(Object.values(beating.heart_beats).every((v) => typeof v === "number")).toBe(true);
  expect(beating.total_events).toBe(0); // nothing is sent before a start

  await t.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: "start" } });
  const running = await eventually(listed, (p) => p.status === "running" && p.total_events > 20, 150, 200);
  expect(running.status).toBe("running");

  const tags = await eventually(
    async () => (await pg.query(`SELECT DISTINCT monitor_id, tag_id FROM pipelines.readings WHERE pipeline_id = $1`, [gw.id])).rows.length,
    (n) => n === 5,
    100,
    200,
  );
  expect(tags).toBe(5); // pressure, flow, vib, kwh, kw
  const kwh = await pg.query(`SELECT value FROM pipelines.readings WHERE pipeline_id = $1 AND tag_id = 'kwh' ORDER BY ts`, [gw.id]);
  const values = kwh.rows.map((r: { value: number }) => r.value);
  expect(values.length).toBeGreaterThan(2);
  expect(values.every((v: number, i: number) => i === 0 || v >= values[i - 1])).toBe(true);
  const axes = await eventually(
    async () => (await pg.query(`SELECT DISTINCT axis FROM pipelines.waveforms WHERE pipeline_id = $1 ORDER BY axis`, [gw.id])).rows.map((r: { axis: string }) => r.axis),
    (a) => a.length === 3,
    100,
    200,
  );
  expect(axes).toEqual(["x", "y", "z"]);
  // A triaxial capture is one moment: its three axes carry one timestamp, so a timestamp listed by
  // /_cm/fft/_timestamps has a spectrum on every axis.
  const captures = await pg.query(
    `SELECT ts, array_agg(axis ORDER BY axis) AS axes FROM pipelines.waveforms WHERE pipeline_id = $1 GROUP BY ts ORDER BY ts`,
    [gw.id],
  );
  expect(captures.rows.length).toBeGreaterThan(0);
  for (const row of captures.rows as { axes: string[] }[]) expect(row.axes).toEqual(["x", "y", "z"]);

  await t.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: "stop" } });
  await eventually(listed, (p) => p.status === "stopped", 150, 200);
  await new Promise((r) => setTimeout(r, 1000));
  const before = (await listed()).total_events;
  await new Promise((r) => setTimeout(r, 1500));
  expect((await listed()).total_events).toBe(before);
  expect(output).toContain("action start acknowledged");
});

it("--backfill 2h --step 60s sends every tag's two hours of history first, and _history reads it back", async () => {
  const b = await hierarchy(t, "Backfill");
  const gw = await createEdge(t, edgeBody(b, [b.pump.id, b.fan.id, b.meter.id], { function_enabled_in_registration: true }));
  let out = "";
  const before = Date.now();
  backfiller = spawn(
    process.execPath,
    ["--import", "tsx", "scripts/simulate.ts", "--pipeline", gw.id, "--key", gw.ingest_key, "--url", t.baseUrl, "--backfill", "2h", "--step", "60s"],
    { cwd: path.resolve(__dirname, "../.."), stdio: ["ignore", "pipe", "pipe"] },
  );
  backfiller.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  backfiller.stderr?.on("data", (c: Buffer) => (out += c.toString()));
  await eventually(async () => out, (o) => /backfill done/.test(o) || /error/i.test(o), 300, 100);
  // 2 h at 60 s: 121 instants of 5 tags; an hourly triaxial capture of the fan (at 0, 1 h, 2 h).
  expect(out).toMatch(/backfill: \S+ to \S+ every 60 s: 121 instants x 5 tags, an hourly capture of 1 condition monitor\(s\)/);
  expect(out).toMatch(/backfill done: 605 readings sent, 605 accepted, 0 rejected; 3 captures; [\d.]+ s/);

  const stored = await pg.query<{ n: string; first: string; last: string }>(
    `SELECT count(*) AS n, min(ts) AS first, max(ts) AS last FROM pipelines.readings WHERE pipeline_id = $1`,
    [gw.id],
  );
  const { n, first, last } = stored.rows[0]!;
  expect(Number(n)).toBe(605);
  expect(Number(last) - Number(first)).toBe(2 * 3600_000);
  expect(Number(last)).toBeGreaterThanOrEqual(before);
  // The kWh counter rises through the whole backfill.
  const kwh = (await pg.query<{ value: number }>(`SELECT value FROM pipelines.readings WHERE pipeline_id = $1 AND tag_id = 'kwh' ORDER BY ts`, [gw.id])).rows;
  expect(kwh).toHaveLength(121);
  expect(kwh.every((r, i) => i === 0 || r.value >= kwh[i - 1]!.value)).toBe(true);
  const captures = await pg.query(`SELECT ts FROM pipelines.waveforms WHERE pipeline_id = $1 GROUP BY ts HAVING count(*) = 3`, [gw.id]);
  expect(captures.rows).toHaveLength(3);

  // Raw readings when the range holds no more than points ...
  const range = `from=${new Date(Number(first)).toISOString()}&to=${new Date(Number(last)).toISOString()}`;
  type History = { tag: string; tag_unit: string; bucket_ms: number; points: { timestamp: number; value: number; min: number; max: number; count: number }[] };
  const raw = await t.http<History>("GET", `/_cm/monitors/${b.pump.id}/_history?tag=Pressure&${range}`);
  expect(raw.status).toBe(200);
  expect(raw.body).toMatchObject({ tag: "Pressure", tag_unit: "bar", bucket_ms: 0 });
  expect(raw.body.points).toHaveLength(121);
  expect(raw.body.points.every((p) => p.value > 3 && p.value < 6)).toBe(true); // a plant's discharge pressure, 4.5 ± 0.5 bar
  // ... and buckets from the rollups, once the stream has folded them in: every reading counted once.
  const zoomed = await eventually(
    async () => (await t.http<History>("GET", `/_cm/monitors/${b.pump.id}/_history?tag=Pressure&${range}&points=10`)).body,
    (h) => h.points.reduce((sum, p) => sum + p.count, 0) === 121,
    100,
    200,
  );
  expect(zoomed.bucket_ms).toBe(15 * 60_000);
  expect(zoomed.points.reduce((sum, p) => sum + p.count, 0)).toBe(121);
  for (const p of zoomed.points) expect(p.min <= p.value && p.value <= p.max).toBe(true);
  backfiller.kill("SIGTERM");
});

it("--backfill and --step refuse a time they cannot read", () => {
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", "scripts/simulate.ts", "--pipeline", "p", "--key", "k", ...args], { cwd: path.resolve(__dirname, "../.."), encoding: "utf8" });
  const bad = run("--backfill", "30 days");
  expect(bad.status).toBe(2);
  expect(bad.stderr).toContain("--backfill must be a time of at least --step, as 30d, 12h or 90m");
  expect(bad.stderr).not.toMatch(/\n\s+at /);
  const step = run("--backfill", "1d", "--step", "500ms");
  expect(step.status).toBe(2);
  expect(step.stderr).toContain("--step must be a time of 1s or more");
});

it("--help prints the usage and exits 0; an unknown option says so, without a stack trace", () => {
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", "scripts/simulate.ts", ...args], { cwd: path.resolve(__dirname, "../.."), encoding: "utf8" });
  const help = run("--help");
  expect(help.status).toBe(0);
  expect(help.stdout).toContain("usage: npm run simulate -- --pipeline <id> --key <ingest key>");
  expect(help.stdout).toContain("--waveform-every <s>");
  expect(help.stdout).toContain("--backfill <span>");
  const unknown = run("--pipelin", "x");
  expect(unknown.status).toBe(2);
  expect(unknown.stderr).toContain("Unknown option '--pipelin'");
  expect(unknown.stderr).toContain("usage: npm run simulate");
  expect(unknown.stderr).not.toMatch(/\n\s+at /);
});

it("--url: what is no HTTP URL, or where nothing answers, is said in one line, without a stack trace", () => {
  const run = (url: string) =>
    spawnSync(process.execPath, ["--import", "tsx", "scripts/simulate.ts", "--mqtt", "--pipeline", "p", "--key", "k", "--url", url], { cwd: path.resolve(__dirname, "../.."), encoding: "utf8" });
  for (const url of ["mqtt://127.0.0.1:1883", "127.0.0.1:3000", "not a url"]) {
    const bad = run(url);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split("\n")).toEqual([`--url must be the service's HTTP API, as http://127.0.0.1:3000 (the MQTT broker is --broker); got "${url}"`]);
  }
  // Port 1: fetch refuses it without sending anything, so the answer does not depend on the machine.
  const none = run("http://127.0.0.1:1");
  expect(none.status).toBe(1);
  expect(none.stderr.trim().split("\n")).toEqual(["--url http://127.0.0.1:1: no answer from the service's API there (bad port)"]);
});
