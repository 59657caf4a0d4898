/**
 * SQL connect: what a SQL gateway could read from a customer's server. Called without
 * authentication (spec), so it is throttled per client address (docs/security.md).
 */
import type { Context } from "moleculer";
import { TOO_MANY_REQUESTS } from "../../lib/throttle";
import { MSG } from "./messages";
import type { PipelinesActions } from "./pipelines.types";
import { optText } from "./schemas";
import { sqlConnect, type SqlConnectInput } from "./sql-connect";

/** Op 57 guesses no password and maps no port fast: 10 calls a minute per client address. */
export const SQL_CONNECT_LIMIT = { limit: 10, windowS: 60 };

export const sqlConnectActions: PipelinesActions = {
  sqlConnect: {
    http: {
      op: 57,
      routes: ["POST /_config/pipelines/sql/connect"],
      group: "sqlConnect",
      summary: "Introspect an SQL server (databases, tables, columns)",
      description:
        "Without a query: the server's databases; with database: its tables; with table too: the table's columns, " +
        "less the time_field and the ignored types, or their data types. The credentials serve this one connection and are not kept. " +
        "The service's own database, cache and bus are refused, and loopback, link-local and unspecified addresses unless SOURCE_ALLOW names them " +
        `(\`Failed to connect to DB\` at once); at most ${SQL_CONNECT_LIMIT.limit} calls a minute per client address (then 429 \`Too many requests\` with Retry-After).`,
      rateLimit: SQL_CONNECT_LIMIT,
      fields: {
        server_address: { required: true, description: "host name or address of the SQL server", example: "mes-db.pune-works.local" },
        port: { required: true, description: "its port; without dialect, 3306 means MySQL, 1433 SQL Server, any other PostgreSQL", example: 5432 },
        username: { required: true, description: "an account that may read the schema", example: "reader" },
        password: { required: true, type: "string", description: "its password (empty when it has none)", example: "s3cret" },
        dialect: { description: "the server's kind; the port decides when left out", example: "postgres" },
        database: { in: "query", description: "list this database's tables", example: "mes" },
        table: { in: "query", description: "with database: list this table's columns (schema.table outside the default schema)", example: "output" },
        time_field: { in: "query", description: "with table: leave out this timestamp column", example: "ts" },
        return_data_types: { in: "query", type: "enum(true|false)", required: false, description: "true: the columns' data types instead of their names", example: "true" },
        ignore_type: { in: "query", type: "string[]", description: "leave out columns of these data types (repeated, or one JSON list)", example: ["text"] },
      },
      answer: { schema: "string[]", example: ["plant_data", "erp"] },
      errors: [[400, MSG.missingParameters(["<param1>", "<param2>"])], [400, MSG.failedToConnect], [400, MSG.ignoreTypeNotList], [429, TOO_MANY_REQUESTS]],
    },
    params: {
      server_address: optText,
      port: { type: "number", integer: true, min: 1, max: 65535, convert: true, optional: true },
      username: optText,
      password: [
        { type: "string", max: 1024, optional: true },
        { type: "number", optional: true },
      ],
      dialect: { type: "enum", values: ["postgres", "mysql", "mssql"], optional: true },
      database: optText,
      table: optText,
      time_field: optText,
      return_data_types: [
        { type: "enum", values: ["true", "false", "True", "False"], optional: true },
        { type: "boolean", optional: true },
      ],
      ignore_type: { type: "any", optional: true },
    },
    handler(ctx: Context<SqlConnectInput>) {
      return sqlConnect(ctx.params, (m) => this.logger.warn(m));
    },
  },
};
