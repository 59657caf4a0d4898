/** A configuration hierarchy and pipeline bodies for the pipelines tests, made through the API as a user would. */
import type { TestNode } from "../helpers/node";
import { envelope } from "../helpers/envelope";

/** An error's envelope: the spec's status and message; the input it names (`field`) may stand beside them. */
export const err = envelope;
export const MISSING = "6e2d3c4b-5f60-4b7c-9d8e-0f1a2b3c4d5e";

export async function post(t: TestNode, path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.http<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

export interface MonitorFixture {
  id: string;
  tags: { tag_id: string; tag_name: string; tag_unit: string }[];
}

export async function monitor(t: TestNode, fn: string, name: string, type: string, tags: { tag_id: string; tag_name: string; tag_unit: string }[]): Promise<MonitorFixture> {
  const id = await post(t, "/_config/monitors", { monitor_name: name, monitor_type: type, function_id: fn });
  const res = await t.http("PUT", `/_config/monitors/${id}`, {
    body: {
      monitor_name: name,
      monitor_type: type,
      tags: tags.map((tag) => ({ ...tag, tag_desc: "", thresholds: {} })),
      specs: {},
      attributes: {},
    },
  });
  if (res.status !== 200) throw new Error(`monitor update: ${JSON.stringify(res.body)}`);
  return { id, tags };
}

export async function hierarchy(t: TestNode, prefix: string, retention_period = 180) {
  const site = await post(t, "/_config/sites", {
    site_name: `${prefix} Site`,
    location: "Lyon",
    timezone: "Europe/Paris",
    longitude: "4.83",
    retention_period,
    edge_firmware: { current_version: "1.0.0" },
  });
  const plant = await post(t, "/_config/plants", { plant_name: `${prefix} Plant`, site_id: site });
  const fn = await post(t, "/_config/functions", { function_name: `${prefix} Fn`, plant_id: plant });
  const fn2 = await post(t, "/_config/functions", { function_name: `${prefix} Fn2`, plant_id: plant });
  const pump = await monitor(t, fn, `${prefix} Pump`, "process-monitor", [
    { tag_id: "pressure", tag_name: "Pressure", tag_unit: "bar" },
    { tag_id: "flow", tag_name: "Flow", tag_unit: "m3/h" },
  ]);
  const fan = await monitor(t, fn, `${prefix} Fan`, "condition-monitor", [{ tag_id: "vib", tag_name: "Vibration", tag_unit: "mm/s" }]);
  const meter = await monitor(t, fn2, `${prefix} Meter`, "energy-monitor", [
    { tag_id: "kwh", tag_name: "Energy", tag_unit: "kWh" },
    { tag_id: "kw", tag_name: "Power", tag_unit: "kW" },
  ]);
  return { site, plant, fn, fn2, pump, fan, meter };
}

export type Hierarchy = Awaited<ReturnType<typeof hierarchy>>;

let macSeq = 0;
export const nextMac = (): string => `02:00:00:00:${(Math.floor(++macSeq / 256) % 256).toString(16).padStart(2, "0")}:${(macSeq % 256).toString(16).padStart(2, "0")}`;

export const modbusSettings = (mac = nextMac()) => ({
  mac_address: mac,
  port: "/dev/ttyUSB0",
  stopbit: 1,
  bytesize: 8,
  parity: "N",
  baudrate: 9600,
  sampling_rate: 10,
});

export const modbusTag = { tag_name: "Pressure", tag_desc: "Discharge", tag_unit: "bar", address: "40001", decode_bits: "16", decode_type: "float", scale: 1 };

/** An edge Modbus RTU gateway for the function, registering the given monitors as slaves 1, 2, ... */
export function edgeBody(h: Hierarchy, monitors: string[], extra: Record<string, unknown> = {}) {
  return {
    pipeline_name: `Gateway ${nextMac()}`,
    function_id: h.fn,
    data_type: "Process",
    data_source: "Edge IOT Gateway",
    data_source_subtype: "Modbus RTU",
    settings: modbusSettings(),
    gateway_firmware: { current_version: "2.1.0", previous_version: "2.0.0" },
    tags: [modbusTag],
    registration: monitors.map((monitor_id, i) => ({ monitor_id, slave_id: String(i + 1), registered_by_asset: false })),
    ...extra,
  };
}

export async function createEdge(t: TestNode, body: Record<string, unknown>): Promise<{ id: string; ingest_key: string }> {
  const res = await t.http<{ id: string; ingest_key: string }>("POST", "/_config/pipelines/edge-server", { body });
  if (res.status !== 200) throw new Error(`edge create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A gateway's request with its ingest key. */
export function ingest<T = unknown>(t: TestNode, method: string, path: string, key: string | null, body?: unknown) {
  return t.http<T>(method, path, { body, auth: null, headers: key === null ? {} : { authorization: `Bearer ${key}` } });
}

export async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, tries = 100, everyMs = 50): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await probe();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return probe();
}
