/** MIGRATE_ONLY=1 (the Kubernetes migration Job): bin/start.ts migrates the named services' schemas and exits. */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { Client } from "pg";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, "../..");

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function query<T>(sql: string): Promise<T[]> {
  const c = new Client({ connectionString: db.url });
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

function start(env: Record<string, string>) {
  return run(process.execPath, ["--import", "tsx", "bin/start.ts"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "warn", ...env },
    timeout: 60000,
  });
}

describe("MIGRATE_ONLY=1", () => {
  it("runs each named service's migrations, twice without harm, and exits 0 without serving", async () => {
    const env = { MIGRATE_ONLY: "1", SERVICES: "api,auth,config", DATABASE_URL: db.url, PORT: "0" };
    const first = await start(env);
    expect(first.stdout).toContain('migrated auth (schema "auth")');
    expect(first.stdout).toContain('migrated config (schema "config")');
    const schemas = await query<{ nspname: string }>(`SELECT nspname FROM pg_namespace WHERE nspname IN ('auth','config') ORDER BY 1`);
    expect(schemas.map((s) => s.nspname)).toEqual(["auth", "config"]);
    const applied = await query<{ n: number }>(`SELECT count(*)::int AS n FROM auth.migrations`);
    expect(applied[0]!.n).toBeGreaterThan(0);
    // No broker ran: the bootstrap admin is made by the auth service when it starts, not by migrations.
    const users = await query<{ n: number }>(`SELECT count(*)::int AS n FROM auth.users`);
    expect(users[0]!.n).toBe(0);

    const second = await start(env);
    expect(second.stdout).toContain("migrated auth");
    const again = await query<{ n: number }>(`SELECT count(*)::int AS n FROM auth.migrations`);
    expect(again[0]!.n).toBe(applied[0]!.n);
  });

  it("refuses to run without DATABASE_URL", async () => {
    await expect(start({ MIGRATE_ONLY: "1", SERVICES: "auth" })).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining("MIGRATE_ONLY=1 needs DATABASE_URL") });
  });
});
