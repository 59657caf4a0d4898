/**
 * SQL connect (op 57) against the machine's PostgreSQL and MariaDB: a scratch database with a
 * table holding a timestamp column and columns of several types, every documented query form,
 * the messages, the connect timeout, and no credentials in the logs (even at debug level).
 * Microsoft SQL Server goes through the same code with the `mssql` driver; there is no server
 * on this machine to test it against.
 *
 * Operation 57 refuses the service's own PostgreSQL (the machine's, on 5432, where the test
 * node keeps its database) and loopback addresses SOURCE_ALLOW does not name: the PostgreSQL
 * introspected here is a server of the test's own (test/helpers/pg-server.ts), the node allows
 * 127.0.0.0/8, and each call comes from a client address of its own (X-Forwarded-For from a
 * TRUST_PROXY peer), as op 57 takes at most 10 calls a minute from one address.
 */
import { randomBytes } from "node:crypto";
import { createServer, type AddressInfo, type Socket } from "node:net";
import mysql from "mysql2/promise";
import { Client } from "pg";
import { startTestNode, type TestNode } from "../helpers/node";
import { PgServer } from "../helpers/pg-server";
import { err } from "./pipelines-fixtures";

const SECRET = `S3cr3t-${randomBytes(4).toString("hex")}`;
const scratch = `ims_sqlc_${randomBytes(4).toString("hex")}`;
const logged: string[] = [];
let t: TestNode;
let customer: PgServer;
const spies: jest.SpyInstance[] = [];

beforeAll(async () => {
  for (const m of ["log", "info", "warn", "error", "debug"] as const) {
    spies.push(jest.spyOn(console, m).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" "))));
  }
  customer = await PgServer.create(scratch);
  servers.PostgreSQL.body.port = customer.port;
  t = await startTestNode({ services: ["api", "auth", "pipelines"], env: { LOG_LEVEL: "debug", SOURCE_ALLOW: "127.0.0.0/8", TRUST_PROXY: "127.0.0.1,::1" } });

  const db = new Client({ connectionString: customer.url });
  await db.connect();
  await db.query(`CREATE TABLE measurements (ts timestamptz, line integer, label text, temp double precision, ok boolean, note varchar(20))`);
  await db.query(`CREATE TABLE shifts (id serial, name text)`);
  await db.end();

  const my = await mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root" });
  await my.query(`CREATE DATABASE ${scratch}`);
  await my.query(`CREATE TABLE ${scratch}.measurements (ts datetime, line int, label text, temp double, ok tinyint(1), note varchar(20))`);
  await my.query(`CREATE TABLE ${scratch}.shifts (id int, name text)`);
  await my.end();
});

afterAll(async () => {
  await t?.stop();
  await customer?.destroy();
  const my = await mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root" });
  await my.query(`DROP DATABASE IF EXISTS ${scratch}`);
  await my.end();
  for (const s of spies) s.mockRestore();
});

const PATH = "/_config/pipelines/sql/connect";
let client = 0;
function connect(body: Record<string, unknown>, query = "") {
  const from = `10.57.${Math.floor(++client / 250)}.${client % 250}`;
  return t.http(`POST`, `${PATH}${query}`, { body, auth: null, headers: { "x-forwarded-for": from } });
}

const servers = {
  PostgreSQL: {
    // trust authentication: any password is accepted, which lets the log test use a secret one.
    body: { server_address: "127.0.0.1", port: 0, username: "postgres", password: SECRET },
    types: ["timestamp with time zone", "integer", "text", "double precision", "boolean", "character varying"],
  },
  MariaDB: {
    // A user with a password made for the test, so that a wrong password fails (root has none).
    body: { server_address: "127.0.0.1", port: 3306, username: "ims_sqlc", password: SECRET },
    types: ["datetime", "int", "text", "double", "tinyint", "varchar"],
  },
};

