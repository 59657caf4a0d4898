/**
 * Health and metrics of a real node: NATS transporter, Redis cacher, PostgreSQL per service.
 * The database outage is real: the test database stops accepting connections and its sessions
 * are terminated, then it is opened again.
 */
import { Client } from "pg";
import { PG_ADMIN_URL } from "../helpers/db";
import { startTestNode, type TestNode } from "../helpers/node";

let t: TestNode;
let health: string;

beforeAll(async () => {
  t = await startTestNode({
    services: ["api", "auth", "config"],
    env: { HEALTH_PORT: "0", TRANSPORTER: "nats://127.0.0.1:4222", REDIS_URL: "redis://127.0.0.1:6379" },
  });
  health = `http://127.0.0.1:${t.node.health!.port}`;
});
afterAll(async () => {
  await t?.stop();
});

async function get(path: string): Promise<{ status: number; text: string; json: () => unknown }> {
  const res = await fetch(health + path);
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

async function admin(sql: string): Promise<void> {
  const c = new Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

async function waitForReady(expected: number, timeoutMs = 15000): Promise<{ status: number; json: () => unknown }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await get("/ready");
    if (res.status === expected || Date.now() > until) return res;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("health endpoints", () => {
  it("answers /live with 200", async () => {
    const res = await get("/live");
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ status: "ok" });
  });

  it("is ready when its databases, cache and transporter answer", async () => {
    const res = await get("/ready");
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({
      status: "ready",
      checks: { broker: "ok", "database:auth": "ok", "database:config": "ok", cache: "ok", transporter: "ok", "services:api": "ok" },
    });
  });

  it("goes unready when PostgreSQL refuses the node, and ready again when it is back", async () => {
    const name = t.db.name;
    await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    try {
      await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
      const down = await waitForReady(503);
      expect(down.status).toBe(503);
      const body = down.json() as { status: string; checks: Record<string, string> };
      expect(body.status).toBe("unready");
      expect(body.checks["database:auth"]).toMatch(/^error: /);
      expect(body.checks["database:config"]).toMatch(/^error: /);
      expect(body.checks.cache).toBe("ok");
      expect(body.checks.transporter).toBe("ok");
      // The API fails the same way meanwhile, without leaking the driver's text.
      const api = await t.http("GET", "/_config/sites/_list");
      expect(api.status).toBe(500);
      expect(api.body).toEqual({ error: { status: 500, message: "Internal error" } });
    } finally {
      await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    }
    const up = await waitForReady(200);
    expect(up.status).toBe(200);
    expect((await t.http("GET", "/_config/sites/_list")).status).toBe(200);
  });

  it("answers an unknown path with 404 and a write with 405", async () => {
    expect((await get("/nothing")).status).toBe(404);
    expect((await fetch(health + "/ready", { method: "POST" })).status).toBe(405);
  });
});

describe("metrics", () => {
  it("lists the domain counters at zero before anything is counted", async () => {
    const res = await get("/metrics");
    expect(res.status).toBe(200);
    for (const name of [
      "ims_readings_ingested_total",
      "ims_readings_rejected_total",
      "ims_alerts_opened_total",
      "ims_alerts_closed_total",
      "ims_notifications_sent_total",
      "ims_notifications_failed_total",
      "ims_notifications_skipped_total",
    ]) {
      expect(res.text).toContain(`# TYPE ${name} counter`);
      expect(res.text).toMatch(new RegExp(`^${name}\\{[^}]*\\} 0$`, "m"));
    }
  });

  // What the services count, counted by their work rather than by calling countDomain here: metrics.test.ts.

  it("has Moleculer's request rates and latencies per action", async () => {
    await t.http("GET", "/_config/server-time");
    const res = await get("/metrics");
    expect(res.text).toMatch(/^moleculer_request_total\{[^}]*action="config.serverTime"[^}]*\} \d+$/m);
    expect(res.text).toMatch(/^moleculer_request_time_bucket\{[^}]*action="config.serverTime"/m);
  });
});

describe("draining", () => {
  it("answers /ready 503 once the node starts draining, /live still 200", async () => {
    t.node.health!.setDraining();
    const res = await get("/ready");
    expect(res.status).toBe(503);
    expect((res.json() as { checks: Record<string, string> }).checks.broker).toBe("draining");
    expect((await get("/live")).status).toBe(200);
  });
});
