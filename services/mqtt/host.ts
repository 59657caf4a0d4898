/**
 * The Sparkplug primary host on the plant's broker (MQTT_URL; docs/sparkplug.md#a-host-on-the-plants-broker).
 *
 * Every replica subscribes to `spBv1.0/#`; each edge node is handled by the one replica holding
 * its lease (lib/lease.ts), the others keep its births and its last BUFFER_MS of messages. When
 * the holder dies, its leases are freed with its database connection and another replica takes
 * them within CLAIM_EVERY_MS, replaying what it kept in order: what the dead one had stored is
 * stored once (a message's topic and payload are its idempotency key), what it had not is stored
 * now. The replica holding the host lease publishes the host's STATE, retained, on a connection
 * of its own whose will is `online: false`.
 */
import mqtt, { type MqttClient } from "mqtt";
import { randomBytes } from "node:crypto";
import type { AppConfig } from "../../lib/config";
import { Leases } from "../../lib/lease";
import type { SparkplugNode } from "../pipelines/contract";
import { MSG } from "./messages";
import { SparkplugNodes } from "./nodes";
import type { MqttPort } from "./port";
import { NAMESPACE, NODE_PUBLISHES, parseTopic, type Topic } from "./sparkplug";

export interface PrimaryHost {
  close(): Promise<void>;
}

/** How often a replica tries the leases of the nodes no one holds: a dead replica's nodes move within this (and PostgreSQL noticing the closed socket). */
const CLAIM_EVERY_MS = 2000;
/** What a replica keeps of a node it does not hold, to replay when it takes it over. */
const BUFFER_MS = 30_000;
const BUFFER_MAX = 5000;
/** A node that named no pipeline is looked up again after this long. */
const LOOKUP_AGAIN_MS = 60_000;

interface Message {
  topic: Topic;
  payload: Buffer;
  at: number;
}

interface Seen {
  node: SparkplugNode | null;
  lookedUpAt: number;
  lookup: Promise<void> | null;
  /** The last NBIRTH and the DBIRTHs after it: aliases to replay. */
  births: Message[];
  recent: Message[];
}

const hostKey = (hostId: string) => `STATE/${hostId}`;
const stateOf = (online: boolean, timestamp: number) => Buffer.from(JSON.stringify({ online, timestamp }));

