/**
 * SQL servers that users name (op 57's introspection, the SQL collector's reads): PostgreSQL
 * (pg), MySQL/MariaDB (mysql2) and Microsoft SQL Server (mssql), one session shape for the three.
 * A session is one connection to one database; it times out on connect and on each query.
 *
 * Times come back as the server writes them (text), never as a JavaScript Date: a value read is
 * given back as a parameter unchanged (a collector's position), and a time column without a zone
 * is read in the site's zone by the caller, not in this process's (docs/collectors.md).
 */
import { createRequire } from "node:module";
import mysql from "mysql2/promise";
import { Client, types as pgTypes } from "pg";

export type Dialect = "postgres" | "mysql" | "mssql";

export const CONNECT_TIMEOUT_MS = 5000;
export const QUERY_TIMEOUT_MS = 10000;

export interface SqlTarget {
  dialect: Dialect;
  /** The address the source guard answered (lib/source-guard.ts), not the name the user gave. */
  host: string;
  port: number;
  user: string;
  password: string;
}

/** The dialect a body names, else the port's usual one (5432, 3306, 1433). */
export function dialectOf(input: { dialect?: Dialect; port: number }): Dialect {
  if (input.dialect) return input.dialect;
  if (input.port === 3306) return "mysql";
  if (input.port === 1433) return "mssql";
  return "postgres";
}

/** `schema.table` names a table outside the default schema. */
export function splitTable(table: string, defaultSchema: string): [string, string] {
  const dot = table.indexOf(".");
  return dot > 0 ? [table.slice(0, dot), table.slice(dot + 1)] : [defaultSchema, table];
}

/** A result column: `utc` when its text is UTC without saying so (MySQL's TIMESTAMP, read in a +00:00 session). */
export interface SqlField {
  name: string;
  utc: boolean;
}

export interface SqlResult {
  rows: Record<string, unknown>[];
  fields: SqlField[];
}

/** One connection to one database of a user's server. Parameters are `$1` (postgres), `?` (mysql) or `@p1` (mssql). */
export interface SqlSession {
  query(sql: string, params?: unknown[]): Promise<SqlResult>;
  close(): Promise<void>;
}

export async function openSession(t: SqlTarget, database: string | undefined, application = "ims"): Promise<SqlSession> {
  switch (t.dialect) {
    case "mysql":
      return mysqlSession(t, database);
    case "mssql":
      return mssqlSession(t, database);
    default:
      return postgresSession(t, database ?? "postgres", application);
  }
}

/** Dates and times as the server's text: 1082 date, 1083 time, 1114 timestamp, 1184 timestamptz, 1266 timetz. */
const PG_TIME_OIDS = new Set([1082, 1083, 1114, 1184, 1266]);
const pgTypesAsText = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    PG_TIME_OIDS.has(oid) ? (v: string) => v : pgTypes.getTypeParser(oid, format ?? "text")) as typeof pgTypes.getTypeParser,
};

async function postgresSession(t: SqlTarget, database: string, application: string): Promise<SqlSession> {
  const client = new Client({
    host: t.host,
    port: t.port,
    user: t.user,
    password: t.password,
    database,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    application_name: application,
    types: pgTypesAsText,
  });
  // An error after connect (server gone) must not become an unhandled 'error' event.
  client.on("error", () => undefined);
  await client.connect();
  return {
    async query(sql, params = []) {
      const result = await client.query<Record<string, unknown>>(sql, params);
      return { rows: result.rows, fields: result.fields.map((f) => ({ name: f.name, utc: false })) };
    },
    close: () => client.end().catch(() => undefined),
  };
}

/** mysql2's type code of TIMESTAMP: stored in UTC, shown in the session's zone (+00:00 here). */
const MYSQL_TIMESTAMP = 7;

async function mysqlSession(t: SqlTarget, database: string | undefined): Promise<SqlSession> {
  const conn = await mysql.createConnection({
    host: t.host,
    port: t.port,
    user: t.user,
    password: t.password,
    database,
    connectTimeout: CONNECT_TIMEOUT_MS,
    dateStrings: true,
    timezone: "+00:00",
    supportBigNumbers: true,
  });
  // A connection error between queries (server gone) must not become an unhandled 'error' event.
  conn.on("error", () => undefined);
  await conn.query(`SET time_zone = '+00:00'`);
  return {
    async query(sql, params = []) {
      const [rows, fields] = await conn.query({ sql, values: params, timeout: QUERY_TIMEOUT_MS });
      const list = (fields ?? []) as { name: string; columnType?: number; type?: number }[];
      return {
        rows: rows as Record<string, unknown>[],
        fields: list.map((f) => ({ name: f.name, utc: (f.columnType ?? f.type) === MYSQL_TIMESTAMP })),
      };
    },
    close: () => conn.end().catch(() => undefined),
  };
}

/**
 * `mssql` is loaded on first use: it pulls in the Azure SDK, which costs start-up time and which
 * the test runner cannot load (ES modules), and most deployments never meet a SQL Server.
 */
const loadMssql = (): typeof import("mssql") => createRequire(__filename)("mssql") as typeof import("mssql");

/** Microsoft SQL Server through `mssql` (tedious); a datetime without a zone comes back as its wall time in UTC. Not exercised by the tests: no server on the machine. */
async function mssqlSession(t: SqlTarget, database: string | undefined): Promise<SqlSession> {
  const mssql = loadMssql();
  const pool = new mssql.ConnectionPool({
    server: t.host,
    port: t.port,
    user: t.user,
    password: t.password,
    database,
    connectionTimeout: CONNECT_TIMEOUT_MS,
    requestTimeout: QUERY_TIMEOUT_MS,
    options: { encrypt: true, trustServerCertificate: true, useUTC: true },
    pool: { max: 1, min: 0 },
  });
  await pool.connect();
  return {
    async query(sql, params = []) {
      const request = pool.request();
      params.forEach((v, i) => request.input(`p${i + 1}`, v));
      const rows = (await request.query(sql)).recordset.map((row) =>
        Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v instanceof Date ? v.toISOString().replace("T", " ").replace("Z", "") : v])),
      );
      return { rows, fields: Object.keys(rows[0] ?? {}).map((name) => ({ name, utc: false })) };
    },
    close: () => pool.close().catch(() => undefined),
  };
}
