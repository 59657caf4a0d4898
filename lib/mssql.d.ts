/** The part of mssql's API that lib/sql-source.ts uses (the package ships no types). */
declare module "mssql" {
  interface ConnectionConfig {
    server: string;
    port?: number;
    user?: string;
    password?: string;
    database?: string;
    connectionTimeout?: number;
    requestTimeout?: number;
    options?: { encrypt?: boolean; trustServerCertificate?: boolean; useUTC?: boolean };
    pool?: { max?: number; min?: number };
  }
  interface Request {
    input(name: string, value: unknown): Request;
    query(sql: string): Promise<{ recordset: Record<string, unknown>[] }>;
  }
  class ConnectionPool {
    constructor(config: ConnectionConfig);
    connect(): Promise<ConnectionPool>;
    request(): Request;
    close(): Promise<void>;
  }
}
