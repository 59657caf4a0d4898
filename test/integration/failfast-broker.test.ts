/**
 * lib/failfast.ts on brokers of this process, with the project's broker options, over the
 * machine's NATS. One replica reaches NATS through a TCP relay the test can cut: cut, its
 * connection drops as a dead process's would and no new one gets through, while the broker itself
 * lives on; restored, it reconnects, as a client of a restarting NATS node of a cluster does.
 *
 * Heartbeats are set 30 s apart here, so that nothing this test sees within seconds can be the
 * heartbeat machinery's doing. (failfast.test.ts kills real processes.)
 */
import { randomBytes } from "node:crypto";
import net from "node:net";
import { Errors, ServiceBroker, type Service, type ServiceSchema } from "moleculer";
import { readConfig } from "../../lib/config";
import { FailFastMiddleware } from "../../lib/failfast";
import type { HttpDeclaration } from "../../lib/operations";
import { brokerOptions } from "../../moleculer.config";
import { NATS_URL, pollUntil } from "../helpers/cluster";

const ns = `test-ff-${randomBytes(4).toString("hex")}`;
const nodeID = (name: string) => `${ns}-${name}`;
const declared = (route: `${"GET" | "POST"} /${string}`): HttpDeclaration => ({ routes: [route], group: "sites", summary: "test", answer: { text: "" } });

/** Replicas of one service; `hold` keeps every call to this replica waiting until it settles. */
function echo(hold: Promise<void>): ServiceSchema {
  return {
    name: "echo",
    actions: {
      read: {
        http: declared("GET /_echo"),
        async handler(this: Service) {
          await hold;
          return this.broker.nodeID;
        },
      },
      write: {
        http: declared("POST /_echo"),
        async handler(this: Service) {
          await hold;
          return this.broker.nodeID;
        },
      },
      // Unrouted, as other services' lookups are: safe to repeat only when declared so.
      lookup: {
        readOnly: true,
        async handler(this: Service) {
          await hold;
          return this.broker.nodeID;
        },
      },
    },
  };
}

function broker(name: string, natsUrl: string, schema?: ServiceSchema): ServiceBroker {
  const b = new ServiceBroker({
    ...brokerOptions(readConfig({ TRANSPORTER: natsUrl, NAMESPACE: ns, NODE_ID: nodeID(name), LOG_LEVEL: "fatal" })),
    heartbeatInterval: 30,
    heartbeatTimeout: 90,
    metrics: false,
  });
  if (schema) b.createService(schema);
  return b;
}

/** A TCP relay to NATS that the test can cut (connections dropped, no new ones) and restore on the same port. */
class Relay {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private port = 0;

  async listen(): Promise<string> {
    const server = net.createServer((client) => this.relay(client));
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return `nats://127.0.0.1:${this.port}`;
  }

  private relay(client: net.Socket): void {
    const nats = new URL(NATS_URL);
    const upstream = net.connect(Number(nats.port || 4222), nats.hostname);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.sockets.add(a);
      a.pipe(b);
      a.on("error", () => b.destroy());
      a.on("close", () => {
        this.sockets.delete(a);
        b.destroy();
      });
    }
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

const relay = new Relay();
let release: () => void = () => undefined;
const never = new Promise<void>((resolve) => (release = resolve));
let caller: ServiceBroker;
let healthy: ServiceBroker;
let cutOff: ServiceBroker;

beforeAll(async () => {
  const relayed = await relay.listen();
  caller = broker("caller", NATS_URL);
  healthy = broker("healthy", NATS_URL, echo(Promise.resolve()));
  cutOff = broker("cut-off", relayed, echo(never));
  await Promise.all([caller.start(), healthy.start(), cutOff.start()]);
  await pollUntil(async () => available("echo.read").length === 2, 20_000, "both replicas in the caller's registry");
}, 30_000);

afterAll(async () => {
  release();
  await Promise.all([caller, healthy, cutOff].map((b) => b?.stop().catch(() => undefined)));
  await relay.cut();
});

/** The caller's rotation for the action. */
function available(action: string): string[] {
  const list = caller.registry.getActionEndpoints(action);
  return (list?.endpoints ?? []).filter((ep) => ep.isAvailable).map((ep) => ep.id);
}

it("is not used without a transporter: the single process retries nothing", () => {
  const opts = brokerOptions(readConfig({ LOG_LEVEL: "fatal" }));
  expect(opts.retryPolicy?.enabled).toBe(false);
  expect((opts.middlewares ?? []).map((m) => (typeof m === "object" && m !== null && "name" in m ? m.name : m))).not.toContain(FailFastMiddleware().name);
});

it("answers a read pending to a node cut from NATS from the other replica, fails a write at once, and takes the node back when it answers again", async () => {
  const read = caller.call<string, object>("echo.read", {}, { nodeID: nodeID("cut-off") });
  const lookup = caller.call<string, object>("echo.lookup", {}, { nodeID: nodeID("cut-off") });
  const write = caller.call<string, object>("echo.write", {}, { nodeID: nodeID("cut-off") });
  const wrote = write.then(
    () => undefined,
    (err: unknown) => err,
  );
  const cutAt = Date.now();
  await relay.cut();

  await expect(read).resolves.toBe(nodeID("healthy"));
  await expect(lookup).resolves.toBe(nodeID("healthy"));
  const readMs = Date.now() - cutAt;
  const err = await wrote;
  const writeMs = Date.now() - cutAt;
  expect(err).toBeInstanceOf(Errors.RequestRejectedError);
  expect(err).toMatchObject({ code: 503, type: "REQUEST_REJECTED" });
  // probeAfterMs 500, a tick of 100, and NATS's "no responders" at once.
  expect(readMs).toBeLessThan(1500);
  expect(writeMs).toBeLessThan(1500);
  expect(available("echo.read")).toEqual([nodeID("healthy")]);

  // The relay back: its client reconnects (nats.js tries every 2 s), answers its subject again
  // and is asked for its INFO, long before its next heartbeat (30 s) would bring it back.
  await relay.listen();
  const restoredAt = Date.now();
  await pollUntil(async () => available("echo.read").length === 2, 8000, "the cut-off replica back in the rotation");
  expect(Date.now() - restoredAt).toBeLessThan(8000);
  await expect(caller.call("echo.write", {}, { nodeID: nodeID("healthy") })).resolves.toBe(nodeID("healthy"));
}, 30_000);
