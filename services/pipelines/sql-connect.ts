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
import { config } from "../../lib/config";
import { badRequest } from "../../lib/errors";
import { sourceGuardOf, type SourceGuard } from "../../lib/source-guard";
import { dialectOf, openSession, splitTable, type Dialect, type SqlTarget } from "../../lib/sql-source";
import { MSG } from "./messages";

export { CONNECT_TIMEOUT_MS, dialectOf, type Dialect } from "../../lib/sql-source";

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

/** One query in a session of its own: op 57's connections are short-lived. */
async function runIn<R>(t: SqlTarget, database: string | undefined, sql: string, params: unknown[] = []): Promise<R[]> {
  const session = await openSession(t, database, "ims-sql-connect");
  try {
    return (await session.query(sql, params)).rows as R[];
  } finally {
    await session.close();
  }
}

function postgresIntrospector(t: SqlTarget): Introspector {
  return {
    async databases() {
      const rows = await runIn<{ name: string }>(t, "postgres", `SELECT datname AS name FROM pg_database WHERE NOT datistemplate ORDER BY datname`);
      return rows.map((r) => r.name);
    },
    async tables(database) {
      const rows = await runIn<{ schema: string; name: string }>(
        t,
        database,
        `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
          WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type IN ('BASE TABLE', 'VIEW')
          ORDER BY table_schema <> 'public', table_schema, table_name`,
      );
      return rows.map((r) => (r.schema === "public" ? r.name : `${r.schema}.${r.name}`));
    },
    async columns(database, table) {
      const [schema, name] = splitTable(table, "public");
      return runIn<Column>(
        t,
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
  const run = <R>(sql: string, params: unknown[] = []): Promise<R[]> => runIn<R>(t, undefined, sql, params);
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

/** Microsoft SQL Server (lib/sql-source.ts). Not exercised by the tests: no server on the machine. */
function mssqlIntrospector(t: SqlTarget): Introspector {
  return {
    async databases() {
      const rows = await runIn<{ name: string }>(t, "master", `SELECT name FROM sys.databases WHERE database_id > 4 ORDER BY name`);
      return rows.map((r) => r.name);
    },
    async tables(database) {
      const rows = await runIn<{ schema: string; name: string }>(
        t,
        database,
        `SELECT TABLE_SCHEMA AS [schema], TABLE_NAME AS name FROM INFORMATION_SCHEMA.TABLES ORDER BY CASE WHEN TABLE_SCHEMA = 'dbo' THEN 0 ELSE 1 END, TABLE_SCHEMA, TABLE_NAME`,
      );
      return rows.map((r) => (r.schema === "dbo" ? r.name : `${r.schema}.${r.name}`));
    },
    async columns(database, table) {
      const [schema, name] = splitTable(table, "dbo");
      return runIn<Column>(
        t,
        database,
        `SELECT COLUMN_NAME AS name, DATA_TYPE AS type FROM INFORMATION_SCHEMA.COLUMNS
          WHERE TABLE_SCHEMA = @p1 AND TABLE_NAME = @p2 ORDER BY ORDINAL_POSITION`,
        [schema, name],
      );
    },
  };
}
