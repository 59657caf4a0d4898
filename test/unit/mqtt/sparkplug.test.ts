/** Sparkplug B sessions without a broker (services/mqtt/sparkplug.ts): topics, births, aliases, seq, bdSeq. */
import type { UMetric } from "sparkplug-payload/lib/sparkplugbpayload";
import { decodePayload, mayNodeSubscribe, newNodeState, parseTopic, rebirthCommand, receive, type NodeState, type Topic } from "../../../services/mqtt/sparkplug";

const NODE = "0a1b2c3d4e5f";
const topic = (type: string, device?: string): Topic => parseTopic(`spBv1.0/G/${type}/${NODE}${device ? `/${device}` : ""}`)!;
const step = (state: NodeState, type: string, seq: number | undefined, metrics: UMetric[], device?: string) =>
  receive(state, topic(type, device), { timestamp: 1000, seq, metrics }, 5000);

describe("Sparkplug topics", () => {
  it("parses node and device topics and nothing else", () => {
    expect(parseTopic(`spBv1.0/G/NDATA/${NODE}`)).toEqual({ group: "G", type: "NDATA", edge_node: NODE, device: null });
    expect(parseTopic(`spBv1.0/G/DDATA/${NODE}/7`)).toEqual({ group: "G", type: "DDATA", edge_node: NODE, device: "7" });
    expect(parseTopic(`spBv1.0/G/DDATA/${NODE}`)).toBeNull();
    expect(parseTopic(`spBv1.0/G/NDATA/${NODE}/7`)).toBeNull();
    expect(parseTopic("spBv1.0/STATE/ims")).toBeNull();
    expect(parseTopic(`spAv1.0/G/NDATA/${NODE}`)).toBeNull();
  });

  it("lets a node subscribe to its own node and to the hosts' STATE only", () => {
    expect(mayNodeSubscribe(`spBv1.0/G/NCMD/${NODE}`, NODE)).toBe(true);
    expect(mayNodeSubscribe(`spBv1.0/+/DCMD/${NODE}/#`, NODE)).toBe(true);
    expect(mayNodeSubscribe("spBv1.0/STATE/+", NODE)).toBe(true);
    expect(mayNodeSubscribe("spBv1.0/#", NODE)).toBe(false);
    expect(mayNodeSubscribe("spBv1.0/G/NDATA/+", NODE)).toBe(false);
    expect(mayNodeSubscribe("spBv1.0/G/NDATA/ffffffffffff", NODE)).toBe(false);
    expect(mayNodeSubscribe("#", NODE)).toBe(false);
  });

  it("encodes the rebirth request as NCMD Node Control/Rebirth = true", () => {
    const cmd = rebirthCommand({ group: "G", edge_node: NODE }, 42);
    expect(cmd.topic).toBe(`spBv1.0/G/NCMD/${NODE}`);
    expect(decodePayload(cmd.payload).metrics).toEqual([expect.objectContaining({ name: "Node Control/Rebirth", type: "Boolean", value: true })]);
  });
});

describe("a node's session", () => {
  it("keeps births' aliases, reads data by alias, Booleans as 1/0, at the metric's time else the payload's", () => {
    let s = newNodeState();
    const birth = step(s, "NBIRTH", 0, [{ name: "bdSeq", type: "UInt64", value: 3 }, { name: "Speed", alias: 1, type: "Double", value: 1.5, timestamp: 900 }]);
    expect(birth.event).toBe("birth");
    expect(birth.readings).toEqual([{ device: null, name: "Speed", ts: 900, value: 1.5 }]);
    s = birth.state;
    const dbirth = step(s, "DBIRTH", 1, [{ name: "On", alias: 2, type: "Boolean", value: true }, { name: "Label", alias: 3, type: "String", value: "x" }], "4");
    expect(dbirth.readings).toEqual([{ device: "4", name: "On", ts: 1000, value: 1 }]);
    expect(dbirth.ignored).toBe(1);
    s = dbirth.state;
    const data = step(s, "DDATA", 2, [{ alias: 2, type: "Boolean", value: false, timestamp: 1200 }], "4");
    expect(data.readings).toEqual([{ device: "4", name: "On", ts: 1200, value: 0 }]);
    expect(data.rebirth).toBeNull();
  });

  it("wraps seq after 255 and asks for a rebirth on a gap, keeping the message", () => {
    let s = step(newNodeState(), "NBIRTH", 0, [{ name: "A", alias: 1, type: "Int32", value: 1 }]).state;
    s = { ...s, seq: 255 };
    const wrapped = step(s, "NDATA", 0, [{ alias: 1, type: "Int32", value: 2 }]);
    expect(wrapped.rebirth).toBeNull();
    const gap = step(wrapped.state, "NDATA", 2, [{ alias: 1, type: "Int32", value: 3 }]);
    expect(gap.rebirth).toBe("seq 2 after 0");
    expect(gap.readings).toHaveLength(1);
  });

  it("asks for a rebirth on an unknown alias and on data before a birth", () => {
    const s = step(newNodeState(), "NBIRTH", 0, [{ name: "A", alias: 1, type: "Int32", value: 1 }]).state;
    const unknown = step(s, "NDATA", 1, [{ alias: 9, type: "Int32", value: 2 }, { alias: 1, type: "Int32", value: 3 }]);
    expect(unknown.rebirth).toBe("unknown alias 9");
    expect(unknown.readings.map((r) => r.value)).toEqual([3]);
    expect(step(newNodeState(), "NDATA", 4, [{ name: "A", type: "Int32", value: 2 }]).rebirth).toBe("data before a birth");
  });

  it("ignores an NDEATH of another session (bdSeq) and takes its own", () => {
    const s = step(newNodeState(), "NBIRTH", 0, [{ name: "bdSeq", type: "UInt64", value: 7 }]).state;
    expect(step(s, "NDEATH", undefined, [{ name: "bdSeq", type: "UInt64", value: 6 }]).event).toBeNull();
    const death = step(s, "NDEATH", undefined, [{ name: "bdSeq", type: "UInt64", value: 7 }]);
    expect(death.event).toBe("death");
    expect(death.state.born).toBe(false);
  });
});
