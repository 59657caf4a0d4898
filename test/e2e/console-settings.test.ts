/**
 * The console's Settings in a real browser, used as an administrator uses it: the hierarchy
 * (site, plant, function, asset), a monitor with tags and thresholds, a user with modules, an
 * edge and a third-party pipeline, and a watcher whose trigger uses the alarm-management fields,
 * each made from the page and checked through the API. A bad input is answered on the page in
 * the service's own words, next to the field it names, and creates nothing.
 */
import type { BrowserContext, Locator, Page } from "playwright-core";
import { shot, signIn, startConsole, type ConsoleHarness } from "../helpers/console";

interface Site {
  site_id: string;
  site_name: string;
  location: string;
  latitude: string;
  longitude: string;
  timezone: string;
  retention_period: number;
}
interface Row {
  [key: string]: unknown;
}
interface MonitorTag {
  tag_id: string;
  tag_name: string;
  tag_unit: string;
  thresholds: Record<string, string>;
}
interface Trigger {
  name: string;
  severity: number;
  minimum_duration: string;
  condition: { monitor_id: string; tag_id: string; comparison: string; threshold: string }[];
  notifyTo: { email: boolean; sms: boolean; whatsapp: boolean; users: string[] };
  deadband?: string;
  clear_delay?: string;
  escalation?: { after: string; users: string[]; email: boolean; sms: boolean; whatsapp: boolean }[];
}
interface Watcher {
  watcher_id: string;
  watcher_name: string;
  gateway_id: string;
  triggers: Trigger[];
  suppressions: { reason: string }[];
}

let c: ConsoleHarness;
let context: BrowserContext;
let page: Page;
let errors: string[];
/** What the page made, by id, as the API reports it. */
const made: Record<string, string> = {};

async function list<T>(path: string): Promise<T[]> {
  const res = await c.t.http<T[]>("GET", path);
  expect(res.status).toBe(200);
  return res.body;
}

async function open(section: string): Promise<void> {
  await page.goto(`${c.t.baseUrl}/#/settings/${section}`);
  await page.getByRole("heading", { name: "Settings", level: 1 }).waitFor();
  await page.getByRole("heading", { name: section[0].toUpperCase() + section.slice(1), level: 2 }).waitFor();
}

/** Waits for the section's success note and answers its text. */
async function doneNote(text: string | RegExp): Promise<string> {
  const note = page.getByRole("status").filter({ hasText: text });
  await note.waitFor();
  return (await note.textContent()) ?? "";
}

/** The message shown next to a field (the last of Field's `aria-describedby`, after its hint), once it is marked invalid. */
async function fieldError(field: Locator): Promise<string> {
  await field.and(page.locator('[aria-invalid="true"]')).waitFor();
  const id = (await field.getAttribute("aria-describedby"))?.split(" ").pop();
  return (await page.locator(`[id="${id}"]`).textContent()) ?? "";
}

beforeAll(async () => {
  c = await startConsole();
  ({ context, page, errors } = await c.open());
  await signIn(page, c.t.baseUrl);
}, 120_000);

afterAll(async () => {
  await context?.close();
  await c?.stop();
});

