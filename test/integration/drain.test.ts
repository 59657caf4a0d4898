/**
 * Graceful drain (issue 19 item 4): SIGTERM to a real process under load. It is unready at once,
 * answers what arrives during the grace (each answer closing its connection), then accepts no new
 * connection, completes what is in flight, and exits: no request in flight is reset, none fails.
 */
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

  sigtermAt = Date.now();
  process.kill(proc.pid!, "SIGTERM");
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

  const during = outcomes.filter((o) => o.at >= sigtermAt && o.at < sigtermAt + GRACE_S * 1000 - 200);
  const failed = outcomes.filter((o) => (o.status !== undefined && o.status !== 200) || (o.error !== undefined && o.error !== "ECONNREFUSED"));
  // Served through the grace, every one of them.
  expect(during.length).toBeGreaterThan(8);
  expect(during.every((o) => o.status === 200)).toBe(true);
  // Nothing reset or failed: after the grace a new connection is refused (a load balancer sends it elsewhere), nothing else.
  expect(failed).toEqual([]);
  const refused = outcomes.filter((o) => o.error === "ECONNREFUSED");
  expect(refused.every((o) => o.at >= sigtermAt + GRACE_S * 1000 - 200)).toBe(true);
}, 60_000);
