/**
 * A Sparkplug B edge node for tests and benchmarks, over a real MQTT connection (the `mqtt`
 * package): births with aliases, data by alias, deaths, its will, and the commands it receives.
 */
import mqtt, { type MqttClient } from "mqtt";
import { get as sparkplugCodec } from "sparkplug-payload";
import type { UMetric, UPayload } from "sparkplug-payload/lib/sparkplugbpayload";

const codec = sparkplugCodec("spBv1.0")!;
export const encode = (p: UPayload): Buffer => Buffer.from(codec.encodePayload(p));
export const decode = (b: Uint8Array): UPayload => codec.decodePayload(b);

export interface EdgeNodeOptions {
  url: string;
  /** The front door's: the pipeline id and its ingest key; a plant's broker may ask for none. */
  username?: string;
  password?: string;
  group?: string;
  edgeNode: string;
  bdSeq?: number;
  /** false: the client does not reconnect by itself (a test cuts and reopens connections on purpose). */
  reconnect?: boolean;
}

export class EdgeNode {
  readonly group: string;
  readonly edgeNode: string;
  bdSeq: number;
  /** The next `seq` to send. */
  seq = 0;
  /** What it received: commands (decoded) and the hosts' STATE (JSON, as Sparkplug 3.0 sends it). */
  readonly commands: { topic: string; payload: UPayload; state?: { online: boolean; timestamp: number } }[] = [];
  private constructor(
    readonly client: MqttClient,
    opts: EdgeNodeOptions,
  ) {
    this.group = opts.group ?? "Plant1";
    this.edgeNode = opts.edgeNode;
    this.bdSeq = opts.bdSeq ?? 0;
    client.on("message", (topic, payload) =>
      this.commands.push(topic.startsWith("spBv1.0/STATE/") ? { topic, payload: {}, state: JSON.parse(payload.toString("utf8")) } : { topic, payload: decode(payload) }),
    );
  }

  /** Connects with the will (`NDEATH` with its bdSeq) and subscribes to its commands and the hosts' STATE. */
  static async connect(opts: EdgeNodeOptions): Promise<EdgeNode> {
    const group = opts.group ?? "Plant1";
    const bdSeq = opts.bdSeq ?? 0;
    const client = await mqtt.connectAsync(opts.url, {
      protocolVersion: 4,
      username: opts.username,
      password: opts.password,
      clientId: `node-${opts.edgeNode}-${Math.random().toString(16).slice(2, 8)}`,
      reconnectPeriod: opts.reconnect === false ? 0 : 1000,
      connectTimeout: 5000,
      will: { topic: `spBv1.0/${group}/NDEATH/${opts.edgeNode}`, payload: encode({ timestamp: Date.now(), metrics: [{ name: "bdSeq", type: "UInt64", value: bdSeq }] }), qos: 1, retain: false },
    });
    const node = new EdgeNode(client, opts);
    await client.subscribeAsync([`spBv1.0/${group}/NCMD/${opts.edgeNode}`, `spBv1.0/${group}/DCMD/${opts.edgeNode}/#`, "spBv1.0/STATE/+"], { qos: 1 });
    return node;
  }

  topic(type: string, device?: string): string {
    return `spBv1.0/${this.group}/${type}/${this.edgeNode}${device ? `/${device}` : ""}`;
  }

  private nextSeq(): number {
    const seq = this.seq;
    this.seq = (this.seq + 1) % 256;
    return seq;
  }

  /** QoS 1: resolves once the broker acknowledged it. */
  async send(type: string, metrics: UMetric[], opts: { device?: string; seq?: number; timestamp?: number } = {}): Promise<void> {
    const seq = opts.seq ?? this.nextSeq();
    await this.client.publishAsync(this.topic(type, opts.device), encode({ timestamp: opts.timestamp ?? Date.now(), seq, metrics }), { qos: 1 });
  }

  async nbirth(metrics: UMetric[] = []): Promise<void> {
    this.seq = 0;
    await this.send("NBIRTH", [{ name: "bdSeq", type: "UInt64", value: this.bdSeq }, { name: "Node Control/Rebirth", type: "Boolean", value: false }, ...metrics]);
  }

  async ndeath(): Promise<void> {
    await this.client.publishAsync(this.topic("NDEATH"), encode({ timestamp: Date.now(), metrics: [{ name: "bdSeq", type: "UInt64", value: this.bdSeq }] }), { qos: 1 });
  }

  /** Resolves with the first command received (after `since` of them) that asks for a rebirth. */
  async rebirthAsked(since = 0, timeoutMs = 5000): Promise<{ topic: string; payload: UPayload }> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const found = this.commands.slice(since).find((c) => c.payload.metrics?.some((m) => m.name === "Node Control/Rebirth" && m.value === true));
      if (found) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no rebirth request within ${timeoutMs} ms (commands: ${this.commands.map((c) => c.topic).join(", ")})`);
  }

  /** The socket cut, as a power failure would: the broker publishes the will. */
  cut(): void {
    this.client.stream.destroy();
    this.client.end(true);
  }

  async close(): Promise<void> {
    await this.client.endAsync();
  }
}

/** A pipeline's MAC address as its Sparkplug edge node id. */
export const edgeNodeOfMac = (mac: string): string => mac.replace(/[^0-9a-f]/gi, "").toLowerCase();
