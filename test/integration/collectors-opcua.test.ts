/**
 * The OPC-UA collector (docs/collectors.md#opc-ua) against a real OPC-UA server of the test's own
 * (test/helpers/opcua-server.ts: Double variables changing every 100 ms), a Cloud OPC-UA pipeline
 * made and started through the API as a user would: values stored as they change; the server
 * stopped (the pipeline in error, the cause said) and started again (running again, nothing
 * doubled); the collector process killed (kill -9) and started again (going on from where it
 * was, the changes meanwhile read from the server's history, nothing doubled); wrong credentials said in the server's words; a stop that stops it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { freePort, pollUntil, startCluster, type Cluster, type ServiceProcess } from "../helpers/cluster";
import { RAW_READINGS_ONLY } from "../helpers/node";
import { action, listed, stored } from "../helpers/collectors";
import type { TestNode } from "../helpers/node";
import { OpcuaTestServer } from "../helpers/opcua";
import { createEdge, hierarchy, monitor, nextMac, type Hierarchy } from "../e2e/pipelines-fixtures";

const pki = mkdtempSync(path.join(os.tmpdir(), "ims-opcua-collector-"));
let cluster: Cluster;
let db: Client;
let h: Hierarchy;
let collector: ServiceProcess;
let server: OpcuaTestServer;
let port: number;

beforeAll(async () => {
  port = await freePort();
  server = await OpcuaTestServer.start(port, path.join(pki, "server"));
  cluster = await startCluster({ processes: [["api", "auth", "config", "pipelines"]], env: { ...RAW_READINGS_ONLY, MQTT_PORT: "0" } });
  db = new Client({ connectionString: cluster.db!.url });
  await db.connect();
  collector = cluster.addProcess(["collectors"], { SOURCE_ALLOW: "127.0.0.0/8", OPCUA_PKI_DIR: path.join(pki, "client") });
  h = await hierarchy(cluster as unknown as TestNode, "Opc");
}, 180_000);

afterAll(async () => {
  await db?.end();
  await cluster?.stop();
  await server?.stop("SIGKILL");
  rmSync(pki, { recursive: true, force: true });
});

/** A started Cloud OPC-UA pipeline: Var0 is its monitor's Pressure, Var1 its Flow, sampled at 10 Hz; its id. */
async function startOpcuaPipeline(credentials: { user_name: string; user_password: string }, serverPort = port): Promise<string> {
  const t = cluster as unknown as TestNode;
  const pump = await monitor(t, h.fn, `Pump ${nextMac()}`, "process-monitor", [
    { tag_id: "pressure", tag_name: "Pressure", tag_unit: "bar" },
    { tag_id: "flow", tag_name: "Flow", tag_unit: "m3/h" },
  ]);
  const { id } = await createEdge(t, {
    pipeline_name: `OPC-UA ${nextMac()}`,
    function_id: h.fn,
    data_type: "Process",
    data_source: "Cloud",
    data_source_subtype: "OPC-UA",
    settings: { mac_address: nextMac(), server_url: `opc.tcp://127.0.0.1:${serverPort}`, ...credentials, sampling_rate: 10 },
    gateway_firmware: { current_version: "1.0.0" },
    tags: [
      { tag_name: "Pressure", tag_desc: "", tag_unit: "bar", monitor_id: pump.id, address: "ns=1;s=Var0", tag_id: "pressure" },
      { tag_name: "Flow", tag_desc: "", tag_unit: "m3/h", monitor_id: pump.id, address: "ns=1;s=Var1", tag_id: "flow" },
    ],
  });
  await action(cluster, id, "start");
  return id;
}

/** Each stored `ts:value` of a tag once: the test server's Var<i> is i * 1000 + its count of changes. */
function expectOnceEach(values: string[], offset: number): void {
  const ts = values.map((v) => Number(v.split(":")[0]));
  expect(new Set(ts).size).toBe(values.length);
  for (const v of values) expect(Number(v.split(":")[1]) - offset).toBeGreaterThanOrEqual(0);
}

