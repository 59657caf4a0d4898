/**
 * The console's operations views in a real browser against a real single-process node: a plant's
 * pipelines with their status, stale heartbeats and Start (the API then lists the action); energy
 * shares with their units after a gateway sent meter readings through the ingestion API; a
 * notebook created, renamed, scheduled, written, run and deleted from the page, each step checked
 * in the API.
 */
import { execFileSync } from "node:child_process";
import { ADMIN } from "../helpers/node";
import { shot, signIn, startConsole, type ConsoleHarness } from "../helpers/console";
import { gatewayBody, makePlace, type Place } from "./alerting-fixtures";
import { createEdge, eventually, ingest } from "./pipelines-fixtures";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The interpreter the notebooks service runs kernels with, when this machine has one. */
const PYTHON = "/usr/bin/python3";
const hasJupyter = (() => {
  try {
    execFileSync(PYTHON, ["-c", "import nbclient, nbformat, ipykernel, jupyter_client"], { stdio: "ignore", timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
})();

let c: ConsoleHarness;
let place: Place;
let gw: { id: string; ingest_key: string };
const meters = { a: "", b: "" };

interface PipelineItem {
  pipeline_id: string;
  status: string;
  last_actions: { action: string; status: string }[];
}

interface Notebook {
  notebook_id: string;
  notebook_name: string;
  status: string;
  no_of_runs: number;
  schedule: { period: string | null; time: string | null; until: string | null };
  attributes: { last_run_status: string | null };
}

const energyTags = [
  { tag_id: "kwh", tag_name: "Energy", tag_desc: "Active energy", tag_unit: "kWh" },
  { tag_id: "kw", tag_name: "Power", tag_desc: "Active power", tag_unit: "kW" },
];

async function energyMeter(name: string): Promise<string> {
  const made = await c.t.http<{ id: string }>("POST", "/_config/monitors", { body: { monitor_name: name, monitor_type: "energy-monitor", function_id: place.function_id } });
  const put = await c.t.http("PUT", `/_config/monitors/${made.body.id}`, {
    body: { monitor_name: name, monitor_type: "energy-monitor", tags: energyTags, specs: {}, attributes: {} },
  });
  if (put.status !== 200) throw new Error(`meter ${name}: ${JSON.stringify(put.body)}`);
  return made.body.id;
}

/** Hourly counter readings over the last 40 days: meter A draws 10 kW, meter B 30 kW. */
function meterReadings(now: number) {
  const readings: { monitor_id: string; tag_id: string; ts: number; value: number }[] = [];
  const start = now - 40 * DAY;
  for (let i = 0; start + i * HOUR < now - 60_000; i++) {
    const ts = start + i * HOUR;
    for (const [monitor_id, kw] of [
      [meters.a, 10],
      [meters.b, 30],
    ] as const) {
      readings.push({ monitor_id, tag_id: "kwh", ts, value: 1000 + i * kw });
      readings.push({ monitor_id, tag_id: "kw", ts, value: kw });
    }
  }
  return readings;
}

beforeAll(async () => {
  c = await startConsole(hasJupyter ? { NOTEBOOK_PYTHON: PYTHON } : {});
  place = await makePlace(c.t.http, "ops");
  meters.a = await energyMeter("Meter A ops");
  meters.b = await energyMeter("Meter B ops");
  gw = await createEdge(c.t, {
    ...gatewayBody(place, "Energy gateway ops", "Energy"),
    registration: [meters.a, meters.b].map((monitor_id, i) => ({ monitor_id, slave_id: String(i + 1), registered_by_asset: false })),
  });
  const now = Date.now();
  const sent = await ingest<{ accepted: number; rejected: unknown[] }>(c.t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, { readings: meterReadings(now) });
  expect(sent.body.rejected).toEqual([]);
  for (const [component, ts] of [
    ["gateway", now - 5_000],
    ["stasher", now - 2 * HOUR],
  ] as const) {
    await ingest(c.t, "POST", `/_ingest/pipelines/${gw.id}/heartbeat`, gw.ingest_key, { component, ts });
  }
  // The energy rollups follow the readings stream: wait until the service has them.
  const from = new Date(now - 10 * DAY).toISOString();
  const to = new Date(now).toISOString();
  await eventually(
    () => c.t.http<{ total_consumption: number }[]>("GET", `/_ems/monitor/_all?function_id=${place.function_id}&label=function&from=${from}&to=${to}`),
    (res) => res.status === 200 && res.body.length === 2 && res.body.every((m) => m.total_consumption > 0),
    200,
    100,
  );
}, 120_000);

afterAll(async () => {
  await c?.stop();
});

describe("pipelines", () => {
  it("lists the plant's pipeline with its status in words and a stale heartbeat; Start queues an action the API lists", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, `#/pipelines?plant_id=${place.plant_id}`);
    await page.getByRole("heading", { name: "Pipelines", level: 1 }).waitFor();
    const row = page.getByRole("row", { name: /Energy gateway ops/ });
    await row.waitFor();
    await expect(row.getByRole("cell").nth(1).textContent()).resolves.toBe("Stopped");
    const beats = await row.getByRole("cell").nth(2).textContent();
    // Heard seconds ago (a minute or more on a loaded machine): not stale, no colour.
    expect(beats).toMatch(/^Gateway\d+ (s|min) agoProducer/);
    expect(beats).toMatch(/Stasher◌ 2 h ago · stale/);
    await expect(row.getByRole("cell").nth(3).textContent()).resolves.toMatch(/^3,8\d\d eventslatest /);
    await shot(page, "console-pipelines-list");

    await row.getByRole("button", { name: "Start" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toBe("✓ Start Energy gateway ops: Action is being queued");
    await row.getByRole("cell", { name: "Starting", exact: true }).waitFor();
    await expect(row.getByRole("cell").nth(4).textContent()).resolves.toMatch(/^Start\s*ℹ in progress/);
    expect(await row.getByRole("button", { name: "Start" }).isDisabled()).toBe(true);
    const listed = await c.t.http<PipelineItem[]>("GET", `/_config/pipelines/_list?plant_id=${place.plant_id}`);
    const item = listed.body.find((p) => p.pipeline_id === gw.id);
    expect(item?.status).toBe("starting");
    expect(item?.last_actions[0]).toMatchObject({ action: "start", status: "in_progress" });

    // The pipeline's page: the monitors registered to it, the latest readings with their units.
    await row.getByRole("link", { name: "Energy gateway ops" }).click();
    const detail = page.getByRole("region", { name: "Energy gateway ops" });
    const registered = detail.getByRole("table", { name: "Monitors this pipeline feeds" });
    await registered.waitFor();
    await expect(registered.getByRole("row").allTextContents()).resolves.toEqual([
      "MonitorTypeSlaveTagsDevice",
      "Meter A opsEnergy monitor1Energy (kWh), Power (kW)registered",
      "Meter B opsEnergy monitor2Energy (kWh), Power (kW)registered",
    ]);
    const latest = detail.getByRole("table", { name: /^3,840 events received in all/ });
    await expect(latest.textContent()).resolves.toMatch(/Meter B opsEnergy\d[\d,.]* kWh/);
    await shot(page, "console-pipelines-detail");
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("energy", () => {
  it("shows each meter's consumption and share with units, its trend, and the previous period beside", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, `#/energy?plant_id=${place.plant_id}&function_id=${place.function_id}&period=30d`);
    await page.getByRole("heading", { name: "Energy", level: 1 }).waitFor();
    const meters = page.getByRole("region", { name: `Cooling ops: consumption by meter` });
    const rowA = meters.getByRole("row", { name: /Meter A ops/ });
    const rowB = meters.getByRole("row", { name: /Meter B ops/ });
    await rowB.waitFor();
    // 10 kW against 30 kW over the same hours: a quarter and three quarters of the function.
    await expect(rowA.textContent()).resolves.toMatch(/Meter A ops\d+(\.\d+)? MWh25 %10 kW/);
    await expect(rowB.textContent()).resolves.toMatch(/Meter B ops\d+(\.\d+)? MWh75 %30 kW/);
    const plantShare = page.getByRole("region", { name: "Consumption by function" }).getByRole("row", { name: /Cooling ops/ });
    await expect(plantShare.textContent()).resolves.toMatch(/Cooling ops2\d+(\.\d+)? MWh100 %/);

    // The trend of the largest meter, daily over 30 days, in MWh.
    await page.getByRole("img", { name: /Meter B ops: consumption daily \(MWh\), (30|31) bars/ }).waitFor();
    await page.getByText(/^Total \d+(\.\d+)? MWh · highest 0\.72 MWh/).waitFor();

    // The 30 days before are covered for 10 of their days only.
    const compare = page.getByRole("region", { name: "Compared with the previous period" });
    const all = compare.getByRole("row", { name: /All meters/ });
    await all.waitFor();
    await expect(all.textContent()).resolves.toMatch(/All meters\d+(\.\d+)? MWh\d+(\.\d+)? MWh▲ up \d+(\.\d+)? MWh \(\+\d+(\.\d)? %\)/);
    await shot(page, "console-energy");

    // By asset: the meters hang on the function itself.
    await page.getByLabel("Show by").selectOption("asset");
    await page.getByRole("row", { name: /Not on an asset/ }).waitFor();
    await expect(page.getByRole("row", { name: /Not on an asset/ }).textContent()).resolves.toMatch(/Meter B ops, Meter A ops.*100 %/);
    // An hourly trend over a week: 168 bars, fewer than the chart's pixels.
    await page.getByLabel("Period", { exact: true }).selectOption("7d");
    await page.getByLabel("Interval", { exact: true }).selectOption("hourly");
    await page.getByRole("img", { name: /Meter B ops: consumption hourly \(MWh\)/ }).waitFor();
    await shot(page, "console-energy-hourly");
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("notebooks", () => {
  const all = async () => (await c.t.http<Notebook[]>("GET", "/_notebooks/notebooks/_all")).body;

  it("creates, renames, schedules, writes, runs, unschedules and deletes a notebook from the page", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, "#/notebooks");
    await page.getByRole("heading", { name: "Notebooks", level: 1 }).waitFor();
    await page.getByText("No notebook yet").waitFor();

    await page.getByRole("button", { name: "New notebook" }).click();
    await page.getByRole("heading", { name: "Untitled.ipynb", level: 2 }).waitFor();
    const [made] = await all();
    expect(made).toMatchObject({ notebook_name: "Untitled.ipynb", status: "Not Scheduled" });

    // A name the service refuses is answered next to the field, in its words.
    await page.getByLabel("Name", { exact: true }).fill("a/b");
    await page.getByRole("button", { name: "Rename" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toBe("Invalid input: notebook_name");
    await page.getByLabel("Name", { exact: true }).fill("Energy check");
    await page.getByRole("button", { name: "Rename" }).click();
    await page.getByRole("heading", { name: "Energy check.ipynb", level: 2 }).waitFor();
    await expect(page.getByRole("form", { name: "Rename" }).getByRole("status").textContent()).resolves.toBe("✓ Rename Successful");
    expect((await all())[0].notebook_name).toBe("Energy check.ipynb");

    await page.getByLabel("Day").selectOption("Monday");
    await page.getByLabel("Time (UTC)").fill("06:30");
    await page.getByLabel("Until (UTC)").fill("2099-12-31T18:00");
    await page.getByRole("button", { name: "Schedule", exact: true }).click();
    await expect(page.getByRole("form", { name: "Schedule" }).getByRole("status").textContent()).resolves.toBe("✓ Success");
    // Kept in UTC, shown in the display zone like every time: chosen here as UTC.
    await page.getByText("Display", { exact: true }).click();
    await page.getByLabel("Display time zone").selectOption("UTC");
    await page.getByText("Display", { exact: true }).click();
    await page.getByRole("row", { name: /Energy check.*Mondays at 06:30 \(UTC\), until 2099-12-31 18:00 \(UTC\)/ }).waitFor();
    expect((await all())[0]).toMatchObject({ status: "Scheduled", schedule: { period: "Monday", time: "06:30", until: "2099-12-31 18:00" } });

    await page.getByRole("button", { name: "Add cell" }).click();
    await page.getByLabel("Cell 1", { exact: true }).fill("print('kWh per hour', 6 * 7)");
    await page.getByRole("button", { name: "Save cells" }).click();
    await expect(page.getByRole("form", { name: "Cells" }).getByRole("status").textContent()).resolves.toBe("✓ Notebook saved");
    const content = await c.t.http<{ cells: { source: string | string[] }[] }>("GET", `/_notebooks/notebooks/${made.notebook_id}/_content`);
    expect([content.body.cells[0].source].flat().join("")).toBe("print('kWh per hour', 6 * 7)");

    await page.getByRole("button", { name: "Run", exact: true }).click();
    if (hasJupyter) {
      // The run ends on a kernel; the page looks again by itself and shows the cell's output.
      await page.locator("pre.out", { hasText: "kWh per hour 42" }).waitFor({ timeout: 60_000 });
      const after = (await all())[0];
      expect(after).toMatchObject({ no_of_runs: 1, attributes: { last_run_status: "succeeded" } });
      await page.getByRole("row", { name: /Energy check.*1 succeeded/ }).waitFor();
    } else {
      await expect(page.getByRole("alert").textContent()).resolves.toBe("⚠ Error occurred during notebook execution: Jupyter runtime not available");
    }
    await shot(page, "console-notebooks");

    await page.getByRole("button", { name: "Unschedule" }).click();
    await page.getByRole("row", { name: /Energy check.*Not scheduled/ }).waitFor();
    expect((await all())[0]).toMatchObject({ status: "Not Scheduled", schedule: { period: null, time: null, until: null } });

    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByText("No notebook yet").waitFor();
    expect(await all()).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