describe("the hierarchy", () => {
  it("creates a site only with a latitude or longitude; the service's refusals are shown on the form and create nothing", async () => {
    await open("sites");
    await page.getByRole("button", { name: "New site" }).click();
    const form = page.getByRole("form", { name: "New site" });
    await form.getByLabel("Location").fill("Pune");
    await form.getByLabel("Time zone").fill("Asia/Kolkata");
    await form.getByLabel("Retention (days)").fill("90");
    // No name: the service names the field, and the message stands next to it.
    await form.getByRole("button", { name: "Create" }).click();
    await expect(fieldError(form.getByLabel("Site name"))).resolves.toBe("Insufficient inputs");

    await form.getByLabel("Site name").fill("Site Alpha");
    await form.getByRole("button", { name: "Create" }).click();
    await expect(form.getByRole("alert").textContent()).resolves.toContain("Either of latitude or longitude has to be specified");
    await shot(page, "console-settings-sites-error");
    expect((await list<Site>("/_config/sites/_list")).filter((s) => s.site_name === "Site Alpha")).toEqual([]);

    await form.getByLabel("Latitude").fill("118.5");
    await form.getByRole("button", { name: "Create" }).click();
    await expect(fieldError(form.getByLabel("Latitude"))).resolves.toBe("Invalid input: latitude");

    await form.getByLabel("Latitude").fill("18.52");
    await form.getByLabel("Longitude").fill("73.85");
    await form.getByRole("button", { name: "Create" }).click();
    await doneNote("Site Site Alpha created");
    await page.getByRole("row", { name: /Site Alpha/ }).waitFor();
    const [site] = (await list<Site>("/_config/sites/_list")).filter((s) => s.site_name === "Site Alpha");
    expect(site).toMatchObject({ location: "Pune", latitude: "18.52", longitude: "73.85", timezone: "Asia/Kolkata", retention_period: 90 });
    made.site = site.site_id;

    // The same name again: refused in the service's words; still one site of that name.
    await page.getByRole("button", { name: "New site" }).click();
    const again = page.getByRole("form", { name: "New site" });
    await again.getByLabel("Site name").fill("Site Alpha");
    await again.getByLabel("Location").fill("Nashik");
    await again.getByLabel("Latitude").fill("20");
    await again.getByRole("button", { name: "Create" }).click();
    await expect(again.getByRole("alert").textContent()).resolves.toContain("Site with name Site Alpha already exists. Please choose a different name.");
    expect((await list<Site>("/_config/sites/_list")).filter((s) => s.site_name === "Site Alpha")).toHaveLength(1);
    await again.getByRole("button", { name: "Cancel" }).click();
    await shot(page, "console-settings-sites");
  });

  it("creates a plant, a function and an asset, choosing each parent from selects", async () => {
    await open("plants");
    await page.getByRole("button", { name: "New plant" }).click();
    let form = page.getByRole("form", { name: "New plant" });
    await form.getByLabel("Plant name").fill("Plant Alpha");
    await form.getByLabel("Site").selectOption({ label: "Site Alpha" });
    await form.getByRole("button", { name: "Create" }).click();
    await doneNote("Plant Plant Alpha created");
    const [plant] = await list<Row>(`/_config/plants/_list?site_id=${made.site}`);
    expect(plant).toMatchObject({ plant_name: "Plant Alpha", site_name: "Site Alpha" });
    made.plant = String(plant.plant_id);
    await page.getByRole("row", { name: /Plant Alpha/ }).waitFor();
    await shot(page, "console-settings-plants");

    await open("functions");
    await page.getByRole("button", { name: "New function" }).click();
    form = page.getByRole("form", { name: "New function" });
    await form.getByLabel("Function name").fill("Cooling Alpha");
    await form.getByLabel("Site").selectOption({ label: "Site Alpha" });
    await form.getByLabel("Plant").selectOption({ label: "Plant Alpha" });
    await form.getByRole("button", { name: "Create" }).click();
    await doneNote("Function Cooling Alpha created");
    const [fn] = await list<Row>(`/_config/functions/_list?plant_id=${made.plant}`);
    expect(fn).toMatchObject({ function_name: "Cooling Alpha", plant_name: "Plant Alpha" });
    made.function = String(fn.function_id);
    await shot(page, "console-settings-functions");

    await open("assets");
    await page.getByRole("button", { name: "New asset" }).click();
    form = page.getByRole("form", { name: "New asset" });
    await form.getByLabel("Asset name").fill("Pump Alpha");
    await form.getByLabel("Site").selectOption({ label: "Site Alpha" });
    await form.getByLabel("Plant").selectOption({ label: "Plant Alpha" });
    await form.getByLabel("Function").selectOption({ label: "Cooling Alpha" });
    await form.getByLabel("Category").fill("Rotating");
    await form.getByLabel("Critical").selectOption("yes");
    await form.getByLabel("Rotating speed (RPM)").fill("1480");
    await form.getByLabel("Power (kW)").fill("15");
    await form.getByRole("button", { name: "Create" }).click();
    await doneNote("Asset Pump Alpha created");
    const [asset] = await list<Row>(`/_config/assets/_list?function_id=${made.function}`);
    made.asset = String(asset.asset_id);
    const fetched = await c.t.http<Row>("GET", `/_config/assets/${made.asset}`);
    expect(fetched.body).toMatchObject({ asset_name: "Pump Alpha", asset_category: "Rotating", is_critical: "Yes", attributes: { rotating_speed: 1480, kw: 15 } });
    await page.getByRole("row", { name: /Pump Alpha/ }).waitFor();
    await shot(page, "console-settings-assets");
  });

  it("creates a monitor on the asset with tags and thresholds; a bad threshold is named next to its input", async () => {
    await open("monitors");
    await page.getByRole("button", { name: "New monitor" }).click();
    const form = page.getByRole("form", { name: "New monitor" });
    await form.getByLabel("Monitor name").fill("Bearing Alpha");
    await form.getByLabel("Monitor type").selectOption("condition-monitor");
    await form.getByLabel("Site").selectOption({ label: "Site Alpha" });
    await form.getByLabel("Plant").selectOption({ label: "Plant Alpha" });
    await form.getByLabel("Function").selectOption({ label: "Cooling Alpha" });
    await form.getByLabel("Asset").selectOption({ label: "Pump Alpha" });
    const tag1 = form.getByRole("group", { name: "Tag 1" });
    await tag1.getByLabel("Tag name").fill("Temperature");
    await tag1.getByLabel("Unit").fill("C");
    await tag1.getByLabel("Operational").fill("60");
    await tag1.getByLabel("Caution").fill("seventy");
    await tag1.getByLabel("Warning").fill("80");
    await form.getByRole("button", { name: "Add tag" }).click();
    const tag2 = form.getByRole("group", { name: "Tag 2" });
    await tag2.getByLabel("Tag name").fill("Vibration");
    await tag2.getByLabel("Unit").fill("mm/s");
    await tag2.getByLabel("Operational").fill("2.8");
    await tag2.getByLabel("Caution").fill("7.1");
    await tag2.getByLabel("Warning").fill("11");
    await form.getByRole("button", { name: "Create" }).click();
    await expect(fieldError(tag1.getByLabel("Caution"))).resolves.toBe("Invalid input: tags[0].thresholds.caution");
    await shot(page, "console-settings-monitors-error");
    expect(await list<Row>(`/_config/monitors/_list?asset_id=${made.asset}`)).toEqual([]);

    await tag1.getByLabel("Caution").fill("70");
    await form.getByRole("button", { name: "Create" }).click();
    await doneNote("Monitor Bearing Alpha created");
    const [monitor] = await list<Row>(`/_config/monitors/_list?asset_id=${made.asset}`);
    made.monitor = String(monitor.monitor_id);
    const fetched = await c.t.http<{ monitor_type: string; tags: MonitorTag[] }>("GET", `/_config/monitors/${made.monitor}`);
    expect(fetched.body.monitor_type).toBe("condition-monitor");
    expect(fetched.body.tags).toEqual([
      expect.objectContaining({ tag_name: "Temperature", tag_unit: "C", thresholds: { operational: "60", caution: "70", warning: "80" } }),
      expect.objectContaining({ tag_name: "Vibration", tag_unit: "mm/s", thresholds: { operational: "2.8", caution: "7.1", warning: "11" } }),
    ]);
    await expect(page.getByRole("row", { name: /Bearing Alpha/ }).textContent()).resolves.toContain("60 / 70 / 80 C");
    await shot(page, "console-settings-monitors");
  });
});

