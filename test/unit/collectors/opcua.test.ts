/** The OPC-UA collector's rules (services/collectors/opcua-collector.ts): its settings, and what a batch of changes stores. */
import { opcuaSettingsOf, readingsOfChanges } from "../../../services/collectors/opcua-collector";
import { opcuaTarget, readingOf, timestampOf } from "../../../lib/opcua-source";

const tag = (address: string, tag_id: string) => ({ column_name: "", address, monitor_id: "m", tag_id });

describe("an OPC-UA pipeline's settings", () => {
  it("takes sampling_rate in Hz as the interval in ms, None security unless told, and refuses what is not a mode or policy", () => {
    expect(opcuaSettingsOf({ server_url: " opc.tcp://plc:4840 ", user_name: "opc", user_password: "x", sampling_rate: 4 })).toEqual({
      server_url: "opc.tcp://plc:4840",
      user_name: "opc",
      user_password: "x",
      security_mode: "None",
      interval_ms: 250,
    });
    expect(opcuaSettingsOf({ server_url: "opc.tcp://plc", user_name: "", user_password: "" })).toMatchObject({ user_name: null, interval_ms: null });
    expect(opcuaSettingsOf({ server_url: "opc.tcp://plc", security_mode: "Sign", security_policy: "Basic256Sha256" })).toMatchObject({ security_mode: "Sign", security_policy: "Basic256Sha256" });
    expect(() => opcuaSettingsOf({ server_url: "" })).toThrow("server_url");
    expect(() => opcuaSettingsOf({ server_url: "opc.tcp://plc", security_mode: "Encrypt" })).toThrow("security_mode");
    expect(() => opcuaSettingsOf({ server_url: "opc.tcp://plc", security_policy: "Basic128" })).toThrow("security_policy");
  });

  it("reads the host and port of a server_url, 4840 by default, and points it at the address the guard checked", () => {
    const t = opcuaTarget("opc.tcp://historian.plant:4841/UA/Server")!;
    expect([t.host, t.port, t.at("10.0.0.7")]).toEqual(["historian.plant", 4841, "opc.tcp://10.0.0.7:4841/UA/Server"]);
    expect(opcuaTarget("opc.tcp://[fe80::1]")!.at("fe80::1")).toBe("opc.tcp://[fe80::1]:4840");
    expect(opcuaTarget("http://plc:4840")).toBeNull();
    expect(opcuaTarget("opc.tcp://plc:70000")).toBeNull();
  });

  it("times a value by its source, else by its server, and takes OPC-UA's minimum date for no time", () => {
    const at = (ms: number) => new Date(ms);
    const none = new Date(Date.UTC(1601, 0, 1));
    expect(timestampOf({ sourceTimestamp: at(1700000000123), serverTimestamp: at(1700000000999) })).toBe(1700000000123);
    expect(timestampOf({ sourceTimestamp: none, serverTimestamp: at(1700000000999) })).toBe(1700000000999);
    expect(timestampOf({ sourceTimestamp: null, serverTimestamp: none })).toBeNull();
  });

  it("takes numbers and Booleans as readings, nothing else", () => {
    expect([1.5, true, false, 7n, [1, 2], "3", null, Infinity].map(readingOf)).toEqual([1.5, 1, 0, 7, 2 ** 32 + 2, null, null, null]);
  });
});

describe("a batch of changes", () => {
  const addresses = ["ns=1;s=A", "ns=1;s=B"];
  const tags = new Map([
    ["ns=1;s=A", [tag("ns=1;s=A", "a"), tag("ns=1;s=A", "a2")]],
    ["ns=1;s=B", [tag("ns=1;s=B", "b")]],
  ]);

  it("stores each change as a reading of every tag of its node, and moves each node's position to its last value", () => {
    const { readings, to } = readingsOfChanges(
      [
        { index: 0, ts: 1000, value: 1 },
        { index: 1, ts: 1000, value: 2 },
        { index: 0, ts: 1100, value: 3 },
      ],
      addresses,
      tags,
      { last: null, seen: {} },
    );
    expect(readings).toEqual([
      { monitor_id: "m", tag_id: "a", ts: 1000, value: 1 },
      { monitor_id: "m", tag_id: "a2", ts: 1000, value: 1 },
      { monitor_id: "m", tag_id: "b", ts: 1000, value: 2 },
      { monitor_id: "m", tag_id: "a", ts: 1100, value: 3 },
      { monitor_id: "m", tag_id: "a2", ts: 1100, value: 3 },
    ]);
    expect(to).toEqual({ last: null, seen: { "ns=1;s=A": 1100, "ns=1;s=B": 1000 } });
  });

  it("leaves out a value no later than its node's position: one the server sends again after a reconnection", () => {
    const { readings, to } = readingsOfChanges(
      [
        { index: 0, ts: 1100, value: 3 },
        { index: 1, ts: 900, value: 9 },
        { index: 1, ts: 1200, value: 4 },
      ],
      addresses,
      tags,
      { last: null, seen: { "ns=1;s=A": 1100, "ns=1;s=B": 1000 } },
    );
    expect(readings).toEqual([{ monitor_id: "m", tag_id: "b", ts: 1200, value: 4 }]);
    expect(to.seen).toEqual({ "ns=1;s=A": 1100, "ns=1;s=B": 1200 });
  });
});
