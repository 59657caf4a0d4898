/**
 * A real node for tests: the named services on a broker, a fresh PostgreSQL database, the HTTP
 * gateway on a free port, and a small client that speaks to it as curl would.
 */
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { randomBytes } from "node:crypto";
import { readConfig } from "../../lib/config";
import { startNode, type RunningNode } from "../../bin/runtime";
import { createTestDatabase, type TestDatabase } from "./db";

export const ADMIN = { username: "admin@localhost", password: "AdminPass123" };

export interface TestNode {
  node: RunningNode;
  db: TestDatabase;
  baseUrl: string;
  http: HttpClient;
  stop(): Promise<void>;
}

export interface HttpResult<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  body?: unknown;
  rawBody?: string;
  auth?: { username: string; password: string } | null;
  headers?: Record<string, string>;
}

export type HttpClient = <T = unknown>(method: string, path: string, opts?: RequestOptions) => Promise<HttpResult<T>>;

export function basic(auth: { username: string; password: string }): string {
  return `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}`;
}

export function httpClient(baseUrl: string, defaultAuth: RequestOptions["auth"] = ADMIN): HttpClient {
  return async <T>(method: string, path: string, opts: RequestOptions = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const auth = opts.auth === undefined ? defaultAuth : opts.auth;
    if (auth) headers.authorization = basic(auth);
    let body: string | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* a non-JSON body is returned as text */
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  };
}

export interface StartOptions {
  services?: string[];
  env?: Record<string, string>;
}

export async function startTestNode(opts: StartOptions = {}): Promise<TestNode> {
  const db = await createTestDatabase();
  const cfg = readConfig({
    SERVICES: (opts.services ?? ["api", "auth", "config", "notifier"]).join(","),
    DATABASE_URL: db.url,
    PORT: "0",
    NAMESPACE: `test-${randomBytes(4).toString("hex")}`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "error",
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    DATA_DIR: `/tmp/ims-test-${randomBytes(4).toString("hex")}`,
    ...(opts.env ?? {}),
  });
  let node: RunningNode;
  try {
    node = await startNode(cfg);
  } catch (err) {
    await db.drop();
    throw err;
  }
  const api = node.broker.getLocalService("api") as unknown as { server?: Server } | undefined;
  const port = api?.server ? (api.server.address() as AddressInfo).port : 0;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    node,
    db,
    baseUrl,
    http: httpClient(baseUrl),
    async stop() {
      await node.stop();
      await db.drop();
    },
  };
}

/**
 * For tests that count or read the raw `readings` rows themselves: the historian's compression
 * (services/pipelines/chunks.ts, and ems's of its readings key: services/ems/hours.ts) would move
 * readings older than an hour into chunks under them. test/e2e/historian.test.ts and
 * test/e2e/ems-compression.test.ts cover what compression keeps.
 */
export const RAW_READINGS_ONLY = { HISTORY_COMPRESS_AFTER: "400d" } as const;
