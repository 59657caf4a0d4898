/**
 * seed-demo: a demo installation in one command: a site, a plant, two functions, two assets,
 * a monitor of each type with tags, an edge pipeline mapping those tags, and a watcher on it;
 * then the simulator command that feeds the pipeline. Each step says what it made; a step whose
 * service is not deployed says so, and the steps that need it are skipped.
 */
import { randomBytes } from "node:crypto";
import { config } from "../../lib/config";
import { newId } from "../../lib/ids";
import { callAs, errorText } from "../call";
import { optionalText } from "../format";
import type { AdminCommand, ReplContext } from "../types";

/** The bearing temperature's warning limit, which the demo watcher fires at, and the reading the REPL prints. */
const TEMPERATURE_WARNING = 85;
const DEMO_READING = 88;

interface Created {
  id: string;
  ingest_key?: string;
}

interface Tag {
  tag_id: string;
  tag_name: string;
  tag_desc: string;
  tag_unit: string;
  thresholds?: { operational: string; caution: string; warning: string };
}

const tag = (name: string, desc: string, unit: string, thresholds?: [number, number, number]): Tag => ({
  tag_id: newId(),
  tag_name: name,
  tag_desc: desc,
  tag_unit: unit,
  ...(thresholds ? { thresholds: { operational: String(thresholds[0]), caution: String(thresholds[1]), warning: String(thresholds[2]) } } : {}),
});

export interface SeedResult {
  lines: string[];
  ids: Record<string, string>;
}

