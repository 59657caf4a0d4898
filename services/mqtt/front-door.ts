/**
 * The MQTT front door (docs/sparkplug.md): an embedded MQTT 3.1.1 broker (aedes) for Sparkplug
 * gateways. A connection is its pipeline (username: the pipeline id, password: its ingest key,
 * checked as `/_ingest` checks it); it publishes under its own edge node only, and subscribes to
 * that and to the hosts' STATE. A message is settled (stored, its birth or death applied) before
 * its PUBACK, which acks.ts writes, in order, while aedes reads on.
 */
import net from "node:net";
import { once } from "node:events";
import type { Aedes, AuthenticateError, Client, PublishPacket } from "aedes" with { "resolution-mode": "import" };
import type { SparkplugNode } from "../pipelines/contract";
import { Acknowledgements } from "./acks";
import { MSG } from "./messages";
import { SparkplugNodes } from "./nodes";
import { guardSocket, type PacketSizes } from "./packet-guard";
import type { MqttPort } from "./port";
import { mayNodeSubscribe, NAMESPACE, NODE_PUBLISHES, parseTopic } from "./sparkplug";

export interface FrontDoor {
  port: number;
  close(): Promise<void>;
}

/** CONNACK's return codes (MQTT 3.1.1, 3.2.2.3). */
const BAD_USERNAME_OR_PASSWORD = 4;
const SERVER_UNAVAILABLE = 3;
/** A connection's CONNECT must have arrived this soon (aedes's own default is 30 s); until it is accepted, MQTT_MAX_PACKET_BYTES bounds what it sends. */
const CONNECT_WITHIN_MS = 10_000;

const refusal = (message: string, returnCode: number): AuthenticateError => Object.assign(new Error(message), { returnCode });

/** The server's own publishes, the only ones forwarded to gateways: the host's STATE and its commands. */
function isHostTopic(topic: string): boolean {
  const [ns, group, type] = topic.split("/");
  return ns === NAMESPACE && (group === "STATE" || type === "NCMD" || type === "DCMD");
}

/**
 * The broker on `port`, or null when it cannot run here (the port taken, aedes not loadable):
 * the log says so in one line and the rest of the service runs.
 */