export async function startHost(port: MqttPort, cfg: AppConfig): Promise<PrimaryHost | null> {
  if (!cfg.mqttUrl || !cfg.databaseUrl) return null;
  const auth = { username: cfg.mqttUsername, password: cfg.mqttPassword };
  const stateTopic = `${NAMESPACE}/STATE/${cfg.mqttHostId}`;
  const seen = new Map<string, Seen>();
  let stateClient: MqttClient | null = null;
  let stateTs = 0;

  const client = await mqtt.connectAsync(cfg.mqttUrl, { ...auth, protocolVersion: 4, clientId: `${cfg.mqttHostId}-${randomBytes(4).toString("hex")}`, reconnectPeriod: 1000 });
  const publish = async (topic: string, payload: Buffer) => void (await client.publishAsync(topic, payload, { qos: 0 }));
  // A node on the plant's broker has no connection of ours to close: its NDEATH (or will) releases it.
  const nodes = new SparkplugNodes(port, publish, { releasedByDeath: true });
  const leases = new Leases({
    databaseUrl: cfg.databaseUrl,
    scope: "mqtt-node",
    onLost: (keys) => {
      for (const key of keys) {
        const node = seen.get(key)?.node;
        if (node) nodes.forget(node.pipeline_id);
      }
      void dropState();
    },
  });

  async function dropState(): Promise<void> {
    const was = stateClient;
    stateClient = null;
    await was?.endAsync(true).catch(() => undefined);
  }

  /** The host lease's holder: STATE online, retained, with its will. */
  async function holdState(): Promise<void> {
    stateTs = Date.now();
    stateClient = await mqtt.connectAsync(cfg.mqttUrl!, {
      ...auth,
      protocolVersion: 4,
      clientId: `${cfg.mqttHostId}-state-${randomBytes(4).toString("hex")}`,
      will: { topic: stateTopic, payload: stateOf(false, stateTs), qos: 1, retain: true },
    });
    await stateClient.publishAsync(stateTopic, stateOf(true, stateTs), { qos: 1, retain: true });
    port.log.info(MSG.hostConnected(cfg.mqttUrl!, cfg.mqttHostId));
  }

  function lookUp(edge: string, entry: Seen): void {
    if (entry.lookup || (entry.node === null && entry.lookedUpAt > 0 && Date.now() - entry.lookedUpAt < LOOKUP_AGAIN_MS)) return;
    entry.lookup = port.nodeOf(edge).then(
      (node) => {
        entry.node = node;
        entry.lookedUpAt = Date.now();
        entry.lookup = null;
        if (!node) port.log.warn(MSG.hostUnknownNode(edge));
        else void claim();
      },
      () => {
        entry.lookup = null;
      },
    );
  }

  function keep(entry: Seen, message: Message): void {
    if (message.topic.type === "NBIRTH") entry.births = [message];
    else if (message.topic.type === "DBIRTH") entry.births.push(message);
    else entry.recent.push(message);
    const oldest = message.at - BUFFER_MS;
    while (entry.recent.length > 0 && (entry.recent.length > BUFFER_MAX || entry.recent[0]!.at < oldest)) entry.recent.shift();
  }

  function handle(node: SparkplugNode, message: Message): void {
    nodes.handle(node, message.topic, message.payload).catch((err: unknown) => port.log.warn(MSG.hostStoreFailed(node.edge_node, String(err))));
  }

  let claiming: Promise<void> | null = null;
  /** Takes the leases no one holds (and the host's), replaying what was kept of each node taken. */
  function claim(): Promise<void> {
    claiming ??= (async () => {
      try {
        const wanted = [...seen].filter(([key, e]) => e.node && !leases.has(key)).map(([key]) => key);
        const hadState = leases.has(hostKey(cfg.mqttHostId));
        const held = await leases.take([...wanted, hostKey(cfg.mqttHostId)]);
        for (const key of wanted) {
          const entry = seen.get(key)!;
          if (!held.has(key) || !entry.node) continue;
          // Called in order before anything else runs: the node's queue keeps them ahead of what arrives next.
          for (const message of [...entry.births, ...entry.recent]) handle(entry.node, message);
          entry.births = [];
          entry.recent = [];
        }
        if (!hadState && held.has(hostKey(cfg.mqttHostId))) await holdState();
      } catch (err) {
        port.log.warn(MSG.hostLeasesNotTaken(String(err)));
      } finally {
        claiming = null;
      }
    })();
    return claiming;
  }

  client.on("message", (topicText, payload) => {
    if (topicText === stateTopic) {
      // Another connection's will said offline (a replica that died): the holder says online again.
      const state = JSON.parse(payload.toString("utf8")) as { online?: boolean };
      if (state.online === false && stateClient) void stateClient.publishAsync(stateTopic, stateOf(true, stateTs), { qos: 1, retain: true }).catch(() => undefined);
      return;
    }
    const topic = parseTopic(topicText);
    if (!topic || !NODE_PUBLISHES.includes(topic.type)) return;
    const edge = topic.edge_node.toLowerCase();
    let entry = seen.get(edge);
    if (!entry) {
      entry = { node: null, lookedUpAt: 0, lookup: null, births: [], recent: [] };
      seen.set(edge, entry);
    }
    const message: Message = { topic, payload: Buffer.from(payload), at: Date.now() };
    if (entry.node && leases.has(edge)) return handle(entry.node, message);
    keep(entry, message);
    if (!entry.node) lookUp(edge, entry);
  });
  await client.subscribeAsync([`${NAMESPACE}/#`], { qos: 1 });
  const timer = setInterval(() => void claim(), CLAIM_EVERY_MS);
  await claim();

  return {
    async close() {
      clearInterval(timer);
      await claiming;
      await client.endAsync().catch(() => undefined);
      // A graceful stop: offline said before the leases go, then another replica says online.
      if (stateClient) await stateClient.publishAsync(stateTopic, stateOf(false, stateTs), { qos: 1, retain: true }).catch(() => undefined);
      await dropState();
      await leases.close();
    },
  };
}
