/**
 * Graceful drain (docs/operations.md, "Failure modes"): SIGTERM to a real process under load. It is
 * unready at once, answers what arrives during the grace (each answer closing its connection), then
 * accepts no new connection, completes what is in flight, and exits: no request in flight is reset,
 * none fails.
 */
import http from "node:http";
import { ADMIN, basic } from "../helpers/node";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { freePort, ServiceProcess } from "../helpers/cluster";

const GRACE_S = 2;
let db: TestDatabase;
let proc: ServiceProcess;
let base: string;
let health: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const [port, healthPort] = [await freePort(), await freePort()];
  base = `http://127.0.0.1:${port}`;
  health = `http://127.0.0.1:${healthPort}`;
  proc = new ServiceProcess("node", {
    SERVICES: "api,auth,config",
    DATABASE_URL: db.url,
    PORT: String(port),
    HEALTH_PORT: String(healthPort),
    DRAIN_GRACE_S: String(GRACE_S),
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: "warn",
    NAMESPACE: `drain-${process.pid}`,
    DATA_DIR: `/tmp/ims-drain-${process.pid}`,
  });
  proc.start();
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const ok = await fetch(`${health}/ready`).then((r) => r.status === 200, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the node did not become ready:\n${proc.output()}`);
}, 90_000);

afterAll(async () => {
  await proc?.stop("SIGKILL");
  await db?.drop();
});

/** A site created by a POST whose body is sent in two halves, the second when `finish()` is called. */
function slowRequest(baseUrl: string, authorization: string): { finish(): void; answer: Promise<{ status: number; body: string }> } {
  const body = JSON.stringify({
    site_name: "Drained site",
    location: "Pune",
    latitude: "18.5",
    timezone: "Asia/Kolkata",
    edge_firmware: { current_version: "1.0.0", previous_version: "0.9.0" },
  });
  const half = Math.floor(body.length / 2);
  const req = http.request(`${baseUrl}/_config/sites`, {
    method: "POST",
    agent: false,
    headers: { authorization, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on("response", (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString("utf8")));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
  });
  req.write(body.slice(0, half));
  return { finish: () => req.end(body.slice(half)), answer };
}

interface Outcome {
  at: number;
  status?: number;
  error?: string;
}

it("on SIGTERM: unready at once, serves through the grace, then refuses new connections and resets nothing in flight", async () => {
  const auth = { authorization: basic(ADMIN) };
  const outcomes: Outcome[] = [];
  let sigtermAt = 0;
  let stop = false;
  // Eight clients, each keeping its connection alive, one request after another.
  const clients = Array.from({ length: 8 }, async () => {
    while (!stop) {
      const at = Date.now();
      try {
        const res = await fetch(`${base}/_config/sites/_list`, { headers: auth });
        await res.arrayBuffer();
        outcomes.push({ at, status: res.status });
      } catch (err) {
        const cause = (err as { cause?: { code?: string } }).cause;
        outcomes.push({ at, error: cause?.code ?? String(err) });
        if (cause?.code === "ECONNREFUSED") await new Promise((r) => setTimeout(r, 50));
      }
    }
  });
  // Under way: every client answered at least once (the first pays the password hash).
  for (const until = Date.now() + 20_000; outcomes.length < 16 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
  expect(outcomes.filter((o) => o.status === 200).length).toBeGreaterThanOrEqual(16);

  // A request in flight across the close: its body half sent before the grace ends, the rest after.
  const slow = slowRequest(base, auth.authorization);

  sigtermAt = Date.now();
  process.kill(proc.pid!, "SIGTERM");
  setTimeout(() => slow.finish(), GRACE_S * 1000 + 800);
  const probe = await fetch(`${health}/ready`);
  expect(probe.status).toBe(503);
  expect(((await probe.json()) as { checks: Record<string, string> }).checks.broker).toBe("draining");
  expect(Date.now() - sigtermAt).toBeLessThan(1000);

  // Wait for the process to exit (grace + drain), bounded.
  const exitBy = Date.now() + (GRACE_S + 20) * 1000;
  while (proc.running && Date.now() < exitBy) await new Promise((r) => setTimeout(r, 100));
  stop = true;
  await Promise.all(clients);
  expect(proc.running).toBe(false);

  // It completed, answered as any request is, though the node had stopped accepting meanwhile.
  expect(await slow.answer).toEqual({ status: 200, body: expect.stringContaining('"id"') });
  const during = outcomes.filter((o) => o.at >= sigtermAt && o.at < sigtermAt + GRACE_S * 1000 - 200);
  // After the grace a load balancer has stopped sending here; what still tries to connect is refused (or, caught
  // in the listening socket's backlog as it closes, reset before the server read a byte of it).
  const afterGrace = (o: Outcome) => o.at >= sigtermAt + GRACE_S * 1000 - 200;
  const failed = outcomes.filter(
    (o) => (o.status !== undefined && o.status !== 200) || (o.error !== undefined && !(afterGrace(o) && ["ECONNREFUSED", "ECONNRESET"].includes(o.error))),
  );
  // Served through the grace, every one of them.
  expect(during.length).toBeGreaterThan(8);
  expect(during.every((o) => o.status === 200)).toBe(true);
  // Nothing reset or failed: after the grace a new connection is refused (a load balancer sends it elsewhere), nothing else.
  expect(failed).toEqual([]);
  const refused = outcomes.filter((o) => o.error === "ECONNREFUSED");
  expect(refused.every((o) => o.at >= sigtermAt + GRACE_S * 1000 - 200)).toBe(true);
}, 60_000);