describe("users", () => {
  it("creates a general user with two modules; that user, Configuration module and all, does not see Settings", async () => {
    await open("users");
    await page.getByRole("button", { name: "New user" }).click();
    const form = page.getByRole("form", { name: "New user" });
    await form.getByLabel("Username (email)").fill("operator.alpha@example.com");
    await form.getByLabel("User type").selectOption({ label: "General user" });
    await form.getByLabel("Site").selectOption({ label: "Site Alpha" });
    await form.getByLabel("Plant").selectOption({ label: "Plant Alpha" });
    await form.getByLabel("Country code").fill("+91");
    await form.getByLabel("Mobile number").fill("9876543210");
    await form.getByLabel("Password").fill("UserPass1234");
    await form.getByLabel("Alerting").check();
    await form.getByLabel("Configuration").check();
    await form.getByRole("button", { name: "Create" }).click();
    await page.getByRole("row", { name: /operator\.alpha@example\.com/ }).waitFor();
    const users = await list<{ username: string; user_type: string; plant_id: string; modules: string[] }>("/_config/users/_list");
    const user = users.find((u) => u.username === "operator.alpha@example.com");
    expect(user).toMatchObject({ user_type: "general-user", plant_id: made.plant });
    expect([...(user?.modules ?? [])].sort()).toEqual(["Alerting", "Configuration"]);
    await shot(page, "console-settings-users");

    const other = await c.open();
    await signIn(other.page, c.t.baseUrl, { username: "operator.alpha@example.com", password: "UserPass1234" });
    const nav = other.page.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Alerts" }).waitFor();
    await expect(nav.getByRole("link").allTextContents()).resolves.toEqual(["Overview", "Assets", "Alerts", "Pipelines"]);
    await other.page.goto(`${c.t.baseUrl}/#/settings/users`);
    await other.page.getByRole("heading", { level: 1 }).waitFor();
    expect(await other.page.getByRole("heading", { name: "Settings" }).count()).toBe(0);
    expect(other.errors).toEqual([]);
    await other.context.close();
  });
});

