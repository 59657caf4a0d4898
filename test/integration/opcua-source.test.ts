/**
 * lib/opcua-source.ts against a real OPC-UA server (test/helpers/opcua-server.ts, node-opcua-server
 * in a child process, variables changing every 100 ms), the source opened in a child process of
 * its own (test/helpers/opcua-probe.ts): values as they change, causes in the server's words,
 * the address guard, and a server stopped and started again.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, pollUntil } from "../helpers/cluster";
import { OpcuaTestServer, tsxArgs } from "../helpers/opcua";
import type { OpcuaChange, OpcuaState } from "../../lib/opcua-source";

const pki = mkdtempSync(path.join(os.tmpdir(), "ims-opcua-"));
const running: ChildProcess[] = [];

interface Said {
  state?: OpcuaState;
  changes?: OpcuaChange[];
  opened?: true;
  failed?: string;
  detail?: string | null;
  closed?: true;
}

/** A child's stdout as the JSON lines it has written so far (node-opcua's own log lines are skipped). */
function lines(child: ChildProcess): Said[] {
  const out: Said[] = [];
  let buffered = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    for (const part of parts) if (part.startsWith("{")) out.push(JSON.parse(part) as Said);
  });
  return out;
}

async function stop(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill(signal);
  await exited;
}

function probe(input: { settings: object; addresses: string[]; allow?: string }): { child: ChildProcess; said: Said[] } {
  const child = spawn(...tsxArgs("test/helpers/opcua-probe.ts", JSON.stringify({ allow: "127.0.0.0/8", pkiDir: path.join(pki, "client"), ...input })), {
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(child);
  return { child, said: lines(child) };
}

const changesOf = (said: Said[]) => said.flatMap((s) => s.changes ?? []);
const statesOf = (said: Said[]) => said.flatMap((s) => (s.state ? [s.state] : []));

let port: number;
let server: OpcuaTestServer;

beforeAll(async () => {
  port = await freePort();
  server = await OpcuaTestServer.start(port, path.join(pki, "server"));
}, 90_000);

afterAll(async () => {
  await Promise.all(running.map((c) => stop(c, "SIGKILL")));
  await server?.stop("SIGKILL");
  rmSync(pki, { recursive: true, force: true });
});

const userSettings = () => ({ server_url: `opc.tcp://127.0.0.1:${port}`, user_name: "opc", user_password: "opc-secret", interval_ms: 100 });

describe("an OPC-UA source", () => {
  it("hands over each variable's values as they change, with the server's timestamps, and says which address the server does not know", async () => {
    const { child, said } = probe({ settings: userSettings(), addresses: ["ns=1;s=Var0", "ns=1;s=Nope", "ns=1;s=Var2"] });
    await pollUntil(async () => changesOf(said).filter((c) => c.index === 2).length >= 15, 60_000, "15 changes of Var2");
    await stop(child);
    expect(said.at(-1)).toEqual({ closed: true });
    expect(statesOf(said)).toEqual([{ ok: false, cause: "unknown addresses: ns=1;s=Nope: BadNodeIdUnknown" }]);
    const changes = changesOf(said);
    expect(changes.filter((c) => c.index === 1)).toEqual([]);
    for (const index of [0, 2]) {
      const values = changes.filter((c) => c.index === index);
      // Var<i> = i * 1000 + n: each change once, in order, none lost at a 100 ms sampling of a 100 ms change.
      const counts = values.map((c) => c.value - index * 1000);
      expect(counts.length).toBeGreaterThanOrEqual(15);
      counts.forEach((n, k) => k > 0 && expect(n).toBeGreaterThan(counts[k - 1]!));
      expect(new Set(values.map((c) => c.ts)).size).toBe(values.length);
      expect(values.every((c) => Math.abs(c.ts - Date.now()) < 120_000 && Number.isInteger(c.ts))).toBe(true);
    }
  }, 90_000);

  it("fails with the server's cause for a wrong password, and opens no session", async () => {
    const { child, said } = probe({ settings: { ...userSettings(), user_password: "wrong" }, addresses: ["ns=1;s=Var0"] });
    await pollUntil(async () => said.some((s) => s.failed !== undefined), 60_000, "the failure");
    expect(said.filter((s) => s.failed !== undefined || s.opened)).toEqual([{ failed: "BadUserAccessDenied", detail: expect.stringContaining("BadUserAccessDenied") }]);
    await stop(child);
  }, 90_000);

  it("is refused by the address guard where SOURCE_ALLOW does not name the address, the reason kept for the log", async () => {
    const { said } = probe({ settings: userSettings(), addresses: ["ns=1;s=Var0"], allow: "" });
    await pollUntil(async () => said.length > 0, 60_000, "an answer");
    expect(said).toEqual([{ failed: `Failed to connect to opc.tcp://127.0.0.1:${port}`, detail: "not allowed: 127.0.0.1 is loopback and SOURCE_ALLOW does not name it" }]);
  }, 90_000);

  it("says once that a server which does not answer cannot be reached, and stops trying when asked", async () => {
    const nobody = await freePort();
    const { child, said } = probe({ settings: { ...userSettings(), server_url: `opc.tcp://127.0.0.1:${nobody}` }, addresses: ["ns=1;s=Var0"] });
    // The client goes on trying (1 s, 2 s, 4 s, ...): the cause is said once, however many attempts.
    await pollUntil(async () => statesOf(said).length > 0, 60_000, "the cause");
    await new Promise((r) => setTimeout(r, 4000));
    expect(statesOf(said)).toEqual([{ ok: false, cause: `Failed to connect to opc.tcp://127.0.0.1:${nobody}` }]);
    // Asked to stop while still opening: the opening ends, it does not wait for a server that never comes.
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
    expect(said.at(-1)).toMatchObject({ failed: `Failed to connect to opc.tcp://127.0.0.1:${nobody}` });
  }, 90_000);

  it("says the server is gone while it is, and goes on with the restarted server's values", async () => {
    const { child, said } = probe({ settings: userSettings(), addresses: ["ns=1;s=Var1"] });
    await pollUntil(async () => changesOf(said).length >= 5, 60_000, "5 changes");
    await server.stop("SIGKILL");
    await pollUntil(async () => statesOf(said).some((s) => !s.ok), 60_000, "the lost connection said");
    const before = changesOf(said).length;
    server = await OpcuaTestServer.start(port, path.join(pki, "server"));
    // The restarted server counts from 0 again: values below the last one before are the new server's.
    await pollUntil(async () => statesOf(said).at(-1)?.ok === true && changesOf(said).length >= before + 5, 90_000, "values again");
    await stop(child);
    const states = statesOf(said);
    expect(states[0]).toEqual({ ok: true });
    expect(states.some((s) => !s.ok && /127\.0\.0\.1/.test(s.cause))).toBe(true);
    expect(states.at(-1)).toEqual({ ok: true });
    const changes = changesOf(said);
    expect(new Set(changes.map((c) => c.ts)).size).toBe(changes.length);
  }, 180_000);
});
