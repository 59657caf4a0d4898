/** Leases across replicas (lib/lease.ts) on the machine's PostgreSQL: one holder at a time, handed over when it lets go or its connection dies. */
import { Client } from "pg";
import { Leases } from "../../lib/lease";
import { createTestDatabase, type TestDatabase } from "../helpers/db";

let db: TestDatabase;
const open: Leases[] = [];
const leases = (scope: string, onLost?: (keys: string[]) => void) => {
  const l = new Leases({ databaseUrl: db.url, scope, onLost });
  open.push(l);
  return l;
};

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(open.map((l) => l.close()));
  await db.drop();
});

it("gives a key to one holder at a time, and to another once released or closed", async () => {
  const a = leases("nodes");
  const b = leases("nodes");
  expect([...(await a.take(["n1", "n2"]))].sort()).toEqual(["n1", "n2"]);
  expect([...(await b.take(["n1", "n2", "n3"]))]).toEqual(["n3"]);
  await a.release("n1");
  expect([...(await b.take(["n1", "n2"]))]).toEqual(["n1"]);
  await a.close();
  expect([...(await b.take(["n2"]))]).toEqual(["n2"]);
  expect(b.keys.sort()).toEqual(["n1", "n2", "n3"]);
});

it("keeps the scopes apart", async () => {
  const a = leases("collector");
  const b = leases("other");
  expect([...(await a.take(["k"]))]).toEqual(["k"]);
  expect([...(await b.take(["k"]))]).toEqual(["k"]);
});

it("loses every lease with its connection, says so, and the others take them", async () => {
  const lost: string[][] = [];
  const a = leases("dying", (keys) => lost.push(keys));
  const b = leases("dying");
  await a.take(["x", "y"]);
  expect((await b.take(["x"])).size).toBe(0);
  const admin = new Client({ connectionString: db.url });
  await admin.connect();
  await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, [`leases:dying:${process.pid}`]);
  await admin.end();
  // The connections are named by process: both of this process's go, as a replica's do when it dies.
  for (let i = 0; i < 50 && lost.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
  expect(lost.map((k) => k.sort())).toEqual([["x", "y"]]);
  expect(a.keys).toEqual([]);
  const c = leases("dying");
  expect([...(await c.take(["x", "y"]))].sort()).toEqual(["x", "y"]);
});

it("counts the holders of a scope connected now, and no longer one that closed", async () => {
  const a = leases("counted");
  const b = leases("counted");
  leases("not-counted");
  expect(await a.holders()).toBe(1);
  expect(await b.holders()).toBe(2);
  await b.close();
  expect(await a.holders()).toBe(1);
});
