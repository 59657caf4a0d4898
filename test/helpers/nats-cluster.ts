/**
 * A NATS JetStream cluster of the test's own: `size` nats-server processes (/usr/sbin/nats-server
 * unless NATS_SERVER_BIN says otherwise) clustered on loopback, each with a store dir of its own
 * under os.tmpdir(). Nodes are killed (SIGKILL) and started again on the same ports and store, as
 * a node of a real cluster dies and comes back.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { settledWithin } from "../../lib/wait";
import { freePort } from "./cluster";

export interface NatsCluster {
  /** Client URLs of the nodes, in order. */ urls: string[];
  /** All client URLs joined by commas, as TRANSPORTER takes them. */ url: string;
  kill(i: number): Promise<void>; // SIGKILL node i, resolves when its process has exited
  restart(i: number): Promise<void>; // starts node i again on the same ports and store; resolves when it answers
  freeze(i: number): Promise<void>; // SIGSTOP node i: its sockets stay open and nothing is answered (a hung node, a machine lost without a reset)
  thaw(i: number): Promise<void>; // SIGCONT node i
  stop(): Promise<void>; // stops every node and removes the store dirs
  /** Resolves once JetStream has a meta leader (the cluster is usable). */ ready(): Promise<void>;
}

const BIN = process.env.NATS_SERVER_BIN ?? "/usr/sbin/nats-server";
const START_TIMEOUT_MS = 20_000;
const READY_TIMEOUT_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every node still running, so none outlives the test run, however it ends. */
const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

interface Node {
  name: string;
  clientPort: number;
  routePort: number;
  httpPort: number;
  storeDir: string;
  child?: ChildProcess;
  exited: Promise<void>;
  /** The last lines the node wrote, across its restarts, for a failure message. */
  tail: string[];
}

async function getJson<T>(url: string): Promise<T | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    return res.ok ? ((await res.json()) as T) : undefined;
  } catch {
    return undefined;
  }
}

export async function startNatsCluster(opts: { size?: number } = {}): Promise<NatsCluster> {
  const size = opts.size ?? 3;
  const clusterName = `test-${randomBytes(3).toString("hex")}`;
  // freePort closes its probe before answering, so the system may hand the same port out twice.
  const taken = new Set<number>();
  const port = async (): Promise<number> => {
    for (;;) {
      const p = await freePort();
      if (!taken.has(p)) {
        taken.add(p);
        return p;
      }
    }
  };
  const nodes: Node[] = [];
  for (let i = 0; i < size; i++) {
    nodes.push({
      name: `${clusterName}-n${i}`,
      clientPort: await port(),
      routePort: await port(),
      httpPort: await port(),
      storeDir: fs.mkdtempSync(path.join(os.tmpdir(), `ims-nats-${i}-`)),
      exited: Promise.resolve(),
      tail: [],
    });
  }
  const routes = nodes.map((n) => `nats://127.0.0.1:${n.routePort}`).join(",");
  const running = (n: Node) => !!n.child && n.child.exitCode === null && n.child.signalCode === null;
  const logs = () => nodes.map((n) => `--- ${n.name} (${running(n) ? "running" : "down"})\n${n.tail.join("")}`).join("\n");

  const spawnNode = (n: Node) => {
    const child = spawn(
      BIN,
      [
        "-a", "127.0.0.1",
        "-p", String(n.clientPort),
        "-m", String(n.httpPort),
        "-js",
        "-sd", n.storeDir,
        "--server_name", n.name,
        "--cluster_name", clusterName,
        "--cluster", `nats://127.0.0.1:${n.routePort}`,
        "--routes", routes,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const keep = (chunk: Buffer) => {
      n.tail.push(chunk.toString("utf8"));
      if (n.tail.length > 300) n.tail.splice(0, n.tail.length - 300);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    n.exited = new Promise((resolve) => child.once("exit", () => resolve()));
    n.child = child;
    live.add(child);
    void n.exited.then(() => live.delete(child));
  };

  /** The node's monitoring port answers and JetStream is enabled on it. */
  const answers = async (n: Node): Promise<void> => {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (!running(n)) throw new Error(`${n.name} exited while starting:\n${logs()}`);
      const res = await fetch(`http://127.0.0.1:${n.httpPort}/healthz?js-enabled-only=true`, { signal: AbortSignal.timeout(1000) }).catch(() => undefined);
      if (res?.ok) return;
      await sleep(100);
    }
    throw new Error(`${n.name} did not answer within ${START_TIMEOUT_MS} ms:\n${logs()}`);
  };

  const node = (i: number): Node => {
    const n = nodes[i];
    if (!n) throw new Error(`no NATS node ${i} (size ${size})`);
    return n;
  };

  const cluster: NatsCluster = {
    urls: nodes.map((n) => `nats://127.0.0.1:${n.clientPort}`),
    url: nodes.map((n) => `nats://127.0.0.1:${n.clientPort}`).join(","),
    async kill(i) {
      const n = node(i);
      if (!running(n)) return;
      n.child!.kill("SIGKILL");
      await n.exited;
    },
    async restart(i) {
      const n = node(i);
      if (running(n)) throw new Error(`${n.name} is running`);
      spawnNode(n);
      await answers(n);
    },
    async freeze(i) {
      const n = node(i);
      if (running(n)) n.child!.kill("SIGSTOP");
    },
    async thaw(i) {
      const n = node(i);
      if (running(n)) n.child!.kill("SIGCONT");
    },
    async stop() {
      for (const n of nodes) {
        if (!running(n)) continue;
        // A frozen node would not hear SIGTERM.
        n.child!.kill("SIGCONT");
        n.child!.kill("SIGTERM");
        if (!(await settledWithin(n.exited, 5000))) {
          n.child!.kill("SIGKILL");
          await n.exited;
        }
      }
      for (const n of nodes) fs.rmSync(n.storeDir, { recursive: true, force: true });
    },
    async ready() {
      // Every running node sees the same meta leader, and the leader is one of the running nodes.
      const deadline = Date.now() + READY_TIMEOUT_MS;
      while (Date.now() < deadline) {
        const up = nodes.filter(running);
        const leaders = await Promise.all(
          up.map(async (n) => (await getJson<{ meta_cluster?: { leader?: string } }>(`http://127.0.0.1:${n.httpPort}/jsz`))?.meta_cluster?.leader),
        );
        const [first] = leaders;
        if (first && leaders.every((l) => l === first) && up.some((n) => n.name === first)) return;
        await sleep(200);
      }
      throw new Error(`the NATS cluster has no JetStream meta leader after ${READY_TIMEOUT_MS} ms:\n${logs()}`);
    },
  };
  try {
    for (const n of nodes) spawnNode(n);
    await Promise.all(nodes.map(answers));
    await cluster.ready();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
