/**
 * Op 57, SQL connect: introspects the SQL server a SQL gateway will read, so a user can pick its
 * database, table and columns. PostgreSQL (pg), MySQL/MariaDB (mysql2) and Microsoft SQL Server
 * (mssql); the dialect is the body's `dialect`, else the port's usual one.
 *
 * Connections are short-lived and time out after a few seconds. Credentials never reach a log:
 * a failure is logged by dialect, host and the driver's error code only.
 *
 * The server's address passes the source guard first (lib/source-guard.ts, docs/security.md): never
 * the service's own database, cache or bus, and loopback, link-local or unspecified addresses only
 * where SOURCE_ALLOW names them. A refusal answers `Failed to connect to DB` at once, without a
 * connection attempt, and the connection goes to the address the guard checked, not to the name.
 */
import { createRequire } from "node:module";
import mysql from "mysql2/promise";
import { Client } from "pg";
import { config } from "../../lib/config";
import { badRequest } from "../../lib/errors";
import { sourceGuardOf, type SourceGuard } from "../../lib/source-guard";
import { MSG } from "./messages";

export type Dialect = "postgres" | "mysql" | "mssql";

export const CONNECT_TIMEOUT_MS = 5000;
const QUERY_TIMEOUT_MS = 10000;

export interface SqlTarget {
  dialect: Dialect;
  host: string;
  port: number;
  user: string;
  password: string;
}

export interface Column {
  name: string;
  type: string;
}

/** What one server answers: its databases, a database's tables, a table's columns. */
interface Introspector {
  databases(): Promise<string[]>;
  tables(database: string): Promise<string[]>;
  columns(database: string, table: string): Promise<Column[]>;
}

export interface SqlConnectInput {
  server_address?: string;
  port?: number;
  username?: string;
  password?: string | number;
  dialect?: Dialect;
  database?: string;
  table?: string;
  time_field?: string;
  return_data_types?: string | boolean;
  ignore_type?: unknown;
}

const REQUIRED = ["server_address", "port", "username", "password"] as const;

export function dialectOf(input: { dialect?: Dialect; port: number }): Dialect {
  if (input.dialect) return input.dialect;
  if (input.port === 3306) return "mysql";
  if (input.port === 1433) return "mssql";
  return "postgres";
}

/** `ignore_type` as a list: repeated query keys, or one value holding a JSON array. */
export function ignoreTypesOf(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  let list: unknown = value;
  if (typeof value === "string") {
    try {
      list = JSON.parse(value);
    } catch {
      throw badRequest(MSG.ignoreTypeNotList);
    }
  }
  if (!Array.isArray(list) || !list.every((t) => typeof t === "string")) throw badRequest(MSG.ignoreTypeNotList);
  return list.map((t) => t.toLowerCase());
}

const truthy = (v: string | boolean | undefined): boolean => v === true || (typeof v === "string" && v.toLowerCase() === "true");

/**
 * The answer the query asks for (spec op 57): databases; a database's tables; a table's columns,
 * without the time field when one is named, without the ignored types' columns, or their types.
 */
export function selectColumns(columns: Column[], q: { time_field?: string; ignore?: string[]; types: boolean }): string[] {
  let kept = columns;
  if (q.time_field) kept = kept.filter((c) => c.name !== q.time_field);
  if (q.ignore) {
    const ignored = new Set(q.ignore);
    kept = kept.filter((c) => !ignored.has(c.type.toLowerCase()));
  }
  return q.types ? kept.map((c) => c.type) : kept.map((c) => c.name);
}

export async function sqlConnect(input: SqlConnectInput, log: (msg: string) => void, guard: SourceGuard = sourceGuardOf(config())): Promise<string[]> {
  // An empty password is a given one: a server account may have none (MariaDB's root often does).
  const missing = REQUIRED.filter((k) => input[k] === undefined || input[k] === null || (input[k] === "" && k !== "password"));
  if (missing.length) throw badRequest(MSG.missingParameters([...missing]));
  const ignore = ignoreTypesOf(input.ignore_type);
  const target: SqlTarget = {
    dialect: dialectOf({ dialect: input.dialect, port: Number(input.port) }),
    host: String(input.server_address),
    port: Number(input.port),
    user: String(input.username),
    password: String(input.password),
  };
  const verdict = await guard.check(target.host, target.port);
  if (!verdict.allowed) {
    log(`SQL connect to ${target.dialect} ${target.host}:${target.port} refused: ${verdict.reason}`);
    throw badRequest(MSG.failedToConnect);
  }
  const server = introspector({ ...target, host: verdict.address });
  try {
    if (!input.database) return await server.databases();
    if (!input.table) return await server.tables(input.database);
    const columns = await server.columns(input.database, input.table);
    return selectColumns(columns, { time_field: input.time_field, ignore, types: truthy(input.return_data_types) });
  } catch (err) {
    const code = (err as { code?: string | number }).code ?? (err as Error).name;
    log(`SQL connect to ${target.dialect} ${target.host}:${target.port} failed (${String(code)})`);
    throw badRequest(MSG.failedToConnect);
  }
}

function introspector(t: SqlTarget): Introspector {
  switch (t.dialect) {
    case "mysql":
      return mysqlIntrospector(t);
    case "mssql":
      return mssqlIntrospector(t);
    default:
      return postgresIntrospector(t);
  }
}

/** `schema.table` names a table outside the default schema. */
function splitTable(table: string, defaultSchema: string): [string, string] {
  const dot = table.indexOf(".");
  return dot > 0 ? [table.slice(0, dot), table.slice(dot + 1)] : [defaultSchema, table];
}

