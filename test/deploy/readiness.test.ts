/**
 * Truthful readiness (docs/operations.md, "Failure modes"): `/ready` is 503 while the bus does not
 * answer (a NATS server of the test's own, killed with SIGKILL and started again on the same port)
 * and on an api that reaches none of the services its routes need; `/live` stays about the process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "../helpers/cluster";
import { startTestNode, type TestNode } from "../helpers/node";
import { settledWithin } from "../../lib/wait";

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? "nats-server";

interface Nats {
  url: string;
  kill(): Promise<void>;
  start(): Promise<void>;
}

/** A nats-server of this test's own on a fixed port, so it can be killed and started again. */
async function ownNats(): Promise<Nats> {
  const port = await freePort();
  const store = fs.mkdtempSync(path.join(os.tmpdir(), "ims-nats-"));
  let child: ChildProcess | undefined;
  const nats: Nats = {
    url: `nats://127.0.0.1:${port}`,
    async start() {
      child = spawn(NATS_SERVER, ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", store], { stdio: "ignore" });
      const until = Date.now() + 10_000;
      while (Date.now() < until) {
        const up = await fetch(`http://127.0.0.1:${port}`).then(
          () => true,
          (e: { cause?: { code?: string } }) => e.cause?.code !== "ECONNREFUSED",
        );
        if (up) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error("nats-server did not start");
    },
    async kill() {
      const c = child;
      if (!c || c.exitCode !== null) return;
      const exited = new Promise((r) => c.once("exit", r));
      c.kill("SIGKILL");
      await settledWithin(exited, 5000);
    },
  };
  await nats.start();
  return nats;
}

async function ready(t: TestNode): Promise<{ status: number; checks: Record<string, string> }> {
  const res = await fetch(`http://127.0.0.1:${t.node.health!.port}/ready`);
  const body = (await res.json()) as { checks?: Record<string, string> };
  return { status: res.status, checks: body.checks ?? {} };
}

/** Polls /ready until it answers `status`; answers the last answer and how long it took. */
async function until(t: TestNode, status: number, timeoutMs: number): Promise<{ status: number; checks: Record<string, string>; ms: number }> {
  const started = Date.now();
  for (;;) {
    const r = await ready(t);
    if (r.status === status || Date.now() - started > timeoutMs) return { ...r, ms: Date.now() - started };
    await new Promise((res) => setTimeout(res, 100));
  }
}

let nats: Nats;
const nodes: TestNode[] = [];

beforeAll(async () => {
  nats = await ownNats();
});

afterAll(async () => {
  for (const n of nodes.reverse()) await n.stop().catch(() => undefined);
  await nats?.kill();
});

it("an api alone is unready until a service its routes need is reachable, and unready again when it goes", async () => {
  const namespace = `ready-${randomBytes(3).toString("hex")}`;
  const env = { HEALTH_PORT: "0", TRANSPORTER: nats.url, NAMESPACE: namespace };
  const api = await startTestNode({ services: ["api"], env: { ...env, NODE_ID: `${namespace}-api` } });
  nodes.push(api);
  const alone = await ready(api);
  expect(alone.status).toBe(503);
  expect(alone.checks).toMatchObject({ broker: "ok", transporter: "ok", "services:api": expect.stringMatching(/^error: /) });
  expect((await fetch(`http://127.0.0.1:${api.node.health!.port}/live`)).status).toBe(200);

  const backend = await startTestNode({ services: ["auth", "config"], env: { ...env, NODE_ID: `${namespace}-backend` } });
  nodes.push(backend);
  const up = await until(api, 200, 15_000);
  expect(up.status).toBe(200);
  expect(up.checks["services:api"]).toBe("ok");
  // The services announce themselves a moment apart: the routes answer within a second or two.
  let sites = await api.http("GET", "/_config/sites/_list");
  for (const deadline = Date.now() + 5000; sites.status !== 200 && Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 100));
    sites = await api.http("GET", "/_config/sites/_list");
  }
  expect([sites.status, sites.body]).toEqual([200, []]);

  await backend.stop();
  nodes.splice(nodes.indexOf(backend), 1);
  const gone = await until(api, 503, 15_000);
  expect(gone.status).toBe(503);
  expect(gone.checks["services:api"]).toMatch(/none of .*config.* reachable/);
});

it("is unready within seconds of the bus going away, and ready again when it is back, without a restart", async () => {
  const t = await startTestNode({ services: ["api", "auth", "config"], env: { HEALTH_PORT: "0", TRANSPORTER: nats.url } });
  nodes.push(t);
  expect((await ready(t)).status).toBe(200);

  await nats.kill();
  const down = await until(t, 503, 10_000);
  expect(down.status).toBe(503);
  expect(down.checks.transporter).toMatch(/^error: /);
  // Bounded by the probe's own timeout, not by the request timeout.
  expect(down.ms).toBeLessThan(5000);
  expect((await fetch(`http://127.0.0.1:${t.node.health!.port}/live`)).status).toBe(200);

  await nats.start();
  const back = await until(t, 200, 20_000);
  expect(back.status).toBe(200);
  expect(back.checks.transporter).toBe("ok");
}, 60_000);
