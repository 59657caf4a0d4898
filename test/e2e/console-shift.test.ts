/**
 * The console for the people on shift (docs/console.md, "For the people on shift"), in a real
 * browser against a real single process: an alarm opened by readings posted through a gateway's
 * ingest route while the person is on Assets shows in the header's Alarm summary, a New alarm
 * banner and the page's title within 3 s; the asset with the alarm is not shown as normal on the
 * Overview, the asset list and its own page, which lists its alarms; a shelved alarm is counted
 * apart, not as active; with a `Display time zone` chosen, every time on the alert, asset,
 * pipeline, energy and notebook pages is written in that zone and says so.
 */
import type { Page } from "playwright-core";
import { ADMIN } from "../helpers/node";
import { shot, signIn, startConsole, type ConsoleHarness } from "../helpers/console";
import { gatewayBody, idFrom, makePlace, watcherBody, type Place } from "./alerting-fixtures";
import { createEdge, eventually, ingest } from "./pipelines-fixtures";

let c: ConsoleHarness;
let place: Place;
let gw: { id: string; ingest_key: string };
let energyGw: { id: string; ingest_key: string };
let meterId = "";
let notebookId = "";
const NAME = "shift";
const HOUR = 3_600_000;
/** A zone no browser or site here has (UTC+13:45): a time in it was written for it. */
const ZONE = "Pacific/Chatham";

async function send(readings: { tag_id: string; ts: number; value: number }[]): Promise<void> {
  const res = await ingest<{ accepted: number }>(c.t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, {
    readings: readings.map((r) => ({ monitor_id: place.monitor_id, ...r })),
  });
  expect(res.status).toBe(200);
}

const summaryOf = (page: Page) => page.getByRole("region", { name: "Alarm summary" });

beforeAll(async () => {
  c = await startConsole();
  place = await makePlace(c.t.http, NAME);
  gw = await createEdge(c.t, gatewayBody(place, "Shift gateway"));
  idFrom((await c.t.http("POST", "/_alerting/watchers", { body: watcherBody(place, gw.id, { watcher_name: "Shift watch" }, { minimum_duration: "0s" }) })).body);
  await send([{ tag_id: "temp", ts: Date.now() - 60_000, value: 55 }]);
  await ingest(c.t, "POST", `/_ingest/pipelines/${gw.id}/heartbeat`, gw.ingest_key, { component: "gateway", ts: Date.now() - 5000 });

  // An energy meter with two days of hourly readings, for the Energy page's times.
  const meter = await c.t.http<{ id: string }>("POST", "/_config/monitors", { body: { monitor_name: "Meter shift", monitor_type: "energy-monitor", function_id: place.function_id } });
  meterId = meter.body.id;
  await c.t.http("PUT", `/_config/monitors/${meterId}`, {
    body: { monitor_name: "Meter shift", monitor_type: "energy-monitor", tags: [{ tag_id: "kwh", tag_name: "Energy", tag_desc: "Active energy", tag_unit: "kWh" }], specs: {}, attributes: {} },
  });
  energyGw = await createEdge(c.t, { ...gatewayBody(place, "Energy gateway shift", "Energy"), registration: [{ monitor_id: meterId, slave_id: "1", registered_by_asset: false }] });
  const now = Date.now();
  const readings = [];
  for (let i = 0; i < 48; i++) readings.push({ monitor_id: meterId, tag_id: "kwh", ts: now - (48 - i) * HOUR, value: 1000 + 10 * i + (i === 30 ? 40 : 0) });
  await ingest(c.t, "POST", `/_ingest/pipelines/${energyGw.id}/readings`, energyGw.ingest_key, { readings });
  await eventually(
    () => c.t.http<{ total_consumption: number }[]>("GET", `/_ems/monitor/_all?function_id=${place.function_id}&label=function&from=${new Date(now - 3 * 24 * HOUR).toISOString()}&to=${new Date(now).toISOString()}`),
    (res) => res.status === 200 && res.body.length === 1 && res.body[0].total_consumption > 0,
    200,
    100,
  );

  // A scheduled notebook, for the Notebooks page's times.
  notebookId = (await c.t.http<{ notebook_id: string }>("POST", "/_notebooks/notebooks")).body.notebook_id;
  await c.t.http("POST", "/_notebooks/notebooks/_schedule", { body: { nbk_ids: [notebookId], until: "2099-12-31 23:00", period: "monday", time: "06:30" } });
}, 120_000);

