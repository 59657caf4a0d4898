/**
 * A SQL pipeline's source as its settings say (op 50's `SQL` settings, docs/collectors.md), and
 * the page query that reads it. Pure: the table, columns and conditions come from users, so every
 * name is quoted as an identifier of the dialect and every value is a parameter.
 */
import { dialectOf, splitTable, type Dialect, type SqlTarget } from "../../lib/sql-source";
import type { CollectedTag, CollectionPosition } from "../pipelines/contract";
import { isTimeFormat } from "./time-value";

export class SettingsError extends Error {}

const COMPARISONS: Record<string, string> = {
  "=": "=",
  "==": "=",
  "!=": "<>",
  "<>": "<>",
  ">": ">",
  ">=": ">=",
  "<": "<",
  "<=": "<=",
};

export interface Condition {
  column: string;
  /** One of `=`, `<>`, `>`, `>=`, `<`, `<=`. */
  comparison: string;
  threshold: string | number | boolean;
}

export interface SqlSource {
  /** Where to connect, as the user gave it (the source guard answers the address). */
  target: SqlTarget;
  database: string | undefined;
  table: string;
  timeField: string;
  timeFormat: string | undefined;
  conditions: Condition[];
  operator: "AND" | "OR";
  /** Columns never read, even when a tag names one. */
  ignored: Set<string>;
  /** How often the source is read. */
  everyMs: number;
}

const UNIT_MS: Record<string, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };

function unitMs(unit: unknown): number | undefined {
  if (unit === undefined || unit === null || unit === "") return UNIT_MS.minute;
  const u = String(unit).toLowerCase().replace(/s$/, "");
  return UNIT_MS[u] ?? { sec: 1000, s: 1000, min: 60_000, m: 60_000, h: 3_600_000, hr: 3_600_000, d: 86_400_000 }[u];
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v.trim() : undefined);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The settings as a source; `SettingsError` names the first setting that is missing or wrong. */
export function sqlSourceOf(settings: Record<string, unknown>): SqlSource {
  const config = (typeof settings.config === "object" && settings.config !== null ? settings.config : {}) as Record<string, unknown>;
  const need = (value: string | undefined, name: string): string => {
    if (value === undefined) throw new SettingsError(name);
    return value;
  };
  const host = need(str(settings.server_address), "server_address");
  const port = Number(settings.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new SettingsError("port");
  const dialect = str(settings.dialect);
  if (dialect !== undefined && !["postgres", "mysql", "mssql"].includes(dialect)) throw new SettingsError("dialect");
  const timeFormat = str(config.time_field_format);
  if (timeFormat !== undefined && !isTimeFormat(timeFormat)) throw new SettingsError("config.time_field_format");
  const operator = (str(config.operator) ?? "AND").toUpperCase();
  if (operator !== "AND" && operator !== "OR") throw new SettingsError("config.operator");
  const conditions = list(config.conditions).map((c, i): Condition => {
    const item = (c ?? {}) as Record<string, unknown>;
    const column = str(item.column_name);
    const comparison = COMPARISONS[String(item.comparison ?? "").trim()];
    const threshold = item.threshold;
    const okThreshold = typeof threshold === "string" || typeof threshold === "boolean" || (typeof threshold === "number" && Number.isFinite(threshold));
    if (!column || !comparison || !okThreshold) throw new SettingsError(`config.conditions[${i}]`);
    return { column, comparison, threshold };
  });
  const frequency = config.frequency === undefined || config.frequency === null || config.frequency === "" ? 1 : Number(config.frequency);
  const per = unitMs(config.frequency_unit);
  if (!Number.isFinite(frequency) || frequency <= 0) throw new SettingsError("config.frequency");
  if (per === undefined) throw new SettingsError("config.frequency_unit");
  return {
    target: {
      dialect: dialectOf({ dialect: dialect as Dialect | undefined, port }),
      host,
      port,
      user: need(str(settings.username), "username"),
      // An empty password is a given one (MariaDB's root often has none); op 50 declares it an integer.
      password: settings.password === undefined || settings.password === null ? "" : String(settings.password),
    },
    database: str(config.database),
    table: need(str(config.table), "config.table"),
    timeField: need(str(config.time_field), "config.time_field"),
    timeFormat,
    conditions,
    operator,
    ignored: new Set(list(config.ignore_columns).map(String)),
    everyMs: Math.max(1000, Math.round(frequency * per)),
  };
}

/** The columns a page reads besides the time field: each tag's, unless ignored; every tag of a column with it. */
export function columnsOf(source: SqlSource, tags: CollectedTag[]): Map<string, CollectedTag[]> {
  const out = new Map<string, CollectedTag[]>();
  for (const t of tags) {
    if (source.ignored.has(t.column_name) || t.column_name === source.timeField) continue;
    out.set(t.column_name, [...(out.get(t.column_name) ?? []), t]);
  }
  return out;
}

/** An identifier of the dialect, whatever it holds: `"a""b"`, `` `a``b` ``, `[a]]b]`. */
export function quoteIdent(dialect: Dialect, name: string): string {
  if (dialect === "mysql") return `\`${name.replace(/`/g, "``")}\``;
  if (dialect === "mssql") return `[${name.replace(/]/g, "]]")}]`;
  return `"${name.replace(/"/g, '""')}"`;
}

