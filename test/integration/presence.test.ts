/**
 * Presence across replicas (lib/presence.ts) on the machine's PostgreSQL: a key present on any
 * number of holders, seen absent by another session only once none holds it, and held again
 * after its holder's connection was cut.
 */
import { Client } from "pg";
import { Presence } from "../../lib/presence";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { pollUntil } from "../helpers/cluster";

let db: TestDatabase;
let asker: Client;
const open: Presence[] = [];
const presence = () => {
  const p = new Presence({ databaseUrl: db.url, scope: "things" });
  open.push(p);
  return p;
};

/** What a stop asks (services/pipelines/sparkplug.repo.ts): can the key be taken exclusively, in a transaction of its own. */
async function absentEverywhere(key: string): Promise<boolean> {
  await asker.query("BEGIN");
  try {
    const { rows } = await asker.query<{ free: boolean }>(`SELECT pg_try_advisory_xact_lock(hashtext('things'), hashtext($1)) AS free`, [key]);
    return rows[0]!.free;
  } finally {
    await asker.query("COMMIT");
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  asker = new Client({ connectionString: db.url });
  await asker.connect();
});
afterAll(async () => {
  await Promise.all(open.map((p) => p.close()));
  await asker.end();
  await db.drop();
});

it("is present while any holder has entered more often than it left", async () => {
  const a = presence();
  const b = presence();
  expect(await absentEverywhere("k1")).toBe(true);
  await a.enter("k1");
  await a.enter("k1");
  await b.enter("k1");
  await a.leave("k1");
  expect(await absentEverywhere("k1")).toBe(false);
  await b.leave("k1");
  expect(await absentEverywhere("k1")).toBe(false);
  await a.leave("k1");
  expect(await absentEverywhere("k1")).toBe(true);
  // A leave too many changes nothing.
  await a.leave("k1");
  expect(await absentEverywhere("k1")).toBe(true);
});

it("takes its keys again on a new connection after its own was cut, and frees them when closed", async () => {
  const a = presence();
  await a.enter("k2");
  await asker.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, [`presence:things:${process.pid}`]);
  await pollUntil(async () => !(await absentEverywhere("k2")), 15_000, "the key held again");
  await a.close();
  expect(await absentEverywhere("k2")).toBe(true);
});
