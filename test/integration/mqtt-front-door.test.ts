/**
 * The MQTT front door (docs/sparkplug.md) against the real thing: the services in a process of
 * their own (aedes is an ES module, which Jest's loader does not load), the embedded broker on a
 * free port, Sparkplug B edge nodes over real MQTT connections, and the readings, statuses,
 * alerts and emails they lead to.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import { Client } from "pg";
import { freePort, pollUntil, REPO_ROOT, startCluster, type Cluster } from "../helpers/cluster";
import type { TestNode } from "../helpers/node";
import { startSmtp, type TestSmtp } from "../helpers/smtp";
import { HEARD_EVERY_MS } from "../../services/mqtt/nodes";
import { encodePayload } from "../../services/mqtt/sparkplug";
import { EdgeNode, edgeNodeOfMac } from "../helpers/sparkplug";
import { idFrom, makePlace, makeUser, watcherBody, gatewayBody } from "../e2e/alerting-fixtures";
import { createEdge, edgeBody, eventually, hierarchy, type Hierarchy } from "../e2e/pipelines-fixtures";

let cluster: Cluster;
let smtp: TestSmtp;
let db: Client;
let url: string;
let h: Hierarchy;
let gw: { id: string; ingest_key: string; edgeNode: string };
const open: EdgeNode[] = [];

async function edge(t: Pick<TestNode, "http">, body: ReturnType<typeof edgeBody>) {
  const created = await createEdge(t as TestNode, body);
  return { ...created, edgeNode: edgeNodeOfMac(body.settings.mac_address) };
}

async function connect(pipeline: { id: string; ingest_key: string; edgeNode: string }, bdSeq = 0): Promise<EdgeNode> {
  const node = await EdgeNode.connect({ url, username: pipeline.id, password: pipeline.ingest_key, edgeNode: pipeline.edgeNode, bdSeq, reconnect: false });
  open.push(node);
  return node;
}

interface Row {
  monitor_id: string;
  tag_id: string;
  ts: string;
  value: number;
}

async function readingsOf(pipeline_id: string): Promise<Row[]> {
  const { rows } = await db.query<Row>(
    `SELECT monitor_id::text, tag_id, (extract(epoch FROM ts) * 1000)::bigint::text AS ts, value
       FROM pipelines.readings WHERE pipeline_id = $1 ORDER BY ts, tag_id`,
    [pipeline_id],
  );
  return rows;
}

async function statusOf(pipeline_id: string): Promise<string> {
  const { rows } = await db.query<{ status: string }>(`SELECT status FROM pipelines.pipelines WHERE pipeline_id = $1`, [pipeline_id]);
  return rows[0]!.status;
}

/** Whether a replica holds the pipeline's node as connected (lib/presence.ts: a shared advisory lock, what a stop asks). */
async function nodeHeld(pipeline_id: string): Promise<boolean> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND classid = (hashtext('sparkplug-node')::bigint & 4294967295)::oid AND objid = (hashtext($1)::bigint & 4294967295)::oid`,
    [pipeline_id],
  );
  return rows[0]!.n > 0;
}

/** The resident memory of the process the front door runs in, in bytes. */
function rssOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]!;
  return Number(kb) * 1024;
}

beforeAll(async () => {
  smtp = await startSmtp();
  const port = await freePort();
  url = `mqtt://127.0.0.1:${port}`;
  cluster = await startCluster({
    processes: [["api", "auth", "config", "pipelines", "alerting", "notifier", "mqtt"]],
    env: { MQTT_PORT: String(port), SMTP_URL: smtp.url },
  });
  await pollUntil(
    () =>
      new Promise<boolean>((resolve) => {
        const socket = net.connect(port, "127.0.0.1", () => resolve(socket.end() !== undefined));
        socket.once("error", () => resolve(false));
      }),
    30_000,
    "the MQTT front door",
    [cluster.process("mqtt")],
  );
  db = new Client({ connectionString: cluster.db!.url });
  await db.connect();
  h = await hierarchy(cluster as unknown as TestNode, "Mqtt");
  gw = await edge(cluster, edgeBody(h, [h.pump.id, h.fan.id]));
}, 180_000);

afterAll(async () => {
  await Promise.all(open.map((n) => n.close().catch(() => undefined)));
  await db?.end();
  await cluster?.stop();
  await smtp?.stop();
});