describe("SQL connect", () => {
  const my = servers.MariaDB.body;

  beforeAll(async () => {
    const c = await mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root" });
    await c.query(`CREATE USER IF NOT EXISTS 'ims_sqlc'@'%' IDENTIFIED BY '${SECRET}'`);
    await c.query(`CREATE USER IF NOT EXISTS 'ims_sqlc'@'localhost' IDENTIFIED BY '${SECRET}'`);
    await c.query(`GRANT SELECT ON ${scratch}.* TO 'ims_sqlc'@'%'`);
    await c.query(`GRANT SELECT ON ${scratch}.* TO 'ims_sqlc'@'localhost'`);
    await c.end();
  });
  afterAll(async () => {
    const c = await mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root" });
    await c.query(`DROP USER IF EXISTS 'ims_sqlc'@'%'`);
    await c.query(`DROP USER IF EXISTS 'ims_sqlc'@'localhost'`);
    await c.end();
  });

  it.each([
    ["PostgreSQL", servers.PostgreSQL.body, servers.PostgreSQL.types],
    ["MariaDB", my, servers.MariaDB.types],
  ])("%s: every query form", async (_name, body, types) => {
    const dbs = await connect(body);
    expect(dbs.status).toBe(200);
    expect(dbs.body).toEqual(expect.arrayContaining([scratch]));
    expect(await connect(body, `?database=${scratch}`)).toMatchObject({ body: ["measurements", "shifts"] });
    const q = `?database=${scratch}&table=measurements`;
    expect((await connect(body, q)).body).toEqual(["ts", "line", "label", "temp", "ok", "note"]);
    expect((await connect(body, `${q}&time_field=ts`)).body).toEqual(["line", "label", "temp", "ok", "note"]);
    expect((await connect(body, `${q}&return_data_types=true`)).body).toEqual(types);
    expect((await connect(body, `${q}&time_field=ts&return_data_types=true`)).body).toEqual(types.slice(1));
    expect((await connect(body, `${q}&return_data_types=false`)).body).toEqual(["ts", "line", "label", "temp", "ok", "note"]);
    const ignore = encodeURIComponent(JSON.stringify([types[2], types[4]]));
    expect((await connect(body, `${q}&time_field=ts&ignore_type=${ignore}`)).body).toEqual(["line", "temp", "note"]);
    // A list in repeated query keys is a list too.
    expect((await connect(body, `${q}&time_field=ts&ignore_type=${encodeURIComponent(types[2])}&ignore_type=${encodeURIComponent(types[4])}`)).body).toEqual([
      "line",
      "temp",
      "note",
    ]);
    expect((await connect(body, `${q}&ignore_type=text`)).body).toEqual(err(400, "ignore_type must be a list"));
    expect((await connect(body, `?database=ims_no_such_db_${randomBytes(3).toString("hex")}`)).body).toEqual(err(400, "Failed to connect to DB"));
  });

  it("names the missing parameters", async () => {
    expect((await connect({ server_address: "127.0.0.1", username: "x" })).body).toEqual(err(400, "Missing parameters: port, password"));
    expect((await connect({})).body).toEqual(err(400, "Missing parameters: server_address, port, username, password"));
    expect((await connect({ ...my, password: null })).body).toEqual(err(400, "Missing parameters: password"));
    expect((await connect({ ...my, server_address: "" })).body).toEqual(err(400, "Missing parameters: server_address"));
  });

  it("takes an empty password as given: MariaDB's root has none", async () => {
    const root = { server_address: "127.0.0.1", port: 3306, username: "root", password: "" };
    expect((await connect(root)).body).toEqual(expect.arrayContaining([scratch]));
    expect((await connect(root, `?database=${scratch}&table=shifts`)).body).toEqual(["id", "name"]);
  });

  it("answers Failed to connect to DB for a wrong password, a closed port, and a server that never answers within a few seconds", async () => {
    expect((await connect({ ...my, password: "wrong" })).body).toEqual(err(400, "Failed to connect to DB"));
    expect((await connect({ ...servers.PostgreSQL.body, port: 1, dialect: "postgres" })).body).toEqual(err(400, "Failed to connect to DB"));
    // A loopback server that takes the connection and never answers: only the connect timeout ends the wait.
    const held: Socket[] = [];
    const silent = createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const started = Date.now();
      const port = (silent.address() as AddressInfo).port;
      expect((await connect({ ...servers.PostgreSQL.body, port, dialect: "postgres" })).body).toEqual(err(400, "Failed to connect to DB"));
      expect(Date.now() - started).toBeLessThan(9000);
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
    }
  });

  it("never writes a password to the log", async () => {
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.some((l) => l.includes("SQL connect to"))).toBe(true);
    expect(logged.filter((l) => l.includes(SECRET))).toEqual([]);
  });
});
