/** A node's messages without a broker (services/mqtt/nodes.ts): those that wait go together, in order, each settled before it resolves. */
import type { UMetric } from "sparkplug-payload/lib/sparkplugbpayload";
import type { SparkplugMessage, SparkplugNode } from "../../../services/pipelines/contract";
import { HEARD_EVERY_MS, SparkplugNodes } from "../../../services/mqtt/nodes";
import type { MqttPort } from "../../../services/mqtt/port";
import { encodePayload, parseTopic } from "../../../services/mqtt/sparkplug";

const NODE: SparkplugNode = { pipeline_id: "p1", site_id: "s", plant_id: "pl", edge_node: "0a1b2c3d4e5f" };
const topic = (type: string, device?: string) => parseTopic(`spBv1.0/G/${type}/${NODE.edge_node}${device ? `/${device}` : ""}`)!;
const bytes = (seq: number, metrics: UMetric[]) => encodePayload({ timestamp: 1000, seq, metrics });

function fakePort() {
  const calls: string[] = [];
  const batches: SparkplugMessage[][] = [];
  let fail = false;
  let gate: Promise<void> = Promise.resolve();
  const port: MqttPort = {
    connect: async () => NODE,
    nodeOf: async () => NODE,
    readings: async (_id, messages) => {
      await gate;
      if (fail) throw new Error("down");
      batches.push(messages);
      calls.push(`readings ${messages.length}`);
      return messages.map(() => ({ accepted: 1, rejected: [], replayed: false }));
    },
    birth: async () => void calls.push("birth"),
    death: async () => void calls.push("death"),
    release: async () => void calls.push("release"),
    present: async () => void calls.push("present"),
    absent: async () => void calls.push("absent"),
    heard: async () => void calls.push("heard"),
    log: { info: () => undefined, warn: () => undefined },
  };
  return { port, calls, batches, setFail: (f: boolean) => (fail = f), hold: (p: Promise<void>) => (gate = p) };
}

const value = (v: number): UMetric[] => [{ name: "t", type: "Double", value: v }];

