/**
 * `npm run simulate -- --mqtt`: the gateway as a Sparkplug B edge node (docs/sparkplug.md), over
 * MQTT to the service's front door or to the plant's broker the service is a host on. Its node
 * id is its pipeline's MAC address; each registered monitor is a device named by its slave id,
 * its tags metrics named by their tag names. It waits for the host's STATE (as Sparkplug 3.0 nodes
 * do, up to STATE_WAIT_MS), is born (its will its death), sends every tag by alias `rate` times a
 * second, is born again when the host asks, and dies cleanly on Ctrl-C.
 */
import mqtt from "mqtt";
import { get as sparkplugCodec } from "sparkplug-payload";
import type { UMetric } from "sparkplug-payload/lib/sparkplugbpayload";

export interface SparkplugGateway {
  pipeline_id: string;
  key: string;
  broker: string;
  hostId: string;
  group: string;
  rate: number;
  /** The pipeline's settings.mac_address. */
  mac: string;
  devices: { slave_id: string; tags: { name: string; value: (t: number, dtS: number) => number }[] }[];
  log: (message: string) => void;
}

const STATE_WAIT_MS = 10_000;
const codec = sparkplugCodec("spBv1.0")!;
const encode = (p: Parameters<typeof codec.encodePayload>[0]) => Buffer.from(codec.encodePayload(p));

export async function simulateSparkplug(g: SparkplugGateway): Promise<void> {
  const node = g.mac.replace(/[^0-9a-f]/gi, "").toLowerCase();
  const topic = (type: string, device?: string) => `spBv1.0/${g.group}/${type}/${node}${device ? `/${device}` : ""}`;
  let bdSeq = 0;
  let seq = 0;
  const nextSeq = () => {
    const s = seq;
    seq = (seq + 1) % 256;
    return s;
  };
  const death = () => encode({ timestamp: Date.now(), metrics: [{ name: "bdSeq", type: "UInt64", value: bdSeq }] });
  const client = await mqtt.connectAsync(g.broker, {
    protocolVersion: 4,
    username: g.pipeline_id,
    password: g.key,
    clientId: `sim-${node}`,
    will: { topic: topic("NDEATH"), payload: death(), qos: 1, retain: false },
  });
  g.log(`connected to ${g.broker} as edge node ${node} (group ${g.group})`);

  let hostOnline: () => void = () => undefined;
  const online = new Promise<void>((resolve) => (hostOnline = resolve));
  client.on("message", (t, payload) => {
    if (t === `spBv1.0/STATE/${g.hostId}`) {
      if ((JSON.parse(payload.toString("utf8")) as { online?: boolean }).online) hostOnline();
      return;
    }
    const asked = codec.decodePayload(payload).metrics?.some((m) => m.name === "Node Control/Rebirth" && m.value === true);
    if (asked) {
      g.log("the host asked for a rebirth");
      void birth();
    }
  });
  await client.subscribeAsync([topic("NCMD"), `spBv1.0/STATE/${g.hostId}`], { qos: 1 });
  const waited = await Promise.race([online.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), STATE_WAIT_MS))]);
  g.log(waited ? `host ${g.hostId} is online` : `no STATE from host ${g.hostId} within ${STATE_WAIT_MS / 1000} s; born anyway`);

  // Aliases: every tag of every device, numbered from 1.
  const aliases = g.devices.map((d, i) => d.tags.map((_, j) => i * 1000 + j + 1));
  let last = Date.now();
  const metricsOf = (deviceIndex: number, now: number, named: boolean): UMetric[] =>
    g.devices[deviceIndex]!.tags.map((tag, j) => ({
      ...(named ? { name: tag.name } : {}),
      alias: aliases[deviceIndex]![j]!,
      type: "Double",
      value: tag.value(now, (now - last) / 1000),
      timestamp: now,
    }));
  const publish = (t: string, metrics: UMetric[]) => client.publishAsync(t, encode({ timestamp: Date.now(), seq: nextSeq(), metrics }), { qos: 1 });

  async function birth(): Promise<void> {
    seq = 0;
    const now = Date.now();
    await publish(topic("NBIRTH"), [
      { name: "bdSeq", type: "UInt64", value: bdSeq },
      { name: "Node Control/Rebirth", type: "Boolean", value: false },
    ]);
    for (const [i, d] of g.devices.entries()) await publish(topic("DBIRTH", d.slave_id), metricsOf(i, now, true));
    g.log(`born: bdSeq ${bdSeq}, ${g.devices.length} devices, ${g.devices.reduce((n, d) => n + d.tags.length, 0)} metrics`);
  }
  await birth();

  let sent = 0;
  const timer = setInterval(() => {
    const now = Date.now();
    void Promise.all(g.devices.map((d, i) => publish(topic("DDATA", d.slave_id), metricsOf(i, now, false))))
      .then(() => (sent += g.devices.reduce((n, d) => n + d.tags.length, 0)))
      .catch((err: unknown) => g.log(`error: ${(err as Error).message}`));
    last = now;
  }, 1000 / g.rate);
  const progress = setInterval(() => g.log(`${sent} metrics sent so far`), 30_000);

  const stop = async () => {
    clearInterval(timer);
    clearInterval(progress);
    await client.publishAsync(topic("NDEATH"), death(), { qos: 1 }).catch(() => undefined);
    bdSeq++;
    await client.endAsync().catch(() => undefined);
    g.log(`died cleanly; ${sent} metrics sent`);
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
}
