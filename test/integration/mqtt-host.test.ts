/**
 * The Sparkplug primary host on the plant's broker (docs/sparkplug.md#a-host-on-the-plants-broker),
 * against the machine's Mosquitto (127.0.0.1:1883, TEST_MQTT_URL): two mqtt replicas in processes
 * of their own, a node publishing, the replica holding it killed (kill -9): the other takes the
 * node within 10 s, and every message the broker accepted is stored once.
 */
import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { pollUntil, startCluster, type Cluster, type ServiceProcess } from "../helpers/cluster";
import type { TestNode } from "../helpers/node";
import { EdgeNode } from "../helpers/sparkplug";
import { createEdge, edgeBody, hierarchy, type Hierarchy } from "../e2e/pipelines-fixtures";

const MQTT_URL = process.env.TEST_MQTT_URL ?? "mqtt://127.0.0.1:1883";
const HOST_ID = `ims-test-${randomBytes(3).toString("hex")}`;

let cluster: Cluster;
let db: Client;
let h: Hierarchy;
let replicas: ServiceProcess[];
let node: EdgeNode | undefined;
let pipeline_id: string;

/** The pid of the replica holding the node's lease (its lease connection is named after its pid), or null. */
async function holderPid(): Promise<number | null> {
  const { rows } = await db.query<{ application_name: string }>(
    `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database()
        AND l.classid = (hashtext('mqtt-node')::bigint & 4294967295)::oid AND l.objid = (hashtext($1)::bigint & 4294967295)::oid`,
    [node!.edgeNode],
  );
  const name = rows[0]?.application_name;
  return name ? Number(name.split(":").pop()) : null;
}

async function storedValues(pipeline_id: string): Promise<number[]> {
  const { rows } = await db.query<{ value: number }>(`SELECT value FROM pipelines.readings WHERE pipeline_id = $1 AND tag_id = 'pressure' ORDER BY value`, [pipeline_id]);
  return rows.map((r) => r.value);
}

beforeAll(async () => {
  cluster = await startCluster({ processes: [["api", "auth", "config", "pipelines"]], env: { MQTT_PORT: "0" } });
  db = new Client({ connectionString: cluster.db!.url });
  await db.connect();
  const env = { MQTT_PORT: "0", MQTT_URL, MQTT_HOST_ID: HOST_ID };
  replicas = [cluster.addProcess(["mqtt"], env), cluster.addProcess(["mqtt"], env)];
  // Both replicas up: each has its lease connection open.
  await pollUntil(
    async () => {
      const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name LIKE 'leases:mqtt-node:%' AND datname = current_database()`);
      return Number(rows[0]!.n) === 2;
    },
    90_000,
    "two mqtt replicas",
    replicas,
  );
  h = await hierarchy(cluster as unknown as TestNode, "Host");
}, 180_000);

afterAll(async () => {
  await node?.close().catch(() => undefined);
  await db?.end();
  await cluster?.stop();
});

describe("the Sparkplug host on the plant's broker", () => {
  it("publishes its STATE retained, hands a killed replica's node to the other within 10 s, and stores every message once", async () => {
    const mac = `02:${randomBytes(5).toString("hex").match(/../g)!.join(":")}`;
    const body = edgeBody(h, [h.pump.id]);
    body.settings.mac_address = mac;
    const gw = await createEdge(cluster as unknown as TestNode, body);
    node = await EdgeNode.connect({ url: MQTT_URL, group: `G${HOST_ID}`, edgeNode: mac.replace(/:/g, ""), reconnect: false });
    await pollUntil(async () => node!.commands.some((c) => c.topic === `spBv1.0/STATE/${HOST_ID}` && c.state?.online === true), 20_000, "the host's STATE online");

    const t0 = Date.now() - 60_000;
    await node.nbirth();
    await node.send("DBIRTH", [{ name: "Pressure", alias: 1, type: "Double", value: -1, timestamp: t0 - 1 }], { device: "1" });
    await pollUntil(async () => (await holderPid()) !== null, 15_000, "a replica to take the node", replicas);

    let sent = 0;
    let publishing = true;
    const publisher = (async () => {
      while (publishing) {
        await node!.send("DDATA", [{ alias: 1, type: "Double", value: sent, timestamp: t0 + sent }], { device: "1" });
        sent++;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await new Promise((r) => setTimeout(r, 3000));
    const holder = await holderPid();
    const victim = replicas.find((r) => r.pid === holder)!;
    const survivor = replicas.find((r) => r !== victim)!;
    expect(victim).toBeDefined();
    const killedAt = Date.now();
    await victim.stop("SIGKILL");
    await pollUntil(async () => (await holderPid()) === survivor.pid, 10_000, "the other replica to take the node", [survivor]);
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    await new Promise((r) => setTimeout(r, 3000));
    publishing = false;
    await publisher;

    const expected = [-1, ...Array.from({ length: sent }, (_, i) => i)];
    await pollUntil(async () => (await storedValues(gw.id)).length >= expected.length, 60_000, `${expected.length} readings stored`, [survivor]);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await storedValues(gw.id)).toEqual(expected);
    pipeline_id = gw.id;
  }, 150_000);

  it("keeps a stop pending while the node is alive, completes it at its death, and at once while it is dead", async () => {
    const status = async () => (await db.query<{ status: string }>(`SELECT status FROM pipelines.pipelines WHERE pipeline_id = $1`, [pipeline_id])).rows[0]!.status;
    const queue = async (action: string) => expect((await cluster.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [pipeline_id], action } })).body).toBe("Action is being queued");
    await queue("start");
    await node!.nbirth();
    await pollUntil(async () => (await status()) === "running", 15_000, "the birth to complete the start");
    await queue("stop");
    expect(await status()).toBe("stopping");
    await node!.ndeath();
    await pollUntil(async () => (await status()) === "stopped", 15_000, "the death to complete the stop");
    // Dead: nothing to release, the stop completes as it is queued.
    await queue("start");
    await queue("stop");
    expect(await status()).toBe("stopped");
  }, 60_000);
});