describe("the MQTT front door", () => {
  it("publishes its STATE, retained, to a node that subscribes", async () => {
    const node = await connect(gw);
    await eventually(async () => node.commands.length, (n) => n > 0, 50, 100);
    const state = node.commands.find((c) => c.topic.startsWith("spBv1.0/STATE/"));
    expect(state?.topic).toBe("spBv1.0/STATE/ims");
    expect(state?.state).toMatchObject({ online: true });
    await node.close();
  });

  it("refuses a wrong ingest key at CONNECT", async () => {
    await expect(EdgeNode.connect({ url, username: gw.id, password: "pk_wrong", edgeNode: gw.edgeNode, reconnect: false })).rejects.toThrow(
      /Bad username or password/,
    );
    await expect(EdgeNode.connect({ url, username: h.pump.id, password: gw.ingest_key, edgeNode: gw.edgeNode, reconnect: false })).rejects.toThrow(
      /Bad username or password/,
    );
  });

  it("stores a node's births and 1,000 data messages by alias exactly (values, milliseconds), seq wrapping past 255", async () => {
    const node = await connect(gw);
    const t0 = Date.now() - 120_000;
    await node.nbirth();
    await node.send(
      "DBIRTH",
      [
        { name: "Pressure", alias: 1, type: "Double", value: 1.5, timestamp: t0 - 2 },
        { name: "Flow", alias: 2, type: "Int32", value: 7, timestamp: t0 - 2 },
      ],
      { device: "1" },
    );
    await node.send("DBIRTH", [{ name: "Vibration", alias: 3, type: "Boolean", value: true }], { device: "2", timestamp: t0 - 1 });
    for (let i = 0; i < 1000; i++) {
      await node.send(
        "DDATA",
        [
          { alias: 1, type: "Double", value: i + 0.125, timestamp: t0 + i },
          { alias: 2, type: "Int32", value: 1000 - i },
        ],
        { device: "1", timestamp: t0 + i },
      );
    }
    const rows = await readingsOf(gw.id);
    const expected: Row[] = [
      { monitor_id: h.pump.id, tag_id: "flow", ts: String(t0 - 2), value: 7 },
      { monitor_id: h.pump.id, tag_id: "pressure", ts: String(t0 - 2), value: 1.5 },
      { monitor_id: h.fan.id, tag_id: "vib", ts: String(t0 - 1), value: 1 },
    ];
    for (let i = 0; i < 1000; i++) {
      expected.push({ monitor_id: h.pump.id, tag_id: "flow", ts: String(t0 + i), value: 1000 - i });
      expected.push({ monitor_id: h.pump.id, tag_id: "pressure", ts: String(t0 + i), value: i + 0.125 });
    }
    expect(rows).toHaveLength(2003);
    expect(rows).toEqual(expected);
    // In order and nothing lost: no rebirth was asked.
    expect(node.commands.filter((c) => c.topic.includes("/NCMD/"))).toEqual([]);
    await node.close();
  }, 120_000);

  it("drops and logs a publish under another pipeline's edge node", async () => {
    const other = await edge(cluster, edgeBody(h, []));
    const node = await connect(gw);
    await node.client.publishAsync(`spBv1.0/Plant1/NBIRTH/${other.edgeNode}`, Buffer.from([]), { qos: 1 });
    await node.client.publishAsync(`spBv1.0/Plant1/DDATA/${other.edgeNode}/1`, Buffer.from([]), { qos: 1 });
    // Acknowledged (the connection stays), never stored, said in the log.
    expect(node.client.connected).toBe(true);
    await pollUntil(async () => cluster.process("mqtt").output().includes(`to "spBv1.0/Plant1/DDATA/${other.edgeNode}/1" dropped`), 5000, "the log line");
    expect(await readingsOf(other.id)).toEqual([]);
    await node.close();
  });

  it("asks for a rebirth on a seq gap and on an unknown alias, keeping what it could name", async () => {
    const node = await connect(gw);
    const t0 = Date.now() - 60_000;
    const before = (await readingsOf(gw.id)).length;
    await node.nbirth();
    await node.send("DBIRTH", [{ name: "Pressure", alias: 1, type: "Double", value: 2, timestamp: t0 }], { device: "1" });
    node.seq += 3;
    await node.send("DDATA", [{ alias: 1, type: "Double", value: 3, timestamp: t0 + 1 }], { device: "1" });
    const gap = await node.rebirthAsked();
    expect(gap.topic).toBe(`spBv1.0/Plant1/NCMD/${gw.edgeNode}`);
    expect((await readingsOf(gw.id)).length).toBe(before + 2);

    const seen = node.commands.length;
    await node.nbirth();
    await node.send("DBIRTH", [{ name: "Pressure", alias: 1, type: "Double", value: 4, timestamp: t0 + 2 }], { device: "1" });
    await node.send("DDATA", [{ alias: 99, type: "Double", value: 5, timestamp: t0 + 3 }, { alias: 1, type: "Double", value: 6, timestamp: t0 + 4 }], { device: "1" });
    await node.rebirthAsked(seen);
    expect((await readingsOf(gw.id)).length).toBe(before + 4);
    await node.close();
  });

  it("turns a started pipeline error when the node dies by its will, and running at its next birth", async () => {
    const started = await cluster.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: "start" } });
    expect(started.status).toBe(200);
    expect(await statusOf(gw.id)).toBe("starting");
    const node = await connect(gw, 5);
    await node.nbirth();
    expect(await statusOf(gw.id)).toBe("running");
    const { rows: actions } = await db.query<{ status: string }>(`SELECT status FROM pipelines.pipeline_actions WHERE pipeline_id = $1`, [gw.id]);
    expect(actions.map((a) => a.status)).toEqual(["completed"]);

    node.cut();
    expect(await eventually(() => statusOf(gw.id), (s) => s === "error", 100, 100)).toBe("error");

    const again = await connect(gw, 6);
    await again.nbirth();
    expect(await statusOf(gw.id)).toBe("running");
    // A clean NDEATH does the same.
    await again.ndeath();
    expect(await eventually(() => statusOf(gw.id), (s) => s === "error", 50, 100)).toBe("error");
    await again.close();
  });

  it("stores the messages that wait behind each other together, in order, each once, a redelivery not doubled", async () => {
    const node = await connect(gw);
    const t0 = Date.now() - 90_000;
    const before = (await readingsOf(gw.id)).length;
    await node.nbirth();
    await node.send("DBIRTH", [{ name: "Pressure", alias: 1, type: "Double", value: 0, timestamp: t0 - 1 }], { device: "1" });
    // Sent without waiting for each PUBACK: they wait behind each other at the front door.
    await Promise.all(Array.from({ length: 60 }, (_, i) => node.send("DDATA", [{ alias: 1, type: "Double", value: i, timestamp: t0 + i }], { device: "1", timestamp: t0 + i })));
    const rows = (await readingsOf(gw.id)).filter((r) => Number(r.ts) >= t0 && Number(r.ts) < t0 + 60);
    expect(rows.map((r) => r.value)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(node.commands.filter((c) => c.topic.includes("/NCMD/"))).toEqual([]);

    // The 10th message again, byte for byte (a QoS 1 redelivery after a lost PUBACK): acknowledged, stored once.
    const again = encodePayload({ timestamp: t0 + 10, seq: 12, metrics: [{ alias: 1, type: "Double", value: 10, timestamp: t0 + 10 }] });
    await node.client.publishAsync(node.topic("DDATA", "1"), again, { qos: 1 });
    expect((await readingsOf(gw.id)).length).toBe(before + 61);
    await node.close();
  });

  it("acknowledges each of many messages sent back to back once it is stored, in the order sent, each stored once", async () => {
    const node = await connect(gw);
    const t0 = Date.now() - 60_000;
    const n = 300;
    await node.nbirth();
    await node.send("DBIRTH", [{ name: "Pressure", alias: 1, type: "Double", value: 0 }, { name: "Flow", alias: 2, type: "Int32", value: 0 }], { device: "1", timestamp: t0 - 1 });
    // All in flight at once: more than a connection may leave unacknowledged, so the front door also stops reading for a while.
    const acked: number[] = [];
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        node
          .send("DDATA", [{ alias: 1, type: "Double", value: i + 0.5, timestamp: t0 + i }, { alias: 2, type: "Int32", value: i, timestamp: t0 + i }], { device: "1", timestamp: t0 + i })
          .then(async () => {
            acked.push(i);
            // Stored before its PUBACK: its readings are there when the node hears it.
            const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM pipelines.readings WHERE pipeline_id = $1 AND ts = to_timestamp($2::bigint / 1000.0)`, [gw.id, t0 + i]);
            if (Number(rows[0]!.n) !== 2) throw new Error(`message ${i} acknowledged with ${rows[0]!.n} readings stored`);
          }),
      ),
    );
    expect(acked).toEqual(Array.from({ length: n }, (_, i) => i));
    const rows = (await readingsOf(gw.id)).filter((r) => Number(r.ts) >= t0 && Number(r.ts) < t0 + n);
    const expected: Row[] = [];
    for (let i = 0; i < n; i++) {
      expected.push({ monitor_id: h.pump.id, tag_id: "flow", ts: String(t0 + i), value: i });
      expected.push({ monitor_id: h.pump.id, tag_id: "pressure", ts: String(t0 + i), value: i + 0.5 });
    }
    expect(rows).toEqual(expected);
    expect(node.commands.filter((c) => c.topic.includes("/NCMD/"))).toEqual([]);
    await node.close();
  }, 120_000);

  it("keeps heart_beats.gateway current while the node publishes, not at every message", async () => {
    const node = await connect(gw);
    const heard = async () => {
      const { rows } = await db.query<{ gateway: string | null }>(`SELECT heart_beats ->> 'gateway' AS gateway FROM pipelines.pipelines WHERE pipeline_id = $1`, [gw.id]);
      return Number(rows[0]!.gateway ?? 0);
    };
    await node.nbirth();
    await node.send("DBIRTH", [{ name: "Pressure", alias: 1, type: "Double", value: 0 }], { device: "1" });
    const born = await heard();
    await node.send("DDATA", [{ alias: 1, type: "Double", value: 1 }], { device: "1" });
    expect(await heard()).toBe(born);
    await new Promise((r) => setTimeout(r, HEARD_EVERY_MS + 100));
    await node.send("DDATA", [{ alias: 1, type: "Double", value: 2 }], { device: "1" });
    expect(await heard()).toBeGreaterThanOrEqual(born + HEARD_EVERY_MS);
    await node.close();
  }, 30_000);

  it("completes a pending stop once the node is released (its connection closed): the pipeline is stopped", async () => {
    const started = await cluster.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: "start" } });
    expect(started.status).toBe(200);
    const node = await connect(gw, 7);
    await node.nbirth();
    expect(await statusOf(gw.id)).toBe("running");
    const stopped = await cluster.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: "stop" } });
    expect(stopped.status).toBe(200);
    expect(await statusOf(gw.id)).toBe("stopping");
    // Still connected: still pending.
    await node.send("NDATA", []);
    expect(await statusOf(gw.id)).toBe("stopping");
    await node.close();
    expect(await eventually(() => statusOf(gw.id), (s) => s === "stopped", 100, 100)).toBe("stopped");
    const { rows } = await db.query<{ action: string; status: string }>(
      `SELECT action, status FROM pipelines.pipeline_actions WHERE pipeline_id = $1 ORDER BY issued_at DESC LIMIT 1`,
      [gw.id],
    );
    expect(rows[0]).toEqual({ action: "stop", status: "completed" });
  });

  it("does not complete a pending stop when the connection closed because a message was not stored", async () => {
    await cluster.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: "start" } });
    const node = await connect(gw, 8);
    await node.nbirth();
    await node.send("DBIRTH", [{ name: "Pressure", alias: 1, type: "Double", value: 0 }], { device: "1" });
    expect(await statusOf(gw.id)).toBe("running");
    expect((await cluster.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: "stop" } })).status).toBe(200);
    // A reading of 424242 cannot be stored: its message is not acknowledged and the front door closes the connection.
    await db.query(`CREATE FUNCTION pipelines.refuse_424242() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
    await db.query(`CREATE TRIGGER refuse_424242 BEFORE INSERT ON pipelines.readings FOR EACH ROW WHEN (NEW.value = 424242) EXECUTE FUNCTION pipelines.refuse_424242()`);
    const cut = new Promise((resolve) => node.client.stream.once("close", resolve));
    try {
      node.client.publish(node.topic("DDATA", "1"), encodePayload({ timestamp: Date.now(), seq: 1, metrics: [{ alias: 1, type: "Double", value: 424242 }] }), { qos: 1 });
      await cut;
    } finally {
      await db.query(`DROP TRIGGER refuse_424242 ON pipelines.readings`);
      await db.query(`DROP FUNCTION pipelines.refuse_424242()`);
    }
    // The node comes back: once its birth is settled, what the closed connection led to was too (a node's messages are handled in order).
    const again = await connect(gw, 9);
    await again.nbirth();
    expect(await statusOf(gw.id)).toBe("stopping");
    const latest = async () =>
      (await db.query<{ action: string; status: string }>(`SELECT action, status FROM pipelines.pipeline_actions WHERE pipeline_id = $1 ORDER BY issued_at DESC LIMIT 1`, [gw.id])).rows[0];
    expect(await latest()).toEqual({ action: "stop", status: "in_progress" });
    expect(cluster.process("mqtt").output()).toContain(`Sparkplug node ${gw.edgeNode}: connection closed after a message not stored; not a release`);
    // Its clean disconnect is the release that completes the stop.
    await again.close();
    expect(await eventually(() => statusOf(gw.id), (s) => s === "stopped", 100, 100)).toBe("stopped");
    expect(await latest()).toEqual({ action: "stop", status: "completed" });
    node.client.end(true);
  }, 60_000);

  it("closes a connection whose packet announces 100 MB at its fixed header, without holding it, and names it in one log line", async () => {
    const pid = cluster.process("mqtt").pid!;
    const before = rssOf(pid);
    const socket = net.connect(Number(new URL(url).port), "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    const named = `127.0.0.1:${socket.localPort} closed:`;
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => undefined);
    // CONNECT, remaining length 100 MiB (0x80 0x80 0x80 0x32), then as much of it as the broker takes.
    let sent = 0;
    socket.write(Buffer.from([0x10, 0x80, 0x80, 0x80, 0x32]));
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    while (sent < 100 * 1024 * 1024 && !socket.destroyed) {
      sent += chunk.length;
      if (!socket.write(chunk)) await Promise.race([new Promise((r) => socket.once("drain", r)), closed]);
    }
    await closed;
    expect(rssOf(pid) - before).toBeLessThan(40 * 1024 * 1024);
    await pollUntil(async () => cluster.process("mqtt").output().includes(named), 10_000, "the log line");
    const lines = cluster.process("mqtt").output().split("\n").filter((l) => l.includes(named));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/MQTT connection from (::ffff:)?127\.0\.0\.1:\d+ closed: a packet of 104857605 bytes announced, over MQTT_MAX_PACKET_BYTES \(4194304\)/);
  }, 60_000);

  it("takes a birth of 10,000 metrics (1.1 MB) in one packet", async () => {
    const node = await connect(gw, 10);
    const t0 = Date.now() - 45_000;
    await node.nbirth();
    const metrics = Array.from({ length: 9999 }, (_, i) => ({
      name: `Line 3/Compressor ${i}/Discharge Temperature`,
      alias: i + 10,
      type: "Double" as const,
      value: i * 1.5,
      properties: { engUnit: { type: "String" as const, value: "degC" }, engHigh: { type: "Double" as const, value: 150 } },
    }));
    await node.send("DBIRTH", [{ name: "Pressure", alias: 1, type: "Double", value: 77.5, timestamp: t0 }, ...metrics], { device: "1" });
    expect(node.client.connected).toBe(true);
    expect((await readingsOf(gw.id)).filter((r) => r.ts === String(t0))).toEqual([{ monitor_id: h.pump.id, tag_id: "pressure", ts: String(t0), value: 77.5 }]);
    await node.close();
  }, 60_000);

  it("completes a stop at once when no node of the pipeline is connected; a gateway never connected over MQTT still acknowledges its own", async () => {
    const node = await connect(gw, 11);
    expect(await nodeHeld(gw.id)).toBe(true);
    await node.close();
    await pollUntil(async () => !(await nodeHeld(gw.id)), 10_000, "the node's disconnection");
    const latest = async (id: string) =>
      (await db.query<{ action: string; status: string }>(`SELECT action, status FROM pipelines.pipeline_actions WHERE pipeline_id = $1 ORDER BY issued_at DESC LIMIT 1`, [id])).rows[0];

    expect((await cluster.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: "start" } })).body).toBe("Action is being queued");
    const stopped = await cluster.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: "stop" } });
    expect(stopped.status).toBe(200);
    expect(stopped.body).toBe("Action is being queued");
    expect(await statusOf(gw.id)).toBe("stopped");
    expect(await latest(gw.id)).toEqual({ action: "stop", status: "completed" });

    // Its gateway polls its actions over HTTP: nothing here can tell it is gone, so its stop waits for its acknowledgement.
    const polled = await edge(cluster, edgeBody(h, []));
    expect((await cluster.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [polled.id], action: "stop" } })).status).toBe(200);
    expect(await statusOf(polled.id)).toBe("stopping");
    expect(await latest(polled.id)).toEqual({ action: "stop", status: "in_progress" });
  });

  it("names a device's metrics by the monitor registered now, right after the pipeline's update", async () => {
    const h2 = await hierarchy(cluster as unknown as TestNode, "Renamed");
    const body = edgeBody(h2, [h2.pump.id]);
    const moved = await edge(cluster, body);
    const node = await connect(moved);
    const t0 = Date.now() - 20_000;
    await node.nbirth();
    await node.send("DBIRTH", [{ name: "Pressure", type: "Double", value: 1, timestamp: t0 }], { device: "1" });
    expect((await readingsOf(moved.id)).map((r) => r.tag_id)).toEqual(["pressure"]);
    // Slave 1 is the fan now: its metric names are the fan's tags from the next message on.
    const registration = [{ monitor_id: h2.fan.id, slave_id: "1", registered_by_asset: false }];
    const put = await cluster.http("PUT", `/_config/pipelines/edge-server/${moved.id}`, { body: { pipeline_name: body.pipeline_name, settings: body.settings, tags: body.tags, registration } });
    expect(put.body).toBe("Gateway updated successfully");
    await node.send("DBIRTH", [{ name: "Vibration", type: "Double", value: 2, timestamp: t0 + 1 }], { device: "1" });
    expect(await readingsOf(moved.id)).toEqual([
      { monitor_id: h2.pump.id, tag_id: "pressure", ts: String(t0), value: 1 },
      { monitor_id: h2.fan.id, tag_id: "vib", ts: String(t0 + 1), value: 2 },
    ]);
    await node.close();
  });

  it("opens the alert and sends its email once for a reading over a watcher's threshold sent over MQTT", async () => {
    const place = await makePlace(cluster.http, "mq");
    const created = await createEdge(cluster as unknown as TestNode, gatewayBody(place, "MQTT gateway", "Condition"));
    const { rows } = await db.query<{ mac_address: string }>(`SELECT mac_address FROM pipelines.pipelines WHERE pipeline_id = $1`, [created.id]);
    const gateway = { ...created, edgeNode: edgeNodeOfMac(rows[0]!.mac_address) };
    await makeUser(cluster.http, { username: "oncall-mqtt@example.com", user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id });
    const body = watcherBody(place, gateway.id, { watcher_name: "MQTT night watch" }, { notifyTo: { email: true, sms: false, whatsapp: false, users: ["oncall-mqtt@example.com"] } });
    const watcher = await cluster.http("POST", "/_alerting/watchers", { body });
    expect(watcher.status).toBe(200);
    idFrom(watcher.body);

    const node = await connect(gateway);
    const t0 = Date.now() - 30_000;
    await node.nbirth();
    await node.send("DBIRTH", [{ name: "Temperature", alias: 1, type: "Float", value: 40, timestamp: t0 - 1000 }], { device: "1" });
    for (const [i, value] of [84, 85, 86, 87.25].entries()) await node.send("DDATA", [{ alias: 1, type: "Double", value, timestamp: t0 + i * 1000 }], { device: "1" });

    const list = async () =>
      (await cluster.http<{ state: string; watcher_name: string }[]>("GET", `/_alerting/alerts/_list?function_id=${place.function_id}&is_hidden=0`)).body;
    const alerts = await eventually(list, (l) => Array.isArray(l) && l.length === 1, 100, 100);
    expect(alerts[0]).toMatchObject({ state: "active", watcher_name: "MQTT night watch" });
    const [mail] = await smtp.waitFor(1, { to: "oncall-mqtt@example.com", timeoutMs: 20_000 });
    expect(mail!.text).toContain("Value: 87.25 C (threshold >= 80 C)");
    await new Promise((r) => setTimeout(r, 1000));
    expect(smtp.received.filter((m) => m.to.includes("oncall-mqtt@example.com"))).toHaveLength(1);
    await node.close();
  }, 60_000);

  it("is fed by the simulator as a Sparkplug edge node (npm run simulate -- --mqtt), which dies cleanly when stopped", async () => {
    const body = edgeBody(h, [h.meter.id], { function_enabled_in_registration: true });
    const sim = await edge(cluster, body);
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/simulate.ts", "--mqtt", "--pipeline", sim.id, "--key", sim.ingest_key, "--url", cluster.baseUrl, "--broker", url, "--rate", "5"], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    try {
      await pollUntil(async () => (await readingsOf(sim.id)).some((r) => r.tag_id === "kw"), 30_000, `the simulator's readings\n${output}`);
      expect(new Set((await readingsOf(sim.id)).map((r) => r.tag_id))).toEqual(new Set(["kwh", "kw"]));
    } finally {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    expect(output).toContain("died cleanly");
  }, 60_000);
});
