/**
 * The tests' OPC-UA server (opcua-server.ts) as a child process: `node --import tsx` rather than
 * the tsx binary, whose child would outlive a SIGKILL of it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { pollUntil, REPO_ROOT } from "./cluster";

export const tsxArgs = (script: string, ...args: string[]): [string, string[]] => [process.execPath, ["--import", "tsx", path.join(REPO_ROOT, script), ...args]];

export class OpcuaTestServer {
  private constructor(readonly child: ChildProcess) {}

  /** Starts it on `port` with its certificates under `pkiDir`; resolves once it listens. */
  static async start(port: number, pkiDir: string, env: Record<string, string> = {}): Promise<OpcuaTestServer> {
    const child = spawn(...tsxArgs("test/helpers/opcua-server.ts", String(port), pkiDir), { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    const server = new OpcuaTestServer(child);
    try {
      await pollUntil(async () => out.includes(`ready ${port}`), 60_000, `the OPC-UA test server on ${port}: ${out}`);
    } catch (err) {
      await server.stop("SIGKILL");
      throw err;
    }
    return server;
  }

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const child = this.child;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill(signal);
    await exited;
  }
}
