/** What the alerting tests build through the public API: a site, plant, function, monitor with tags, users. */
import { randomBytes } from "node:crypto";
import type { HttpClient } from "../helpers/node";
import { modbusSettings, modbusTag } from "./pipelines-fixtures";

export interface Place {
  site_id: string;
  plant_id: string;
  function_id: string;
  monitor_id: string;
  asset_id: string;
}

const suffix = (): string => randomBytes(3).toString("hex");

function ok<T>(res: { status: number; body: unknown }, what: string): T {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as T;
}

export const TAGS = [
  { tag_id: "temp", tag_name: "Temperature", tag_desc: "bearing temperature", tag_unit: "C", thresholds: { operational: "60", caution: "70", warning: "80" } },
  { tag_id: "vib", tag_name: "Vibration", tag_desc: "velocity rms", tag_unit: "mm/s", thresholds: { operational: "2.8", caution: "7.1", warning: "11" } },
];

export async function makePlace(http: HttpClient, name = suffix()): Promise<Place> {
  const site = ok<{ id: string }>(
    await http("POST", "/_config/sites", {
      body: { site_name: `Site ${name}`, location: "Pune", latitude: "18.52", longitude: "73.85", timezone: "Asia/Kolkata", edge_firmware: { current_version: "1.0.0", previous_version: "0.9.0" } },
    }),
    "site",
  );
  const plant = ok<{ id: string }>(await http("POST", "/_config/plants", { body: { plant_name: `Plant ${name}`, site_id: site.id } }), "plant");
  const fn = ok<{ id: string }>(
    await http("POST", "/_config/functions", { body: { function_name: `Cooling ${name}`, plant_id: plant.id } }),
    "function",
  );
  const asset = ok<{ id: string }>(
    await http("POST", "/_config/assets", { body: { asset_name: `Pump ${name}`, function_id: fn.id, asset_category: "Rotating" } }),
    "asset",
  );
  const monitor = ok<{ id: string }>(
    await http("POST", "/_config/monitors", {
      body: { monitor_name: `Bearing ${name}`, monitor_type: "condition-monitor", asset_id: asset.id, tags: TAGS },
    }),
    "monitor",
  );
  return { site_id: site.id, plant_id: plant.id, function_id: fn.id, monitor_id: monitor.id, asset_id: asset.id };
}

export function watcherBody(place: Place, gateway_id: string, over: Record<string, unknown> = {}, trigger: Record<string, unknown> = {}) {
  return {
    watcher_name: "Bearing watch",
    function_id: place.function_id,
    plant_id: place.plant_id,
    site_id: place.site_id,
    gateway_id,
    is_enabled: 1,
    triggers: [
      {
        id: "t1",
        name: "Bearing hot",
        minimum_duration: "2s",
        condition: [{ comparison: ">=", monitor_id: place.monitor_id, tag_id: "temp", threshold: "80" }],
        notifyTo: { email: true, sms: false, whatsapp: false, users: ["ops@example.com"] },
        severity: 1,
        trigger_relation: "AND",
        ...trigger,
      },
    ],
    ...over,
  };
}

export async function makeUser(
  http: HttpClient,
  user: { username: string; user_type: string; site_id?: string; plant_id?: string; modules?: string[]; mobile_number?: string; country_code?: string },
  password = "UserPass1234",
): Promise<{ username: string; password: string }> {
  ok(
    await http("POST", "/_config/users", {
      body: { mobile_number: "9876543210", country_code: "+91", ...user, password },
    }),
    `user ${user.username}`,
  );
  return { username: user.username, password };
}

export const idFrom = (text: unknown): string => {
  const m = /ID ([0-9a-f-]{36})\./.exec(String(text));
  if (!m) throw new Error(`no id in ${JSON.stringify(text)}`);
  return m[1];
};

/** An edge Modbus gateway for the place's function, its monitor registered as slave 1. */
export function gatewayBody(place: Place, pipeline_name: string, data_type = "Process") {
  return {
    pipeline_name,
    function_id: place.function_id,
    data_type,
    data_source: "Edge IOT Gateway",
    data_source_subtype: "Modbus RTU",
    settings: modbusSettings(),
    gateway_firmware: { current_version: "2.1.0", previous_version: "2.0.0" },
    tags: [modbusTag],
    registration: [{ monitor_id: place.monitor_id, slave_id: "1", registered_by_asset: false }],
  };
}