describe("pipelines", () => {
  it("creates an edge Modbus RTU gateway registering the monitor, shows its ingest key once", async () => {
    await open("pipelines");
    await page.getByRole("button", { name: "New edge gateway" }).click();
    const form = page.getByRole("form", { name: "New edge gateway (Modbus RTU)" });
    await form.getByLabel("Pipeline name").fill("Gateway Alpha");
    await form.getByLabel("Site").selectOption({ label: "Site Alpha" });
    await form.getByLabel("Plant").selectOption({ label: "Plant Alpha" });
    await form.getByLabel("Function").selectOption({ label: "Cooling Alpha" });
    await form.getByLabel("Data type").selectOption("Condition");
    await form.getByLabel("MAC address").fill("02:00:00:00:0a:01");
    await form.getByLabel("Baud rate").fill("19200");
    await form.getByRole("button", { name: "Add tag" }).click();
    const tag = form.getByRole("group", { name: "Tag 1" });
    await tag.getByLabel("Tag name").fill("Temperature");
    await tag.getByLabel("Description").fill("DE bearing");
    await tag.getByLabel("Unit").fill("C");
    await tag.getByLabel("Register address").fill("40001");
    await form.getByRole("button", { name: "Add slave" }).click();
    await form.getByRole("group", { name: "Slave 1" }).getByLabel("Monitor").selectOption({ label: "Bearing Alpha" });
    await form.getByRole("button", { name: "Create" }).click();
    const note = await doneNote("Gateway Gateway Alpha created");
    expect(note).toMatch(/pk_[\w-]{20,}/);
    const [gateway] = await list<Row>(`/_config/pipelines/_list?function_id=${made.function}`);
    expect(gateway).toMatchObject({ pipeline_name: "Gateway Alpha", data_source: "Edge IOT Gateway", data_source_subtype: "Modbus RTU", data_type: "Condition", status: "stopped" });
    made.gateway = String(gateway.pipeline_id);
    const fetched = await c.t.http<Row>("GET", `/_config/pipelines/edge-server/${made.gateway}`);
    expect(fetched.body).toMatchObject({
      settings: { mac_address: "02:00:00:00:0a:01", baudrate: 19200, parity: "N", bytesize: 8, stopbit: 1, port: "/dev/ttyUSB0" },
      tags: [{ tag_name: "Temperature", tag_desc: "DE bearing", tag_unit: "C", address: "40001", decode_bits: "16", decode_type: "float", scale: 1 }],
      registration: [{ monitor_id: made.monitor, slave_id: "1", registered_by_asset: false }],
    });
    await shot(page, "console-settings-pipelines-edge");
  });

  it("creates a third-party OPC-UA pipeline with its required settings, renames it, adds a tag, and deletes it after confirming", async () => {
    await open("pipelines");
    await page.getByRole("button", { name: "New third-party pipeline" }).click();
    const form = page.getByRole("form", { name: "New third-party pipeline" });
    await form.getByLabel("Pipeline name").fill("Historian Alpha");
    await form.getByLabel("Site").selectOption({ label: "Site Alpha" });
    await form.getByLabel("Plant").selectOption({ label: "Plant Alpha" });
    await form.getByLabel("Subtype").fill("OPC-UA");
    await form.getByLabel("MAC address").fill("02:00:00:00:0b:01");
    await form.getByLabel("User name").fill("historian");
    await form.getByLabel("User password").fill("secret-1");
    await form.getByRole("button", { name: "Create" }).click();
    await expect(fieldError(form.getByLabel("Server URL"))).resolves.toBe("Insufficient inputs");
    expect((await list<Row>(`/_config/pipelines/_list?plant_id=${made.plant}`)).map((p) => p.pipeline_name)).toEqual(["Gateway Alpha"]);

    await form.getByLabel("Server URL").fill("opc.tcp://10.0.0.5:4840");
    await form.getByRole("button", { name: "Create" }).click();
    await doneNote("Pipeline Historian Alpha created");
    const pipelines = await list<Row>(`/_config/pipelines/_list?plant_id=${made.plant}`);
    const historian = pipelines.find((p) => p.pipeline_name === "Historian Alpha");
    expect(historian).toMatchObject({ data_source: "Third-Party-Apps", data_source_subtype: "OPC-UA", function_id: null });
    const id = String(historian?.pipeline_id);
    const fetched = await c.t.http<Row>("GET", `/_config/pipelines/thirdparty/${id}`);
    expect(fetched.body).toMatchObject({ settings: { mac_address: "02:00:00:00:0b:01", server_url: "opc.tcp://10.0.0.5:4840", user_name: "historian" } });
    await shot(page, "console-settings-pipelines");

    await page.getByRole("button", { name: "Edit Historian Alpha" }).click();
    const edit = page.getByRole("form", { name: "Edit pipeline Historian Alpha" });
    await edit.getByLabel("Pipeline name").fill("Historian Beta");
    await edit.getByRole("button", { name: "Add tag" }).click();
    const tag = edit.getByRole("group", { name: "Tag 1" });
    await tag.getByLabel("Tag name").fill("Flow");
    await tag.getByLabel("Description").fill("Header flow");
    await tag.getByLabel("Unit").fill("m3/h");
    await tag.getByLabel("Address").fill("ns=2;s=Flow");
    await edit.getByRole("button", { name: "Save" }).click();
    await doneNote("Pipeline updated successfully");
    const renamed = await c.t.http<Row>("GET", `/_config/pipelines/thirdparty/${id}`);
    expect(renamed.body).toMatchObject({ pipeline_name: "Historian Beta", tags: [{ tag_name: "Flow", tag_desc: "Header flow", tag_unit: "m3/h", address: "ns=2;s=Flow" }] });

    await page.getByRole("button", { name: "Delete Historian Beta" }).click();
    const confirm = page.getByRole("alertdialog", { name: "Confirm delete" });
    await expect(confirm.textContent()).resolves.toContain("Delete pipeline “Historian Beta”?");
    await confirm.getByRole("button", { name: "Yes, delete" }).click();
    await doneNote("Pipeline deleted successfully");
    expect((await list<Row>(`/_config/pipelines/_list?plant_id=${made.plant}`)).map((p) => p.pipeline_name)).toEqual(["Gateway Alpha"]);
  });
});