afterAll(async () => {
  await c?.stop();
});

describe("the alarm signal on every view", () => {
  it("shows an alarm opened while the person is on Assets in the Alarm summary, a New alarm banner and the title within 3 s", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, "#/assets");
    await page.getByRole("heading", { name: "Assets", exact: true }).waitFor();
    await summaryOf(page).getByText("No unacknowledged alarm").waitFor();
    expect(await page.title()).not.toMatch(/^\(\d+\) /);
    await expect(page.getByRole("alert", { name: "New alarm" }).count()).resolves.toBe(0);

    const sent = Date.now();
    await send([{ tag_id: "temp", ts: sent - 500, value: 86.25 }]);
    const banner = page.getByRole("alert", { name: "New alarm" });
    await banner.waitFor({ timeout: 3000 });
    const inMs = Date.now() - sent;
    expect(inMs).toBeLessThan(3000);
    await expect(banner.textContent()).resolves.toMatch(/New alarm: Bearing hot on Pump shift/);
    await expect(summaryOf(page).textContent()).resolves.toMatch(/1 unacknowledged.*High 1/s);
    await expect(summaryOf(page).getByRole("link").getAttribute("href")).resolves.toBe("#/alerts");
    expect(await page.title()).toMatch(/^\(1\) /);
    // Still the Assets view: the signal came to the person, not the other way round.
    await expect(page.getByRole("heading", { name: "Assets", exact: true }).isVisible()).resolves.toBe(true);
    console.log(`alarm in banner, summary and title ${inMs} ms after the reading was posted`);
    await shot(page, "console-shift-banner");

    await banner.getByRole("button", { name: "Dismiss" }).click();
    await expect(page.getByRole("alert", { name: "New alarm" }).count()).resolves.toBe(0);
    // The sound is the person's choice, kept across a reload.
    await summaryOf(page).getByLabel("Alarm sound").check();
    await page.reload();
    await expect(summaryOf(page).getByLabel("Alarm sound").isChecked()).resolves.toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("health that tells the truth", () => {
  it("shows the asset with an active alarm as in alarm on the Overview, the asset list and its page, which lists the alarm; a shelved one is counted apart", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, "#/overview");
    const assetItem = page.getByRole("treeitem", { name: `Asset Pump ${NAME}` });
    await assetItem.getByText("Alarm (High)").waitFor({ timeout: 5000 });
    expect(await assetItem.textContent()).not.toContain("Normal");
    const fnItem = page.getByRole("treeitem", { name: `Function Cooling ${NAME}` });
    await expect(fnItem.getByRole("link", { name: "1 active alerts" }).isVisible()).resolves.toBe(true);

    await page.getByRole("link", { name: "Assets", exact: true }).click();
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: `Pump ${NAME}` }) });
    await row.getByText("Alarm (High)").waitFor({ timeout: 5000 });
    expect(await row.textContent()).not.toContain("Normal");

    await page.getByRole("link", { name: `Pump ${NAME}` }).click();
    await page.getByRole("heading", { name: `Pump ${NAME}` }).waitFor();
    const health = page.getByRole("region", { name: "Health" });
    await health.getByText("Alarm (High)").waitFor({ timeout: 5000 });
    expect(await health.textContent()).not.toContain("Normal");
    const alarms = page.getByRole("region", { name: "Alarms" });
    await alarms.getByRole("link", { name: "Bearing hot" }).waitFor({ timeout: 5000 });
    await alarms.getByText(/No alarm closed in the last 7 days/).waitFor();
    await expect(alarms.getByRole("alert").count()).resolves.toBe(0);
    await expect(alarms.getByRole("table").first().textContent()).resolves.toMatch(/Active now.*High.*Bearing hot.*Active.*Unacknowledged/s);
    await shot(page, "console-shift-asset-alarms");

    // Shelved through the API: the console counts it apart, not as active.
    const [active] = (await c.t.http<{ alerts: { _id: string }[] }>("GET", "/_alerting/alerts/_active")).body.alerts;
    expect((await c.t.http("POST", `/_alerting/alerts/${active._id}/_shelve`, { body: { minutes: 60, reason: "Pump on test run" } })).status).toBe(200);
    await page.getByRole("link", { name: "Overview", exact: true }).click();
    await fnItem.getByText("1 shelved").waitFor({ timeout: 5000 });
    await expect(fnItem.getByText("no active alerts").isVisible()).resolves.toBe(true);
    await expect(assetItem.getByText("Alarm (High)").count()).resolves.toBe(0);
    await expect(summaryOf(page).textContent()).resolves.toMatch(/No unacknowledged alarm.*1 shelved/s);
    expect(errors).toEqual([]);
    await context.close();
  });
});