describe("a node's messages", () => {
  it("sends the messages that waited behind each other in one call, in order, a birth or death ending a group", async () => {
    const f = fakePort();
    const nodes = new SparkplugNodes(f.port, async () => undefined, { releasedByDeath: true });
    let open!: () => void;
    f.hold(new Promise<void>((r) => (open = r)));
    const settled = [
      nodes.handle(NODE, topic("NBIRTH"), bytes(0, [{ name: "bdSeq", type: "UInt64", value: 1 }, ...value(0)])),
      nodes.handle(NODE, topic("NDATA"), bytes(1, value(1))),
      nodes.handle(NODE, topic("NDATA"), bytes(2, value(2))),
      nodes.handle(NODE, topic("NDATA"), bytes(3, value(3))),
      nodes.handle(NODE, topic("NDEATH"), bytes(4, [{ name: "bdSeq", type: "UInt64", value: 1 }])),
    ];
    open();
    await Promise.all(settled);
    // On the plant's broker the node is connected from its birth to its death, and absent before its release.
    expect(f.calls).toEqual(["readings 1", "present", "birth", "readings 3", "death", "absent", "release"]);
    expect(f.batches[1]!.map((m) => m.values[0])).toEqual([1, 2, 3]);
    expect(new Set(f.batches[1]!.map((m) => m.message_id)).size).toBe(3);
  });

  it("stores the next messages while earlier ones are being stored, resolving them in order, each in one call", async () => {
    const stores: { ids: number[]; open: () => void }[] = [];
    const calls: number[][] = [];
    const port: MqttPort = {
      connect: async () => NODE,
      nodeOf: async () => NODE,
      readings: async (_id, messages) => {
        const ids = messages.map((m) => m.values[0]!);
        calls.push(ids);
        await new Promise<void>((open) => stores.push({ ids, open }));
        return messages.map(() => ({ accepted: 1, rejected: [], replayed: false }));
      },
      birth: async () => undefined,
      death: async () => undefined,
      release: async () => undefined,
      present: async () => undefined,
      absent: async () => undefined,
      heard: async () => undefined,
      log: { info: () => undefined, warn: () => undefined },
    };
    const published: string[] = [];
    const nodes = new SparkplugNodes(port, async (t) => void published.push(t), { releasedByDeath: false });
    await nodes.handle(NODE, topic("NBIRTH"), bytes(0, []));
    const resolved: number[] = [];
    const send = (i: number) => nodes.handle(NODE, topic("NDATA"), bytes(i, value(i))).then(() => void resolved.push(i));
    const first = [send(1)];
    await new Promise((r) => setImmediate(r));
    const second = [send(2), send(3)];
    await new Promise((r) => setImmediate(r));
    // The second call went while the first was still under way.
    expect(calls).toEqual([[1], [2, 3]]);
    // Stored out of order, settled in order.
    stores[1]!.open();
    await new Promise((r) => setImmediate(r));
    expect(resolved).toEqual([]);
    stores[0]!.open();
    await Promise.all([...first, ...second]);
    expect(resolved).toEqual([1, 2, 3]);
    expect(published).toEqual([]);
  });

  it("on the plant's broker, says a node present once however often it is born, and absent when its lease goes elsewhere", async () => {
    const f = fakePort();
    const nodes = new SparkplugNodes(f.port, async () => undefined, { releasedByDeath: true });
    await nodes.handle(NODE, topic("NBIRTH"), bytes(0, [{ name: "bdSeq", type: "UInt64", value: 1 }]));
    await nodes.handle(NODE, topic("NBIRTH"), bytes(0, [{ name: "bdSeq", type: "UInt64", value: 1 }]));
    nodes.forget(NODE.pipeline_id);
    await new Promise((r) => setImmediate(r));
    expect(f.calls).toEqual(["present", "birth", "birth", "absent"]);
    // The front door tells its connections itself: a birth there says nothing of presence.
    const door = fakePort();
    await new SparkplugNodes(door.port, async () => undefined, { releasedByDeath: false }).handle(NODE, topic("NBIRTH"), bytes(0, []));
    expect(door.calls).toEqual(["birth"]);
  });

  it("rejects the messages of a group that could not be stored, leaving the session as it was for their redelivery", async () => {
    const f = fakePort();
    const published: string[] = [];
    const nodes = new SparkplugNodes(f.port, async (t) => void published.push(t), { releasedByDeath: false });
    await nodes.handle(NODE, topic("NBIRTH"), bytes(0, []));
    f.setFail(true);
    await expect(nodes.handle(NODE, topic("NDATA"), bytes(1, value(1)))).rejects.toThrow("down");
    f.setFail(false);
    // Sent again: seq 1 still follows the birth, so no rebirth is asked.
    await nodes.handle(NODE, topic("NDATA"), bytes(1, value(1)));
    expect(published).toEqual([]);
    expect(f.calls).toEqual(["birth", "readings 1"]);
  });

  it("writes heart_beats.gateway between birth and death at most once every HEARD_EVERY_MS, and releases after what came before", async () => {
    const f = fakePort();
    const nodes = new SparkplugNodes(f.port, async () => undefined, { releasedByDeath: false });
    let now = 1_000_000;
    const spy = jest.spyOn(Date, "now").mockImplementation(() => now);
    try {
      await nodes.handle(NODE, topic("NBIRTH"), bytes(0, []));
      await nodes.handle(NODE, topic("NDATA"), bytes(1, value(1)));
      now += HEARD_EVERY_MS;
      await nodes.handle(NODE, topic("NDATA"), bytes(2, value(2)));
      now += 1;
      await nodes.handle(NODE, topic("NDATA"), bytes(3, value(3)));
      await nodes.released(NODE);
    } finally {
      spy.mockRestore();
    }
    expect(f.calls).toEqual(["birth", "readings 1", "readings 1", "heard", "readings 1", "release"]);
  });
});