describe("watchers", () => {
  it("creates a watcher whose trigger has a deadband, a clear delay and an escalation tier; a bad duration is named next to its input", async () => {
    await open("watchers");
    await page.getByRole("button", { name: "New watcher" }).click();
    const form = page.getByRole("form", { name: "New watcher" });
    await form.getByLabel("Watcher name").fill("Bearing watch");
    await form.getByLabel("Site").selectOption({ label: "Site Alpha" });
    await form.getByLabel("Plant").selectOption({ label: "Plant Alpha" });
    await form.getByLabel("Function").selectOption({ label: "Cooling Alpha" });
    await form.getByLabel("Gateway").selectOption({ label: "Gateway Alpha (Cooling Alpha)" });
    const trigger = form.getByRole("group", { name: "Trigger 1" });
    await trigger.getByLabel("Trigger name").fill("Bearing hot");
    await trigger.getByLabel("Severity").selectOption({ label: "2 · Medium" });
    await trigger.getByLabel("Minimum duration").fill("2s");
    const condition = trigger.getByRole("group", { name: "Condition 1" });
    await condition.getByLabel("Monitor").selectOption({ label: "Bearing Alpha" });
    await condition.getByLabel("Tag").selectOption({ label: "Temperature (C)" });
    await condition.getByLabel("Comparison").selectOption(">=");
    await condition.getByLabel("Threshold (C)").fill("80");
    await trigger.getByRole("group", { name: "Notify users" }).getByLabel("operator.alpha@example.com").check();
    await trigger.getByLabel("Deadband").fill("2");
    await trigger.getByLabel("Clear delay").fill("soon");
    await trigger.getByRole("button", { name: "Add escalation tier" }).click();
    const tier = trigger.getByRole("group", { name: "Escalation tier 1" });
    await tier.getByLabel("After").fill("15m");
    await tier.getByRole("group", { name: "Escalate to" }).getByLabel("admin@localhost").check();
    await form.getByRole("button", { name: "Create" }).click();
    // Named in plain words beside the input, before anything is sent (the console's own check).
    await expect(fieldError(trigger.getByLabel("Clear delay"))).resolves.toBe("Write a duration such as 30s, 5m or 2h, or leave it empty.");
    await shot(page, "console-settings-watchers-error");
    expect(await list<Row>(`/_alerting/watchers/_list?function_id=${made.function}`)).toEqual([]);

    await trigger.getByLabel("Clear delay").fill("30s");
    await form.getByRole("button", { name: "Create" }).click();
    await doneNote(/Successfully created watcher with ID/);
    const [listed] = await list<Watcher>(`/_alerting/watchers/_list?function_id=${made.function}`);
    const watcher = (await c.t.http<Watcher>("GET", `/_alerting/watchers/${listed.watcher_id}`)).body;
    expect(watcher).toMatchObject({ watcher_name: "Bearing watch", gateway_id: made.gateway });
    const tagId = (await c.t.http<{ tags: MonitorTag[] }>("GET", `/_config/monitors/${made.monitor}`)).body.tags[0].tag_id;
    expect(watcher.triggers).toEqual([
      expect.objectContaining({
        name: "Bearing hot",
        severity: 2,
        minimum_duration: "2s",
        trigger_relation: "AND",
        condition: [{ monitor_id: made.monitor, tag_id: tagId, comparison: ">=", threshold: "80" }],
        notifyTo: { email: true, sms: false, whatsapp: false, users: ["operator.alpha@example.com"] },
        deadband: "2",
        clear_delay: "30s",
        escalation: [{ after: "15m", users: ["admin@localhost"], email: true, sms: false, whatsapp: false }],
      }),
    ]);
    made.watcher = listed.watcher_id;
    await expect(page.getByRole("row", { name: /Bearing watch/ }).textContent()).resolves.toContain("deadband 2 · clear delay 30s · 1 escalation tier");
    await shot(page, "console-settings-watchers");
  });

  it("adds a maintenance window to the watcher from its edit form", async () => {
    await open("watchers");
    await page.getByRole("button", { name: "Edit Bearing watch" }).click();
    const windows = page.getByRole("form", { name: "New maintenance window" });
    await windows.getByLabel("From").fill("2030-03-01T08:00");
    await windows.getByLabel("To").fill("2030-03-01T12:00");
    await windows.getByLabel("Reason").fill("Bearing change");
    await windows.getByRole("button", { name: "Add window" }).click();
    await doneNote("Maintenance window added");
    await page.getByRole("row", { name: /Bearing change/ }).waitFor();
    const watcher = (await c.t.http<Watcher>("GET", `/_alerting/watchers/${made.watcher}`)).body;
    expect(watcher.suppressions).toEqual([expect.objectContaining({ reason: "Bearing change", created_by: "admin@localhost" })]);
    await shot(page, "console-settings-watchers-edit");
    expect(errors).toEqual([]);
  });
});