function postgresIntrospector(t: SqlTarget): Introspector {
  const run = async <R>(database: string, sql: string, params: unknown[] = []): Promise<R[]> => {
    const client = new Client({
      host: t.host,
      port: t.port,
      user: t.user,
      password: t.password,
      database,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      application_name: "ims-sql-connect",
    });
    // An error after connect (server gone) must not become an unhandled 'error' event.
    client.on("error", () => undefined);
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as R[];
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  return {
    async databases() {
      const rows = await run<{ name: string }>("postgres", `SELECT datname AS name FROM pg_database WHERE NOT datistemplate ORDER BY datname`);
      return rows.map((r) => r.name);
    },
    async tables(database) {
      const rows = await run<{ schema: string; name: string }>(
        database,
        `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
          WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type IN ('BASE TABLE', 'VIEW')
          ORDER BY table_schema <> 'public', table_schema, table_name`,
      );
      return rows.map((r) => (r.schema === "public" ? r.name : `${r.schema}.${r.name}`));
    },
    async columns(database, table) {
      const [schema, name] = splitTable(table, "public");
      return run<Column>(
        database,
        `SELECT column_name AS name, data_type AS type FROM information_schema.columns
          WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
        [schema, name],
      );
    },
  };
}

const MYSQL_SYSTEM = new Set(["information_schema", "mysql", "performance_schema", "sys"]);

function mysqlIntrospector(t: SqlTarget): Introspector {
  const run = async <R>(sql: string, params: unknown[] = []): Promise<R[]> => {
    const conn = await mysql.createConnection({
      host: t.host,
      port: t.port,
      user: t.user,
      password: t.password,
      connectTimeout: CONNECT_TIMEOUT_MS,
    });
    try {
      const [rows] = await conn.query({ sql, values: params, timeout: QUERY_TIMEOUT_MS });
      return rows as R[];
    } finally {
      await conn.end().catch(() => undefined);
    }
  };
  return {
    async databases() {
      const rows = await run<{ name: string }>(`SELECT schema_name AS name FROM information_schema.schemata ORDER BY schema_name`);
      return rows.map((r) => r.name).filter((n) => !MYSQL_SYSTEM.has(n.toLowerCase()));
    },
    async tables(database) {
      await assertMysqlDatabase(run, database);
      const rows = await run<{ name: string }>(
        `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name`,
        [database],
      );
      return rows.map((r) => r.name);
    },
    async columns(database, table) {
      await assertMysqlDatabase(run, database);
      return run<Column>(
        `SELECT column_name AS name, data_type AS type FROM information_schema.columns
          WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position`,
        [database, table],
      );
    },
  };
}

/** A database that does not exist fails as PostgreSQL's would (connecting to it fails), not as an empty list. */
async function assertMysqlDatabase(run: <R>(sql: string, params?: unknown[]) => Promise<R[]>, database: string): Promise<void> {
  const rows = await run<{ n: number }>(`SELECT count(*) AS n FROM information_schema.schemata WHERE schema_name = ?`, [database]);
  if (!rows[0] || Number(rows[0].n) === 0) throw Object.assign(new Error("unknown database"), { code: "ER_BAD_DB_ERROR" });
}

/**
 * `mssql` is loaded on first use: it pulls in the Azure SDK, which costs start-up time and which
 * the test runner cannot load (ES modules), and most deployments never meet a SQL Server.
 */
const loadMssql = (): typeof import("mssql") => createRequire(__filename)("mssql") as typeof import("mssql");

/** Microsoft SQL Server through `mssql` (tedious). Not exercised by the tests: no server on the machine. */
function mssqlIntrospector(t: SqlTarget): Introspector {
  const run = async <R>(database: string, sql: string, params: Record<string, string> = {}): Promise<R[]> => {
    const mssql = loadMssql();
    const pool = new mssql.ConnectionPool({
      server: t.host,
      port: t.port,
      user: t.user,
      password: t.password,
      database,
      connectionTimeout: CONNECT_TIMEOUT_MS,
      requestTimeout: QUERY_TIMEOUT_MS,
      options: { encrypt: true, trustServerCertificate: true },
      pool: { max: 1, min: 0 },
    });
    await pool.connect();
    try {
      const request = pool.request();
      for (const [k, v] of Object.entries(params)) request.input(k, mssql.NVarChar, v);
      return (await request.query(sql)).recordset as R[];
    } finally {
      await pool.close().catch(() => undefined);
    }
  };
  return {
    async databases() {
      const rows = await run<{ name: string }>("master", `SELECT name FROM sys.databases WHERE database_id > 4 ORDER BY name`);
      return rows.map((r) => r.name);
    },
    async tables(database) {
      const rows = await run<{ schema: string; name: string }>(
        database,
        `SELECT TABLE_SCHEMA AS [schema], TABLE_NAME AS name FROM INFORMATION_SCHEMA.TABLES ORDER BY CASE WHEN TABLE_SCHEMA = 'dbo' THEN 0 ELSE 1 END, TABLE_SCHEMA, TABLE_NAME`,
      );
      return rows.map((r) => (r.schema === "dbo" ? r.name : `${r.schema}.${r.name}`));
    },
    async columns(database, table) {
      const [schema, name] = splitTable(table, "dbo");
      return run<Column>(
        database,
        `SELECT COLUMN_NAME AS name, DATA_TYPE AS type FROM INFORMATION_SCHEMA.COLUMNS
          WHERE TABLE_SCHEMA = @schema AND TABLE_NAME = @name ORDER BY ORDINAL_POSITION`,
        { schema, name },
      );
    },
  };
}