export async function openFrontDoor(port: MqttPort, opts: { port: number; hostId: string; maxPacketBytes: number }): Promise<FrontDoor | null> {
  let aedes: Aedes;
  try {
    // aedes 1.x is an ES module: loaded at run time, which tsx does (Jest's module loader does not).
    const { Aedes } = await import("aedes");
    aedes = await Aedes.createBroker({ connectTimeout: CONNECT_WITHIN_MS });
  } catch (err) {
    port.log.warn(MSG.frontDoorUnavailable(err instanceof Error ? err.message : String(err)));
    return null;
  }
  const clients = new WeakMap<Client, SparkplugNode>();
  const guards = new WeakMap<object, PacketSizes>();
  /** Connections closed because a message of theirs was not stored: no release (docs/sparkplug.md#stopping). */
  const storeFailed = new WeakSet<Client>();
  const publish = (topic: string, payload: Buffer, retain = false) =>
    new Promise<void>((resolve, reject) =>
      aedes.publish({ cmd: "publish", topic, payload, qos: 1, retain, dup: false }, (err) => (err ? reject(err) : resolve())),
    );
  const nodes = new SparkplugNodes(port, publish, { releasedByDeath: false });
  const acks = new Acknowledgements();

  /** The clients whose node is present (connected, docs/sparkplug.md#stopping): absent once, when they close. */
  const present = new WeakSet<Client>();
  const absent = (client: Client, node: SparkplugNode): Promise<void> =>
    present.delete(client) ? port.absent(node.pipeline_id).catch((err: unknown) => port.log.warn(MSG.absentFailed(node.edge_node, String(err)))) : Promise.resolve();

  aedes.authenticate = (client, username, password, done) => {
    const accepted = async (node: SparkplugNode) => {
      present.add(client);
      // Whichever way the connection ends, aedes's clientDisconnect or not (a close before the CONNACK).
      client.conn.once("close", () => void absent(client, node));
      await port.present(node.pipeline_id);
      clients.set(client, node);
      guards.get(client.conn)?.accept();
    };
    const unavailable = (err: unknown) => done(refusal(err instanceof Error ? err.message : "pipelines unavailable", SERVER_UNAVAILABLE), false);
    port.connect(username ?? "", password?.toString("utf8") ?? "").then((node) => {
      if (!node) {
        port.log.warn(MSG.connectRefused(username ?? ""));
        return done(refusal("Bad username or password", BAD_USERNAME_OR_PASSWORD), false);
      }
      accepted(node).then(() => done(null, true), unavailable);
    }, unavailable);
  };

  let closing = false;
  aedes.authorizePublish = (client, packet: PublishPacket, done) => {
    if (!client) return done(null);
    // Stopping closes every connection: their wills are this replica going away, not the nodes dying.
    if (closing) return done(new Error("closing"));
    const node = clients.get(client);
    const topic = parseTopic(packet.topic);
    if (!node || !topic || topic.edge_node.toLowerCase() !== node.edge_node || !NODE_PUBLISHES.includes(topic.type)) {
      // Acknowledged and dropped (MQTT-3.3.5-2 allows either): closing would make a misconfigured gateway reconnect in a loop.
      port.log.warn(MSG.publishDropped(node?.pipeline_id ?? "?", packet.topic));
      packet.retain = false;
      return acks.settle(client, packet, Promise.resolve(), done);
    }
    packet.retain = false;
    const stored = nodes.handle(node, topic, Buffer.from(packet.payload)).catch((err: unknown) => {
      port.log.warn(MSG.storeFailed(node.edge_node, err instanceof Error ? err.message : String(err)));
      storeFailed.add(client);
      // An error closes the connection without PUBACK: the gateway sends the message again.
      throw err;
    });
    acks.settle(client, packet, stored, done);
  };

  // A node is released when its connection closes (its will, if any, queued before): a pending stop completes.
  // Not when the connection was closed because a message was not stored: the node comes back to send it
  // again, and a stop completed then would say "stopped" of a gateway still sending.
  aedes.on("clientDisconnect", (client) => {
    const node = clients.get(client);
    if (!node || closing) return;
    // Absent first: a stop queued from then on completes at once, one queued before is completed by the release.
    const gone = absent(client, node);
    if (storeFailed.has(client)) return port.log.warn(MSG.notReleased(node.edge_node));
    gone
      .then(() => nodes.released(node))
      .catch((err: unknown) => port.log.warn(MSG.releaseFailed(node.edge_node, err instanceof Error ? err.message : String(err))));
  });

  aedes.authorizeSubscribe = (client, subscription, done) => {
    const node = clients.get(client);
    if (node && mayNodeSubscribe(subscription.topic, node.edge_node)) return done(null, subscription);
    port.log.warn(MSG.subscribeRefused(node?.pipeline_id ?? "?", subscription.topic));
    done(null, null);
  };

  // Gateways' messages are for the host only: a node never receives another's (nor its own dropped ones).
  aedes.authorizeForward = (_client, packet) => (isHostTopic(packet.topic) ? packet : null);

  const server = net.createServer((socket) => {
    // Before aedes's parser sees a byte: it would hold a packet of any announced size.
    const remote = `${socket.remoteAddress ?? "?"}:${socket.remotePort ?? "?"}`;
    guards.set(socket, guardSocket(socket, opts.maxPacketBytes, (why) => port.log.warn(MSG.connectionClosed(remote, why, opts.maxPacketBytes))));
    aedes.handle(socket);
  });
  try {
    server.listen(opts.port);
    await Promise.race([once(server, "listening"), once(server, "error").then(([err]) => Promise.reject(err as Error))]);
  } catch (err) {
    aedes.close();
    const taken = (err as NodeJS.ErrnoException).code === "EADDRINUSE";
    port.log.warn(taken ? MSG.frontDoorPortTaken(opts.port) : MSG.frontDoorUnavailable(String(err)));
    return null;
  }
  const listening = (server.address() as net.AddressInfo).port;
  // Sparkplug 3.0 nodes wait for their primary host's STATE before they are born.
  await publish(`${NAMESPACE}/STATE/${opts.hostId}`, Buffer.from(JSON.stringify({ online: true, timestamp: Date.now() })), true);
  port.log.info(MSG.frontDoorListening(listening, opts.hostId));
  return {
    port: listening,
    async close() {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      await closed;
    },
  };
}