describe("editing and deleting from the lists", () => {
  it("edits a site, a monitor's threshold and a user's modules; a delete the service refuses is answered in its words", async () => {
    await open("sites");
    await page.getByRole("button", { name: "Edit Site Alpha" }).click();
    const site = page.getByRole("form", { name: "Edit site Site Alpha" });
    await site.getByLabel("Location").fill("Chakan, Pune");
    await site.getByRole("button", { name: "Save" }).click();
    await doneNote("Site Site Alpha saved");
    expect((await c.t.http<Site>("GET", `/_config/sites/${made.site}`)).body).toMatchObject({ location: "Chakan, Pune", latitude: "18.52", retention_period: 90 });

    await open("monitors");
    await page.getByRole("button", { name: "Edit Bearing Alpha" }).click();
    const monitor = page.getByRole("form", { name: "Edit monitor Bearing Alpha" });
    await monitor.getByRole("group", { name: "Tag 1" }).getByLabel("Warning").fill("85");
    await monitor.getByRole("button", { name: "Save" }).click();
    await doneNote("Monitor Bearing Alpha saved");
    const tags = (await c.t.http<{ tags: MonitorTag[] }>("GET", `/_config/monitors/${made.monitor}`)).body.tags;
    expect(tags.map((t) => [t.tag_name, t.thresholds.warning])).toEqual([
      ["Temperature", "85"],
      ["Vibration", "11"],
    ]);

    await open("assets");
    await page.getByRole("button", { name: "Delete Pump Alpha" }).click();
    await page.getByRole("alertdialog", { name: "Confirm delete" }).getByRole("button", { name: "Yes, delete" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("Cannot delete the Asset as Monitors are attached");
    expect((await c.t.http("GET", `/_config/assets/${made.asset}`)).status).toBe(200);

    await open("users");
    await page.getByRole("button", { name: "Edit operator.alpha@example.com" }).click();
    const user = page.getByRole("form", { name: "Edit user operator.alpha@example.com" });
    await user.getByLabel("Condition Monitoring").check();
    await user.getByRole("button", { name: "Save" }).click();
    await page.getByRole("status").waitFor();
    const users = await list<{ username: string; modules: string[] }>("/_config/users/_list");
    const edited = users.find((u) => u.username === "operator.alpha@example.com");
    expect([...(edited?.modules ?? [])].sort()).toEqual(["Alerting", "Condition Monitoring", "Configuration"]);
    await shot(page, "console-settings-users-edited");
    expect(errors).toEqual([]);
  });
});
