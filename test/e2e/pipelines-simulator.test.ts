/**
 * The gateway simulator (scripts/simulate.ts) against a node, as the README's walkthrough runs
 * it: heartbeats show in the list, a start action is acked and the pipeline becomes running,
 * readings of every registered monitor are stored (a rising kWh counter for the energy monitor),
 * waveforms of the condition monitor arrive, and a stop action stops the stream.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import path from "node:path";
import { Client } from "pg";
import { startTestNode, type TestNode } from "../helpers/node";
import { createEdge, edgeBody, eventually, hierarchy, type Hierarchy } from "./pipelines-fixtures";

let t: TestNode;
let h: Hierarchy;
let pg: Client;
let sim: ChildProcess | undefined;
let output = "";

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "pipelines"] });
  pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  h = await hierarchy(t, "Sim");
});
afterAll(async () => {
  sim?.kill("SIGKILL");
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

it("--help prints the usage and exits 0; an unknown option says so, without a stack trace", () => {
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", "scripts/simulate.ts", ...args], { cwd: path.resolve(__dirname, "../.."), encoding: "utf8" });
  const help = run("--help");
  expect(help.status).toBe(0);
  expect(help.stdout).toContain("usage: npm run simulate -- --pipeline <id> --key <ingest key>");
  expect(help.stdout).toContain("--waveform-every <s>");
  const unknown = run("--pipelin", "x");
  expect(unknown.status).toBe(2);
  expect(unknown.stderr).toContain("Unknown option '--pipelin'");
  expect(unknown.stderr).toContain("usage: npm run simulate");
  expect(unknown.stderr).not.toMatch(/\n\s+at /);
});