export async function seedDemo(ctx: ReplContext, name: string, apiUrl: string, notify: string): Promise<SeedResult> {
  const lines: string[] = [];
  const ids: Record<string, string> = {};
  let failed = false;

  async function step(label: string, action: string, params: Record<string, unknown>, needs: string[] = []): Promise<Created | undefined> {
    const missing = needs.filter((n) => !ids[n]);
    if (missing.length) {
      lines.push(`- ${label}: skipped (needs ${missing.join(", ")})`);
      return undefined;
    }
    try {
      const res = await callAs<Created>(ctx, action, params);
      ids[label] = res.id;
      lines.push(`+ ${label}: ${res.id}`);
      return res;
    } catch (err) {
      failed = true;
      lines.push(`x ${label}: ${errorText(err)}`);
      return undefined;
    }
  }

  // The demo plant is in Pune: its times are India's (the console shows each record in its site's zone).
  await step("site", "config.sites.create", {
    site_name: name,
    location: "Pune, India",
    timezone: "Asia/Kolkata",
    latitude: "18.52",
    longitude: "73.86",
    retention_period: 180,
    edge_firmware: { current_version: "1.0.0", previous_version: "" },
  });
  await step("plant", "config.plants.create", { plant_name: `${name} Plant`, site_id: ids.site }, ["site"]);
  await step("function:pumping", "config.functions.create", { function_name: `${name} Pumping`, plant_id: ids.plant }, ["plant"]);
  await step("function:utilities", "config.functions.create", { function_name: `${name} Utilities`, plant_id: ids.plant }, ["plant"]);
  await step(
    "asset:pump",
    "config.assets.create",
    {
      asset_name: `${name} Pump P-101`,
      function_id: ids["function:pumping"],
      asset_category: "Rotating",
      is_critical: "yes",
      attributes: { machine_type: "pump", rotating_speed: 1480, kw: 15, frequency: 50, volts: 400, amp: 28 },
    },
    ["function:pumping"],
  );
  await step(
    "asset:switchboard",
    "config.assets.create",
    { asset_name: `${name} Main Switchboard`, function_id: ids["function:utilities"], asset_category: "Stationary" },
    ["function:utilities"],
  );

  const vibration = [tag("vel_x", "Velocity x", "mm/s", [2.8, 4.5, 7.1]), tag("vel_y", "Velocity y", "mm/s", [2.8, 4.5, 7.1])];
  const process = [tag("temperature", "Bearing temperature", "°C", [60, 75, TEMPERATURE_WARNING]), tag("pressure", "Discharge pressure", "bar")];
  const energy = [tag("energy", "Active energy", "kWh"), tag("power", "Active power", "kW"), tag("voltage", "Voltage", "V"), tag("current", "Current", "A")];
  await step(
    "monitor:condition",
    "config.monitors.create",
    { monitor_name: `${name} Pump Vibration`, monitor_type: "condition-monitor", asset_id: ids["asset:pump"], tags: vibration },
    ["asset:pump"],
  );
  await step(
    "monitor:process",
    "config.monitors.create",
    // On the pump: its bearing temperature is the pump's, and the pump's page shows its alarm.
    { monitor_name: `${name} Pump Process`, monitor_type: "process-monitor", asset_id: ids["asset:pump"], tags: process },
    ["asset:pump"],
  );
  await step(
    "monitor:energy",
    "config.monitors.create",
    { monitor_name: `${name} Switchboard Energy`, monitor_type: "energy-monitor", asset_id: ids["asset:switchboard"], tags: energy },
    ["asset:switchboard"],
  );

  const mapped = [
    ...vibration.map((t) => ({ t, monitor: "monitor:condition" })),
    ...process.map((t) => ({ t, monitor: "monitor:process" })),
    ...energy.map((t) => ({ t, monitor: "monitor:energy" })),
  ];
  const pipeline = await step(
    "pipeline",
    "pipelines.edge.create",
    {
      pipeline_name: `${name} Gateway`,
      site_id: ids.site,
      plant_id: ids.plant,
      function_id: ids["function:pumping"],
      data_type: "Process",
      data_source: "Edge IOT Gateway",
      // OPC-UA: its tags name the monitor and tag they feed, so readings map without a slave table.
      data_source_subtype: "OPC-UA",
      settings: {
        mac_address: randomBytes(6).toString("hex").match(/../g)!.join(":"),
        server_url: "opc.tcp://demo-plc:4840",
        user_name: "demo",
        user_password: "demo",
      },
      gateway_firmware: { current_version: "1.0.0", previous_version: "" },
      tags: mapped.map(({ t, monitor }, i) => ({
        tag_name: t.tag_name,
        tag_desc: t.tag_desc,
        tag_unit: t.tag_unit,
        monitor_id: ids[monitor],
        tag_id: t.tag_id,
        address: `ns=2;i=${1001 + i}`,
      })),
      registration: [
        { monitor_id: ids["monitor:condition"], slave_id: "1", registered_by_asset: true, asset_id: ids["asset:pump"] },
        { monitor_id: ids["monitor:process"], slave_id: "1", registered_by_asset: false },
        { monitor_id: ids["monitor:energy"], slave_id: "2", registered_by_asset: true, asset_id: ids["asset:switchboard"] },
      ],
      function_enabled_in_registration: true,
    },
    ["site", "plant", "function:pumping", "monitor:condition", "monitor:process", "monitor:energy"],
  );

  const watcherNeeds = ["site", "plant", "function:pumping", "monitor:process", "pipeline"];
  if (watcherNeeds.every((n) => ids[n])) {
    try {
      const text = await callAs<string>(ctx, "alerting.watchers.create", {
        watcher_name: `${name} Pump Watcher`,
        site_id: ids.site,
        plant_id: ids.plant,
        function_id: ids["function:pumping"],
        gateway_id: ids.pipeline,
        is_enabled: 1,
        triggers: [
          {
            id: newId(),
            name: "Bearing too hot",
            // One reading past the threshold fires it, so the printed curl shows an alert and its email at once.
            minimum_duration: "0s",
            // The simulator's next, calm reading does not close it at once: it stays for a person to see.
            clear_delay: "5m",
            severity: 1,
            trigger_relation: "AND",
            // The tag's own warning limit (thresholds 60 / 75 / 85 °C above).
            condition: [{ comparison: ">=", monitor_id: ids["monitor:process"], tag_id: process[0]!.tag_id, threshold: String(TEMPERATURE_WARNING) }],
            notifyTo: { email: true, sms: false, whatsapp: false, users: [notify] },
          },
        ],
      });
      lines.push(`+ watcher: ${text}`);
    } catch (err) {
      failed = true;
      lines.push(`x watcher: ${errorText(err)}`);
    }
  } else {
    lines.push(`- watcher: skipped (needs ${watcherNeeds.filter((n) => !ids[n]).join(", ")})`);
  }

  if (pipeline?.ingest_key) {
    const temperature = process[0]!;
    // Stamped to the millisecond now (node is there wherever the project runs; `date +%s%3N` is GNU's
    // only): a reading stamped to the whole second could fall behind the simulator's newest and be passed over.
    const reading = `{"readings":[{"monitor_id":"${ids["monitor:process"]}","tag_id":"${temperature.tag_id}","ts":'$(node -p 'Date.now()')',"value":${DEMO_READING}}]}`;
    lines.push(
      "",
      "Feed it from the gateway simulator (from the project's folder; it streams once the pipeline is started: pipeline-start <pipelineId>):",
      `  npm run simulate -- --url ${apiUrl} --pipeline ${pipeline.id} --key ${pipeline.ingest_key}`,
      `Or send one reading as the gateway would (the watcher fires on a bearing temperature of ${TEMPERATURE_WARNING} °C or more, the tag's warning limit, and the alert stays 5 min after it cools):`,
      `  curl -X POST ${apiUrl}/_ingest/pipelines/${pipeline.id}/readings -H 'Authorization: Bearer ${pipeline.ingest_key}' -H 'Content-Type: application/json' -d '${reading}'`,
      "Tags (monitor_id:tag_id) of the pipeline:",
      ...mapped.map(({ t, monitor }) => `  ${t.tag_name.padEnd(12)} ${ids[monitor]}:${t.tag_id}`),
    );
  }
  lines.push("", failed ? "demo seeded in part (see above)" : "demo seeded");
  return { lines, ids };
}

export const seed: AdminCommand = {
  command: "seed-demo",
  description: "Create a demo installation (site, plant, functions, assets, monitors of each type, a pipeline, a watcher).",
  options: [
    { option: "--name <name>", description: "name prefix of everything created (default: Demo <random>)" },
    { option: "--url <url>", description: "the API's URL, for the simulator command (default: http://localhost:3000)" },
    { option: "--notify <username>", description: "the user the watcher emails (default: the bootstrap admin, ADMIN_USERNAME)" },
  ],
  async run(ctx, args) {
    const name = optionalText(args.options.name, "name") ?? `Demo ${randomBytes(2).toString("hex")}`;
    const url = optionalText(args.options.url, "url") ?? "http://localhost:3000";
    // The REPL's own identity is no user: the bootstrap admin is, and reads the outbox of a first run.
    const notify = optionalText(args.options.notify, "notify")?.toLowerCase() ?? config().adminUsername;
    const res = await seedDemo(ctx, name, url, notify);
    return res.lines.join("\n");
  },
};