describe("the OPC-UA collector", () => {
  it("stores each node's values as they change, goes on after the server and the collector come back, and never twice", async () => {
    const id = await startOpcuaPipeline({ user_name: "opc", user_password: "opc-secret" });
    await pollUntil(async () => (await stored(db, id, "pressure")).length >= 20, 60_000, "20 values of Var0", [collector]);
    const running = await listed(cluster, h, id);
    expect(running).toMatchObject({ status: "running" });
    expect(running.last_actions[0]).toMatchObject({ action: "start", status: "completed" });
    const pressure = await stored(db, id, "pressure");
    const flow = await stored(db, id, "flow");
    expectOnceEach(pressure, 0);
    expectOnceEach(flow, 1000);
    // At 10 Hz, changes every 100 ms: one value a change, in order of time.
    const counts = pressure.map((v) => Number(v.split(":")[1]));
    counts.forEach((n, k) => k > 0 && expect(n).toBeGreaterThan(counts[k - 1]!));

    // The server goes away: the pipeline is in error, the cause in its latest action.
    await server.stop("SIGKILL");
    await pollUntil(async () => (await listed(cluster, h, id)).status === "error", 60_000, "the error", [collector]);
    expect((await listed(cluster, h, id)).last_actions[0]!.error).toMatch(/127\.0\.0\.1/);
    const before = (await stored(db, id, "pressure")).length;
    server = await OpcuaTestServer.start(port, path.join(pki, "server"));
    await pollUntil(
      async () => (await listed(cluster, h, id)).status === "running" && (await stored(db, id, "pressure")).length >= before + 10,
      90_000,
      "running again with new values",
      [collector],
    );
    expect((await listed(cluster, h, id)).last_actions[0]!.error).toBeUndefined();

    // The collector killed, and started again 3 s later: it goes on from the position stored, the
    // values the server sends again not stored twice, and the changes meanwhile read from the
    // server's history: no gap.
    await collector.stop("SIGKILL");
    const tsOf = (v: string) => Number(v.split(":")[0]);
    const killedAfter = Math.max(...(await stored(db, id, "pressure")).map(tsOf));
    await new Promise((r) => setTimeout(r, 3000));
    collector.start();
    await pollUntil(
      async () => (await stored(db, id, "pressure")).filter((v) => tsOf(v) > killedAfter + 5000).length >= 10,
      90_000,
      "values after the collector's restart",
      [collector],
    );
    const across = (await stored(db, id, "pressure")).map(tsOf).filter((t) => t >= killedAfter && t <= killedAfter + 5000);
    const gaps = across.slice(1).map((t, k) => t - across[k]!);
    // Changes every 100 ms: without the history read, the 3 s and more the collector was away would be one gap.
    expect(Math.max(...gaps)).toBeLessThan(1000);
    expect(across.length).toBeGreaterThan(30);
    expectOnceEach(await stored(db, id, "pressure"), 0);
    expectOnceEach(await stored(db, id, "flow"), 1000);

    // Stopped: the stop completes and nothing more is stored.
    await action(cluster, id, "stop");
    await pollUntil(async () => (await listed(cluster, h, id)).status === "stopped", 30_000, "the stop", [collector]);
    const atStop = (await stored(db, id, "pressure")).length;
    await new Promise((r) => setTimeout(r, 2000));
    expect(await stored(db, id, "pressure")).toHaveLength(atStop);
  }, 360_000);

  it("says a server that never answers cannot be reached, and stops when told to while still trying", async () => {
    const nobody = await freePort();
    const id = await startOpcuaPipeline({ user_name: "opc", user_password: "opc-secret" }, nobody);
    await pollUntil(async () => (await listed(cluster, h, id)).status === "error", 60_000, "the error", [collector]);
    expect((await listed(cluster, h, id)).last_actions[0]).toMatchObject({ action: "start", error: `Failed to connect to opc.tcp://127.0.0.1:${nobody}` });
    await action(cluster, id, "stop");
    await pollUntil(async () => (await listed(cluster, h, id)).status === "stopped", 30_000, "the stop", [collector]);
  }, 120_000);

  it("says wrong credentials in the server's words, and stores nothing", async () => {
    const id = await startOpcuaPipeline({ user_name: "opc", user_password: "not-the-one" });
    await pollUntil(async () => (await listed(cluster, h, id)).status === "error", 60_000, "the error", [collector]);
    const p = await listed(cluster, h, id);
    expect(p.last_actions[0]).toMatchObject({ action: "start", error: "BadUserAccessDenied" });
    expect(await stored(db, id, "pressure")).toEqual([]);
  }, 120_000);
});