/** The table, `schema.table` outside the default schema (PostgreSQL, SQL Server); MySQL's database is the connection's. */
export function quoteTable(dialect: Dialect, table: string): string {
  if (dialect === "mysql") return quoteIdent(dialect, table);
  const [schema, name] = splitTable(table, dialect === "mssql" ? "dbo" : "public");
  return `${quoteIdent(dialect, schema)}.${quoteIdent(dialect, name)}`;
}

const placeholder = (dialect: Dialect, n: number): string => (dialect === "mysql" ? "?" : dialect === "mssql" ? `@p${n}` : `$${n}`);

export interface PageQuery {
  sql: string;
  params: unknown[];
}

/**
 * At most `limit` rows from the position on, oldest first: the time field as `c0`, then each
 * column as `c1`, `c2`, ... The rows at the position's own time are read again (`>=`) when some
 * of them were stored (`seen`), for the caller to tell the stored ones from the new; a position a
 * user set (nothing seen) reads strictly newer rows.
 */
export function pageQuery(source: SqlSource, columns: string[], from: CollectionPosition, limit: number): PageQuery {
  const d = source.target.dialect;
  const params: unknown[] = [];
  const param = (v: unknown): string => {
    params.push(v);
    return placeholder(d, params.length);
  };
  const time = quoteIdent(d, source.timeField);
  const where = [`${time} IS NOT NULL`];
  if (from.last !== null) where.push(`${time} ${Object.keys(from.seen).length > 0 ? ">=" : ">"} ${param(from.last)}`);
  if (source.conditions.length > 0) {
    const parts = source.conditions.map((c) => `${quoteIdent(d, c.column)} ${c.comparison} ${param(typeof c.threshold === "boolean" ? Number(c.threshold) : c.threshold)}`);
    where.push(`(${parts.join(` ${source.operator} `)})`);
  }
  const select = [`${time} AS c0`, ...columns.map((c, i) => `${quoteIdent(d, c)} AS c${i + 1}`)].join(", ");
  const n = Math.max(1, Math.floor(limit));
  const sql =
    d === "mssql"
      ? `SELECT TOP (${n}) ${select} FROM ${quoteTable(d, source.table)} WHERE ${where.join(" AND ")} ORDER BY ${time}`
      : `SELECT ${select} FROM ${quoteTable(d, source.table)} WHERE ${where.join(" AND ")} ORDER BY ${time} LIMIT ${n}`;
  return { sql, params };
}
