/**
 * A NATS node that freezes (SIGSTOP: its sockets stay open and it answers nothing, as a hung node
 * or a machine lost without a reset): the brokers connected to it notice by their pings
 * (lib/streams/jetstream.ts NATS_LIVENESS) and reconnect to another node of the cluster, so their
 * calls answer again within seconds; with the client's defaults it took minutes.
 */
import { randomBytes } from "node:crypto";
import { ServiceBroker, type ServiceSchema } from "moleculer";
import type { NatsConnection } from "nats";
import { readConfig } from "../../lib/config";
import { brokerOptions } from "../../moleculer.config";
import { startNatsCluster, type NatsCluster } from "../helpers/nats-cluster";
import { pollUntil } from "../helpers/cluster";

jest.setTimeout(120_000);

const ns = `test-frozen-${randomBytes(4).toString("hex")}`;
let nats: NatsCluster;
const brokers: ServiceBroker[] = [];

const echo: ServiceSchema = {
  name: "echo",
  actions: {
    hello: {
      readOnly: true,
      handler() {
        return "hello";
      },
    },
  },
};

function broker(name: string, schema?: ServiceSchema): ServiceBroker {
  const b = new ServiceBroker({ ...brokerOptions(readConfig({ TRANSPORTER: nats.url, NAMESPACE: ns, NODE_ID: `${ns}-${name}`, LOG_LEVEL: "fatal" })), metrics: false });
  if (schema) b.createService(schema);
  brokers.push(b);
  return b;
}

/** "127.0.0.1:<port>" of the NATS node a broker's transporter is connected to. */
const serverOf = (b: ServiceBroker): string => (b.transit!.tx as unknown as { client: NatsConnection }).client.getServer();

beforeAll(async () => {
  nats = await startNatsCluster({ size: 3 });
  await nats.ready();
});

afterAll(async () => {
  await Promise.all(brokers.map((b) => b.stop().catch(() => undefined)));
  await nats?.stop();
});

it("answers again within 25 s after the node a caller is connected to freezes, through another node", async () => {
  const callee = broker("callee", echo);
  const caller = broker("caller");
  await Promise.all([callee.start(), caller.start()]);
  await pollUntil(async () => (await caller.call("echo.hello").catch(() => "")) === "hello", 20_000, "the caller to reach echo");

  const before = serverOf(caller);
  const frozen = nats.urls.findIndex((u) => u.endsWith(`//${before}`));
  expect(frozen).toBeGreaterThanOrEqual(0);
  await nats.freeze(frozen);
  const at = Date.now();
  try {
    // Calls with a short timeout, one after another, until one is answered.
    await pollUntil(async () => (await caller.call("echo.hello", {}, { timeout: 1000 }).catch(() => "")) === "hello", 60_000, "an answer after the freeze");
    const answeredMs = Date.now() - at;
    console.log(`nats-frozen: the caller answered again ${answeredMs} ms after its node froze (moved from ${before} to ${serverOf(caller)})`);
    expect(serverOf(caller)).not.toBe(before);
    expect(answeredMs).toBeLessThan(25_000);
  } finally {
    await nats.thaw(frozen);
  }
});