/**
 * Every time of the view's text (and of its tooltips) is followed by the zone chosen, and there is
 * at least one: a time written in another zone, or without its zone, fails.
 */
async function timesCarry(page: Page, zone: string, what: string): Promise<void> {
  const found = await page.evaluate<string>(`(() => {
    const main = document.getElementById("main");
    const titles = [...(main?.querySelectorAll("[title]") ?? [])].map((e) => e.getAttribute("title") ?? "");
    return [main?.innerText ?? "", ...titles].join("\\n");
  })()`);
  const clocks = [...found.matchAll(/\b\d{1,2}:\d{2}(?::\d{2})?(?: [AP]M)?(?! ?[ap]m)/g)].map((m) => found.slice(m.index, m.index + m[0].length + zone.length + 3));
  expect(clocks.length).toBeGreaterThan(0);
  const unlabelled = clocks.filter((text) => !text.endsWith(`(${zone})`));
  if (unlabelled.length > 0) throw new Error(`${what}: times without (${zone}): ${unlabelled.join(" | ")}`);
}

/** A time as the console writes it in ZONE on the 12-hour clock, with seconds: "2026-11-28 9:05:12 AM". */
function inChatham(ts: number): string {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", { timeZone: ZONE, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" })
      .formatToParts(new Date(ts))
      .map((x) => [x.type, x.value]),
  );
  const h = Number(p.hour);
  return `${p.year}-${p.month}-${p.day} ${h % 12 || 12}:${p.minute}:${p.second} ${h < 12 ? "AM" : "PM"}`;
}

describe("one clock", () => {
  it("writes every time on the alert, asset, pipeline, energy and notebook pages in the chosen zone, labelled, on the 24-hour clock or not", async () => {
    const { context, page, errors } = await c.open();
    // The alarm of the tests before, or one raised now when this test runs alone.
    await send([{ tag_id: "temp", ts: Date.now() - 200, value: 86 }]);
    const [alert] = (
      await eventually(
        () => c.t.http<{ _id: string }[]>("GET", `/_alerting/alerts/_list?function_id=${place.function_id}&is_hidden=0`),
        (res) => res.status === 200 && res.body.length > 0,
      )
    ).body;
    // Two vibration captures a minute apart, for the spectrum's and the waterfall's times.
    const captured = [Date.now() - 120_000, Date.now() - 60_000];
    for (const ts of captured) {
      const samples = Array.from({ length: 4096 }, (_, i) => Math.sin((2 * Math.PI * 29.5 * i) / 4096));
      await expect(c.t.node.broker.call("cm.ingest.waveform", { monitor_id: place.monitor_id, tag: "Vibration", axis: "x", ts, sample_rate_hz: 4096, samples })).resolves.toEqual({ stored: true });
    }
    await signIn(page, c.t.baseUrl, ADMIN, `#/alerts/${alert._id}`);
    await page.getByText("Display", { exact: true }).click();
    await page.getByLabel("Display time zone").selectOption(ZONE);
    await page.getByLabel("24-hour clock").uncheck();
    await page.getByText("Display", { exact: true }).click();

    await page.getByRole("heading", { name: "Alert: Bearing hot" }).waitFor();
    await page.getByRole("region", { name: "History" }).getByRole("table").waitFor();
    await timesCarry(page, ZONE, "alert");
    // The 12-hour clock the person chose: "2026-11-28 9:05:12 AM (Pacific/Chatham)".
    await expect(page.getByRole("region", { name: "Details" }).textContent()).resolves.toMatch(new RegExp(`\\d{4}-\\d{2}-\\d{2} \\d{1,2}:\\d{2}:\\d{2} [AP]M \\(${ZONE}\\)`));

    await page.goto(`${c.t.baseUrl}/#/assets/${place.asset_id}`);
    await page.getByRole("region", { name: "Alarms" }).getByRole("link", { name: "Bearing hot" }).waitFor();
    await page.getByText(/updated \d{4}-/).waitFor();
    await timesCarry(page, ZONE, "asset");
    // The spectrum's capture and the waterfall's rows and caption on the same clock, in the same zone.
    const spectrum = page.getByRole("heading", { name: "Spectrum", exact: true }).locator("..");
    await expect(spectrum.getByText(/^Capture of/).textContent()).resolves.toContain(`Capture of ${inChatham(captured[1])} (${ZONE})`);
    const waterfall = page.getByRole("img", { name: /^Waterfall of 2 captures of Vibration axis x/ });
    await waterfall.waitFor();
    const rows = (await waterfall.getAttribute("aria-label")) ?? "";
    expect(rows).toContain(`rows from the back: ${inChatham(captured[0])}, ${inChatham(captured[1])} (${ZONE})`);
    await expect(page.locator("figcaption").filter({ hasText: "2 captures of Vibration" }).textContent()).resolves.toContain(
      `from ${inChatham(captured[0])} (${ZONE}) (back) to ${inChatham(captured[1])} (${ZONE}) (front)`,
    );

    await page.goto(`${c.t.baseUrl}/#/pipelines/${gw.id}?plant_id=${place.plant_id}`);
    await page.getByRole("region", { name: "Shift gateway" }).getByRole("cell", { name: new RegExp(`\\(${ZONE}\\)`) }).first().waitFor();
    await timesCarry(page, ZONE, "pipeline");

    await page.goto(`${c.t.baseUrl}/#/energy?plant_id=${place.plant_id}&function_id=${place.function_id}&period=7d&interval=hourly&monitor_id=${meterId}`);
    await page.getByText(/bucket of/).waitFor();
    await timesCarry(page, ZONE, "energy");

    await page.goto(`${c.t.baseUrl}/#/notebooks/${notebookId}`);
    await page.getByRole("row", { name: /Mondays at/ }).waitFor();
    await timesCarry(page, ZONE, "notebook");
    await shot(page, "console-shift-clock");
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("a tablet", () => {
  it("shows the board's Acknowledge at 800 px wide, inside the screen and the table's scroll box, and each row's condition with its unit", async () => {
    await send([{ tag_id: "temp", ts: Date.now() - 100, value: 87 }]);
    // A row as wide as a shift makes it: shelved and assigned, its flags beside its name.
    const { body } = await eventually(
      () => c.t.http<{ alerts: { _id: string }[] }>("GET", "/_alerting/alerts/_active"),
      (res) => res.status === 200 && res.body.alerts.length > 0,
    );
    const id = body.alerts[0]._id;
    await c.t.http("POST", `/_alerting/alerts/${id}/_shelve`, { body: { minutes: 120, reason: "Pump on test run" } });
    await c.t.http("POST", `/_alerting/alerts/${id}/_assign`, { body: { username: "admin@localhost" } });
    const { context, page, errors } = await c.open({ width: 800, height: 1000 });
    await signIn(page, c.t.baseUrl, ADMIN, "#/alerts");
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: "Bearing hot" }) }).first();
    const ack = row.getByRole("button", { name: "Acknowledge" });
    await ack.waitFor({ timeout: 5000 });
    // The row says what the trigger watches, with its unit.
    await row.getByText("when Temperature ≥ 80 C").waitFor();
    const box = await ack.boundingBox();
    const scroller = await page.locator(".table-scroll").boundingBox();
    expect(box).not.toBeNull();
    expect(scroller).not.toBeNull();
    if (!box || !scroller) return;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(800);
    expect(box.x + box.width).toBeLessThanOrEqual(scroller.x + scroller.width + 1);
    // What is at the button's centre is the button: nothing covers it.
    const hit = await page.evaluate<string>(`document.elementFromPoint(${box.x + box.width / 2}, ${box.y + box.height / 2})?.textContent ?? ""`);
    expect(hit).toBe("Acknowledge");
    // The page itself is no wider than the screen: only the table scrolls sideways.
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(800);
    await ack.click();
    await row.getByText("Acknowledged").waitFor();
    await shot(page, "console-shift-board-800");
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("the watcher form", () => {
  it("names three mistakes at once, each beside its field in plain words, keeps the hints, takes a number for the threshold and does not offer a watched gateway", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, "#/settings/watchers");
    await page.getByRole("button", { name: "New watcher" }).click();
    const form = page.getByRole("form", { name: "New watcher" });
    await form.getByLabel("Site").selectOption({ label: `Site ${NAME}` });
    await form.getByLabel("Plant").selectOption({ label: `Plant ${NAME}` });
    await form.getByLabel("Function").selectOption({ label: `Cooling ${NAME}` });
    const gateway = form.getByLabel("Gateway");
    await gateway.locator("option", { hasText: "Energy gateway shift" }).waitFor({ state: "attached" });
    // "Shift gateway" has its watcher already (one watcher per gateway): not offered.
    await expect(gateway.locator("option").allTextContents()).resolves.not.toContain(expect.stringContaining("Shift gateway ("));
    expect((await gateway.locator("option").allTextContents()).some((o) => o.startsWith("Shift gateway"))).toBe(false);
    await gateway.selectOption({ label: `Energy gateway shift (Cooling ${NAME})` });

    const trigger = form.getByRole("group", { name: "Trigger 1" });
    await trigger.getByLabel("Trigger name").fill("Bearing warm");
    await trigger.getByLabel("Minimum duration").fill("soon");
    await trigger.getByRole("group", { name: "Notify users" }).getByLabel("admin@localhost").check();
    const condition = trigger.getByRole("group", { name: "Condition 1" });
    await condition.getByLabel("Monitor").selectOption({ label: `Bearing ${NAME}` });
    await condition.getByLabel("Tag").selectOption({ label: "Temperature (C)" });
    const threshold = condition.getByLabel("Threshold (C)");
    await expect(threshold.getAttribute("type")).resolves.toBe("number");
    // Three mistakes: no name, a duration the service would refuse, no threshold.
    await form.getByRole("button", { name: "Create" }).click();

    const said = async (label: ReturnType<typeof form.getByLabel>) => {
      await label.and(page.locator('[aria-invalid="true"]')).waitFor();
      const ids = ((await label.getAttribute("aria-describedby")) ?? "").split(" ");
      return Promise.all(ids.map(async (id) => (await page.locator(`[id="${id}"]`).textContent()) ?? ""));
    };
    await expect(said(form.getByLabel("Watcher name"))).resolves.toEqual(["Give the watcher a name."]);
    // The hint stays, the problem under it.
    await expect(said(trigger.getByLabel("Minimum duration"))).resolves.toEqual([
      "Holds this long first; e.g. 30s, 5m, 2h",
      "Write how long it must hold as a number and a unit: 0s, 30s, 5m or 2h.",
    ]);
    await expect(said(threshold)).resolves.toEqual(["Write the threshold as a number, such as 80 or 7.1."]);
    await expect(form.locator(".field-error").count()).resolves.toBe(3);
    await expect(form.getByText(/Invalid input|triggers\[/).count()).resolves.toBe(0);
    await shot(page, "console-shift-watcher-three-mistakes");
    // Nothing was sent.
    expect((await c.t.http<unknown[]>("GET", `/_alerting/watchers/_list?function_id=${place.function_id}`)).body).toHaveLength(1);

    // Each message goes as its field is put right.
    await form.getByLabel("Watcher name").fill("Warm watch");
    await form.locator(".field-error").nth(2).waitFor({ state: "detached" });
    await expect(form.locator(".field-error").count()).resolves.toBe(2);
    await trigger.getByLabel("Minimum duration").fill("30s");
    await threshold.fill("72.5");
    await expect(form.locator(".field-error").count()).resolves.toBe(0);
    await form.getByRole("button", { name: "Create" }).click();
    await page.getByText(/Successfully created watcher with ID/).waitFor();
    const list = (await c.t.http<{ watcher_id: string; watcher_name: string }[]>("GET", `/_alerting/watchers/_list?function_id=${place.function_id}`)).body;
    const made = list.find((w) => w.watcher_name === "Warm watch");
    expect(made).toBeDefined();
    const watcher = (await c.t.http<{ triggers: { minimum_duration: string; condition: { threshold: string }[] }[] }>("GET", `/_alerting/watchers/${made?.watcher_id}`)).body;
    expect(watcher.triggers[0]).toMatchObject({ minimum_duration: "30s", condition: [expect.objectContaining({ threshold: "72.5" })] });
    expect(errors).toEqual([]);
    await context.close();
  });

  it("takes an ISO 20816 zone as the threshold of a velocity tag (>= or == only), a number elsewhere, and lists the saved watcher with its zone", async () => {
    // A gateway of its own (one watcher per gateway), reading a monitor of its own (one gateway per monitor).
    const reader = (await c.t.http<{ id: string }>("POST", "/_config/monitors", { body: { monitor_name: "Zone reader", monitor_type: "process-monitor", function_id: place.function_id } })).body.id;
    await createEdge(c.t, { ...gatewayBody(place, "Zone gateway"), registration: [{ monitor_id: reader, slave_id: "2", registered_by_asset: false }] });
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, "#/settings/watchers");
    await page.getByRole("button", { name: "New watcher" }).click();
    const form = page.getByRole("form", { name: "New watcher" });
    await form.getByLabel("Watcher name").fill("Vibration zone watch");
    await form.getByLabel("Site").selectOption({ label: `Site ${NAME}` });
    await form.getByLabel("Plant").selectOption({ label: `Plant ${NAME}` });
    await form.getByLabel("Function").selectOption({ label: `Cooling ${NAME}` });
    const gateway = form.getByLabel("Gateway");
    await gateway.locator("option", { hasText: "Zone gateway" }).waitFor({ state: "attached" });
    await gateway.selectOption({ label: `Zone gateway (Cooling ${NAME})` });
    const trigger = form.getByRole("group", { name: "Trigger 1" });
    await trigger.getByLabel("Trigger name").fill("Vibration in zone C");
    await trigger.getByRole("group", { name: "Notify users" }).getByLabel("admin@localhost").check();
    const condition = trigger.getByRole("group", { name: "Condition 1" });
    await condition.getByLabel("Monitor").selectOption({ label: `Bearing ${NAME}` });

    // A temperature takes a number only: no zone is offered.
    await condition.getByLabel("Tag").selectOption({ label: "Temperature (C)" });
    await condition.getByLabel("Threshold (C)").waitFor();
    await expect(condition.getByLabel("Zone").count()).resolves.toBe(0);

    // The velocity tag (mm/s of a condition monitor) takes a zone, in plain words.
    await condition.getByLabel("Tag").selectOption({ label: "Vibration (mm/s)" });
    await condition.getByLabel("Comparison").selectOption("<");
    const zone = condition.getByLabel("Zone");
    await expect(zone.locator("option").allTextContents()).resolves.toEqual(["No zone: a number", "ISO 20816 zone A or worse", "ISO 20816 zone B or worse", "ISO 20816 zone C or worse", "ISO 20816 zone D or worse"]);
    await zone.selectOption({ label: "ISO 20816 zone C or worse" });
    // With a zone, the comparisons are >= and == only (the one chosen before moves to >=), and the number is not taken.
    await expect(condition.getByLabel("Comparison").locator("option").allTextContents()).resolves.toEqual([">=", "=="]);
    await expect(condition.getByLabel("Comparison").inputValue()).resolves.toBe(">=");
    await expect(condition.getByLabel("Threshold (mm/s)").isDisabled()).resolves.toBe(true);
    await condition.scrollIntoViewIfNeeded();
    await shot(page, "console-shift-watcher-zone-form");
    await form.getByRole("button", { name: "Create" }).click();
    await page.getByText(/Successfully created watcher with ID/).waitFor();

    const list = (await c.t.http<{ watcher_id: string; watcher_name: string }[]>("GET", `/_alerting/watchers/_list?function_id=${place.function_id}`)).body;
    const made = list.find((w) => w.watcher_name === "Vibration zone watch");
    expect(made).toBeDefined();
    const watcher = (await c.t.http<{ triggers: { condition: { comparison: string; tag_id: string; threshold: string }[] }[] }>("GET", `/_alerting/watchers/${made?.watcher_id}`)).body;
    expect(watcher.triggers[0].condition).toEqual([expect.objectContaining({ comparison: ">=", tag_id: "vib", threshold: "zone:C" })]);
    // The list says the zone in the same words.
    const row = page.getByRole("row").filter({ has: page.getByText("Vibration zone watch", { exact: true }) });
    await row.getByText(/vib in ISO 20816 zone C or worse/).waitFor();
    await shot(page, "console-shift-watcher-zone");
    // Opened again, the form shows the zone chosen, not a number.
    await row.getByRole("button", { name: /^Edit/ }).click();
    const edited = page.getByRole("form", { name: "Edit watcher Vibration zone watch" }).getByRole("group", { name: "Condition 1" });
    await expect(edited.getByLabel("Zone").inputValue()).resolves.toBe("C");
    await expect(edited.getByLabel("Threshold (mm/s)").isDisabled()).resolves.toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });
});

/**
 * Every piece of text on the page whose contrast with its ground is below WCAG 2 AA (4.5:1, or
 * 3:1 for large text: 24 px, or 18.66 px bold), computed from the page's own colours: the text's
 * colour over the grounds behind it, blended where they are translucent. Disabled controls are
 * exempt (WCAG 1.4.3).
 */
const LOW_CONTRAST = `(() => {
  const parse = (c) => {
    const m = /rgba?\\(([^)]+)\\)/.exec(c);
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const over = (top, base) => ({ r: top.r * top.a + base.r * (1 - top.a), g: top.g * top.a + base.g * (1 - top.a), b: top.b * top.a + base.b * (1 - top.a), a: 1 });
  const lum = ({ r, g, b }) => {
    const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ground = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) {
        layers.push(c);
        if (c.a >= 1) break;
      }
    }
    let base = { r: 255, g: 255, b: 255, a: 1 };
    for (const l of layers.reverse()) base = over(l, base);
    return base;
  };
  const failures = [];
  let checked = 0;
  for (const el of document.body.querySelectorAll("*")) {
    const own = [...el.childNodes].filter((n) => n.nodeType === 3 && n.textContent.trim()).map((n) => n.textContent.trim()).join(" ");
    if (!own || el.closest(":disabled, option, script, style, noscript")) continue;
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (box.width === 0 || box.height === 0 || style.visibility === "hidden" || el.closest(".sr-only")) continue;
    const bg = ground(el);
    const fg = over(parse(style.color), bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    checked++;
    if (ratio < (large ? 3 : 4.5)) failures.push(own.slice(0, 40) + " " + ratio.toFixed(2) + " " + style.color + " on " + JSON.stringify(bg));
  }
  return { checked, failures };
})()`;

describe("the control-room theme", () => {
  it("keeps every text of the Overview, the board, an asset page and the watcher form at WCAG AA contrast on the dark ground", async () => {
    // An alarm standing, so that the alarm colours are on the pages too.
    await send([{ tag_id: "temp", ts: Date.now() - 100, value: 88 }]);
    await eventually(
      () => c.t.http<unknown[]>("GET", `/_alerting/alerts/_list?function_id=${place.function_id}&is_hidden=0`),
      (res) => res.status === 200 && res.body.length > 0,
    );
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, "#/overview");
    await page.getByText("Display", { exact: true }).click();
    await page.getByLabel("Theme").selectOption("dark");
    await page.getByText("Display", { exact: true }).click();
    const ground = await page.evaluate<string>("getComputedStyle(document.documentElement).backgroundColor");
    // A dark ground: each channel below a quarter.
    expect(ground.match(/\d+/g)?.slice(0, 3).every((v) => Number(v) < 64)).toBe(true);
    for (const [hash, ready] of [
      ["#/overview", () => page.getByRole("treeitem", { name: `Asset Pump ${NAME}` }).waitFor()],
      ["#/alerts", () => page.getByRole("link", { name: "Bearing hot" }).first().waitFor()],
      [`#/assets/${place.asset_id}`, () => page.getByRole("region", { name: "Alarms" }).getByRole("table").first().waitFor()],
      ["#/settings/watchers", () => page.getByRole("button", { name: "New watcher" }).waitFor()],
    ] as const) {
      await page.goto(`${c.t.baseUrl}/${hash}`);
      await ready();
      if (hash === "#/settings/watchers") {
        await page.getByRole("button", { name: "New watcher" }).click();
        await page.getByRole("form", { name: "New watcher" }).getByRole("button", { name: "Create" }).click();
        await page.locator(".field-error").first().waitFor();
      }
      const { checked, failures } = await page.evaluate<{ checked: number; failures: string[] }>(LOW_CONTRAST);
      expect(checked).toBeGreaterThan(20);
      expect({ page: hash, failures }).toEqual({ page: hash, failures: [] });
    }
    await page.goto(`${c.t.baseUrl}/#/alerts`);
    await page.getByRole("link", { name: "Bearing hot" }).first().waitFor();
    await shot(page, "console-shift-dark-board");
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("the alert page", () => {
  it("counts an active alert's duration up as it stands and shows a note as soon as it is added", async () => {
    await send([{ tag_id: "temp", ts: Date.now() - 100, value: 89 }]);
    const { body } = await eventually(
      () => c.t.http<{ alerts: { _id: string }[] }>("GET", "/_alerting/alerts/_active"),
      (res) => res.status === 200 && res.body.alerts.length > 0,
    );
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, `#/alerts/${body.alerts[0]._id}`);
    const details = page.getByRole("region", { name: "Details" });
    const since = details.locator(".since");
    await since.waitFor();
    const before = await since.textContent();
    await page.waitForFunction(
      ([el, text]) => (el as { textContent: string | null }).textContent !== text,
      [await since.elementHandle(), before] as const,
      { timeout: 3000 },
    );
    await page.getByRole("form", { name: "Add note" }).getByLabel("Note").fill("Bearing greased at 14:00");
    await page.getByRole("form", { name: "Add note" }).getByRole("button", { name: "Add note" }).click();
    await details.getByText("Bearing greased at 14:00").waitFor({ timeout: 3000 });
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("trends to compare", () => {
  it("draws two tags on one trend with the period before overlaid, spans the whole range asked, and exports the range as CSV and the chart as PNG", async () => {
    const now = Date.now();
    // Two days of the bearing's temperature: yesterday warmer than today.
    const readings = [];
    for (let t = now - 47 * HOUR; t < now - 60_000; t += HOUR / 2) {
      readings.push({ tag_id: "temp", ts: t, value: t < now - 24 * HOUR ? 70 : 60 });
      readings.push({ tag_id: "vib", ts: t, value: 2.5 });
    }
    await send(readings);
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, `#/assets/${place.asset_id}`);
    const trend = page.getByRole("region", { name: "Trend" });
    await trend.getByRole("img", { name: /trend, \d+ points in C/ }).waitFor({ timeout: 15_000 });
    // A second tag, of another unit, on its own axis.
    await trend.getByLabel("Add a tag").selectOption({ label: `Vibration (mm/s) · Bearing ${NAME}` });
    await trend.locator(".u-legend").getByText(`Vibration (Bearing ${NAME})`).waitFor({ timeout: 10_000 });
    await expect(trend.locator(".u-legend").textContent()).resolves.toMatch(/Vibration \(Bearing shift\)\s*2\.500 mm\/s/);
    await trend.getByLabel("Compare with").selectOption({ label: "The period before" });
    // The legend names the second period and reads values without the pointer on the chart.
    const legend = trend.locator(".u-legend");
    await legend.getByText(/The period before \(/).waitFor({ timeout: 10_000 });
    await expect(legend.textContent()).resolves.toMatch(/Temperature\s*\d+\.\d{3} C/);
    await shot(page, "console-shift-trend-compare");

    const href = await trend.getByRole("link", { name: "Export CSV" }).getAttribute("href");
    expect(href).toMatch(new RegExp(`/_cm/monitors/${place.monitor_id}/_export\\?from=.*&to=`));
    const csv = await page.request.get(`${c.t.baseUrl}${href}`);
    expect(csv.status()).toBe(200);
    const lines = (await csv.text()).trim().split("\n");
    expect(lines[0]).toMatch(/^timestamp,(Temperature,Vibration|Vibration,Temperature)$/);
    expect(lines.length).toBeGreaterThan(40);
    const [download] = await Promise.all([page.waitForEvent("download"), trend.getByRole("button", { name: "Save PNG" }).click()]);
    expect(download.suggestedFilename()).toMatch(/\.png$/);
    expect(errors).toEqual([]);
    await context.close();
  });
});
