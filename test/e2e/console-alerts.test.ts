/**
 * The console's Alerts view in a real browser against a real single process: an alert raised by
 * readings sent through a gateway's ingest route arrives on the board without a reload; it is
 * acknowledged, shelved, assigned and noted from its page and the API shows each; its page,
 * opened by the `#/alerts/<id>` link of the alert emails, draws the trend with the threshold; a
 * general-user who may not shelve reads the service's refusal; several are acknowledged at once
 * from the board; the KPI view counts them.
 */
import type { Page } from "playwright-core";
import { ADMIN } from "../helpers/node";
import { shot, signIn, startConsole, type ConsoleHarness } from "../helpers/console";
import { gatewayBody, idFrom, makePlace, makeUser, watcherBody, type Place } from "./alerting-fixtures";
import { createEdge, ingest } from "./pipelines-fixtures";

interface HistoryEntry {
  at: string;
  by: string | null;
  action: string;
  detail: string | null;
}
interface Alert {
  _id: string;
  trigger_id: string;
  trigger_name: string;
  state: string;
  ack_state: string;
  acked_by: string | null;
  shelved_until: string | null;
  assignee: string | null;
  note: string;
  history: HistoryEntry[];
}
interface Kpi {
  alerts: number;
  top_triggers: { trigger_name: string; count: number }[];
}

let c: ConsoleHarness;
let place: Place;
let gw: { id: string; ingest_key: string };
let operator: { username: string; password: string };
let hotId = "";

async function send(readings: { tag_id: string; ts: number; value: number }[]): Promise<void> {
  const res = await ingest<{ accepted: number }>(c.t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, {
    readings: readings.map((r) => ({ monitor_id: place.monitor_id, ...r })),
  });
  expect(res.status).toBe(200);
  expect(res.body.accepted).toBe(readings.length);
}

async function alertOf(id: string): Promise<Alert> {
  const res = await c.t.http<Alert>("GET", `/_alerting/alerts/${id}`);
  expect(res.status).toBe(200);
  return res.body;
}

/** The status line a form shows under its button after the service answered. */
const answerIn = (page: Page, form: string) => page.getByRole("form", { name: form }).getByRole("status");

beforeAll(async () => {
  c = await startConsole();
  place = await makePlace(c.t.http, "ca");
  gw = await createEdge(c.t, gatewayBody(place, "Console gateway"));
  const body = watcherBody(place, gw.id, { watcher_name: "Console watch" }, { minimum_duration: "0s" });
  body.triggers.push({
    ...body.triggers[0],
    id: "t2",
    name: "Running rough",
    condition: [{ comparison: ">", monitor_id: place.monitor_id, tag_id: "vib", threshold: "7.1" }],
    severity: 2,
  });
  idFrom((await c.t.http("POST", "/_alerting/watchers", { body })).body);
  operator = await makeUser(c.t.http, {
    username: "operator.alerts@example.com",
    user_type: "general-user",
    site_id: place.site_id,
    plant_id: place.plant_id,
    modules: ["Alerting", "Condition Monitoring"],
  });
  // Forty minutes of calm readings before the excursion: the trend has a before.
  const now = Date.now();
  const calm = [];
  for (let t = now - 40 * 60_000; t < now - 60_000; t += 30_000) calm.push({ tag_id: "temp", ts: t, value: 55 + 3 * Math.sin(t / 300_000) });
  await send(calm);
}, 120_000);

afterAll(async () => {
  await c?.stop();
});

describe("the alerts board", () => {
  it("shows an alert raised by ingested readings within 5 s, without a reload, marked unacknowledged with its severity in a word", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, "#/alerts");
    await page.getByRole("heading", { name: "Alerts", exact: true }).waitFor();
    await page.getByText("No alert matches these filters").waitFor();
    await page.evaluate("window.keptAcrossRefresh = true");

    const sent = Date.now();
    await send([
      { tag_id: "temp", ts: sent - 2000, value: 84.5 },
      { tag_id: "temp", ts: sent - 1000, value: 86.25 },
    ]);
    const link = page.getByRole("link", { name: "Bearing hot" });
    await link.waitFor({ timeout: 5000 });
    const arrivedMs = Date.now() - sent;
    expect(arrivedMs).toBeLessThan(5000);
    // The same document: the board refreshed itself.
    expect(await page.evaluate("window.keptAcrossRefresh")).toBe(true);

    const row = page.getByRole("row").filter({ has: link });
    const text = await row.textContent();
    expect(text).toContain("▲ High");
    expect(text).toContain("Active");
    expect(text).toContain("Unacknowledged");
    expect(text).toContain(`Pump ca · Bearing ca · Temperature`);
    await expect(row.getByRole("button", { name: "Acknowledge" }).isVisible()).resolves.toBe(true);
    await expect(page.locator(".alert-summary").textContent()).resolves.toMatch(/1 active.*1 unacknowledged/s);
    hotId = /#\/alerts\/([0-9a-f-]{36})$/.exec((await link.getAttribute("href")) ?? "")?.[1] ?? "";
    expect(hotId).not.toBe("");
    console.log(`alert on the board ${arrivedMs} ms after the readings were sent`);
    await shot(page, "console-alerts-board");
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("one alert's page", () => {
  it("acknowledges with a note, shelves, assigns and notes from the page; the API shows each, with the history", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, "#/alerts");
    await page.getByRole("link", { name: "Bearing hot" }).click();
    await page.getByRole("heading", { name: "Alert: Bearing hot" }).waitFor();
    expect(page.url()).toMatch(new RegExp(`#/alerts/${hotId}$`));

    await page.getByLabel("Acknowledgement note (optional)").fill("Seen from the console");
    await page.getByRole("button", { name: "Acknowledge", exact: true }).click();
    await expect(answerIn(page, "Acknowledge").textContent()).resolves.toContain("Alert acknowledged");

    await page.getByLabel("Minutes").fill("30");
    await page.getByLabel("Reason").fill("Crew replacing the fan belt");
    await page.getByRole("button", { name: "Shelve" }).click();
    await page.getByRole("button", { name: "Unshelve" }).waitFor();
    await expect(page.getByRole("form", { name: "Unshelve" }).textContent()).resolves.toContain("Alert shelved");

    await page.getByLabel("Username").fill(operator.username);
    await page.getByRole("button", { name: "Assign" }).click();
    await expect(answerIn(page, "Assign").textContent()).resolves.toContain("Alert assigned");

    await page.getByLabel("Note", { exact: true }).fill("Belt ordered, due Tuesday");
    await page.getByRole("button", { name: "Add note" }).click();
    await expect(answerIn(page, "Add note").textContent()).resolves.toContain("Note added");

    const a = await alertOf(hotId);
    expect(a).toMatchObject({ ack_state: "acknowledged", acked_by: ADMIN.username, assignee: operator.username, note: "Belt ordered, due Tuesday" });
    expect(a.shelved_until).not.toBeNull();
    const shelvedFor = Date.parse(a.shelved_until ?? "") - Date.now();
    expect(shelvedFor).toBeGreaterThan(28 * 60_000);
    expect(shelvedFor).toBeLessThanOrEqual(30 * 60_000);
    const mine = a.history.filter((h) => h.by === ADMIN.username).map((h) => [h.action, h.detail]);
    expect(mine).toEqual([
      ["acknowledged", "Seen from the console"],
      ["shelved", expect.stringContaining("Crew replacing the fan belt")],
      ["assigned", expect.stringContaining(operator.username)],
      ["noted", "Belt ordered, due Tuesday"],
    ]);

    // The page says it too, in its details and its history (oldest first).
    const details = await page.locator(".facts").textContent();
    expect(details).toContain(`by ${ADMIN.username}`);
    expect(details).toMatch(/Shelved until.*\d/s);
    expect(details).toContain(`Assignee${operator.username}`);
    const historyRows = page.locator("table.history tbody tr");
    await expect(historyRows.allTextContents()).resolves.toEqual([
      expect.stringContaining("Opened"),
      expect.stringContaining("Notified"),
      expect.stringContaining("Seen from the console"),
      expect.stringContaining("Shelved"),
      expect.stringContaining("Assigned"),
      expect.stringContaining("Note added"),
    ]);
    await shot(page, "console-alerts-alert-handled");

    // On the board: acknowledged, shelved in words.
    await page.getByRole("link", { name: "← All alerts" }).click();
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: "Bearing hot" }) });
    await row.getByText("Shelved until").waitFor();
    await expect(row.textContent()).resolves.toContain(`Acknowledged by ${ADMIN.username}`);
    expect(await row.getByRole("button", { name: "Acknowledge" }).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("opened by its link, draws the trend around the opening at one point per pixel, with the threshold line", async () => {
    const { context, page, errors } = await c.open();
    const historyAsks: URL[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/_history")) historyAsks.push(new URL(r.url()));
    });
    await signIn(page, c.t.baseUrl, ADMIN, `#/alerts/${hotId}`);
    await page.getByRole("heading", { name: "Alert: Bearing hot" }).waitFor();
    const chart = page.getByRole("img", { name: /Temperature around the opening trend, \d+ points in C/ });
    await chart.waitFor();
    await expect(page.getByText("Dashed: the trigger's threshold (>= 80 C)").count()).resolves.toBe(1);
    await expect(page.locator(".trend-values").textContent()).resolves.toContain("Last 86.25 C");

    const ask = historyAsks[0];
    expect(ask.pathname).toBe(`/_cm/monitors/${place.monitor_id}/_history`);
    expect(ask.searchParams.get("tag")).toBe("Temperature");
    const points = Number(ask.searchParams.get("points"));
    const box = await chart.boundingBox();
    expect(points).toBeGreaterThan(100);
    expect(points).toBeLessThanOrEqual(Math.ceil(box?.width ?? 0));
    const opened = Date.parse((await alertOf(hotId)).history[0].at);
    expect(Date.parse(ask.searchParams.get("from") ?? "")).toBe(opened - 3_600_000);

    // The threshold is drawn: the dashed line in the severity colour crosses the plot (its pixels
    // are partly transparent where the 1.5 px line straddles two rows).
    const red = await chart.evaluate((el) => {
      const canvas = el.querySelector("canvas");
      if (!canvas) return 0;
      const ctx = canvas.getContext("2d");
      if (!ctx) return 0;
      const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
      let n = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i] > 170 && data[i + 1] < 70 && data[i + 2] < 80 && data[i + 3] > 100) n++;
      return n;
    });
    expect(red).toBeGreaterThan((box?.width ?? 0) / 3);
    await shot(page, "console-alerts-alert-trend");

    // Dragging across the chart asks the history route again for the narrower range.
    const asked = historyAsks.length;
    const plot = page.locator(".u-over");
    const over = await plot.boundingBox();
    if (!over) throw new Error("no plot area");
    await page.mouse.move(over.x + over.width * 0.3, over.y + over.height / 2);
    await page.mouse.down();
    await page.mouse.move(over.x + over.width * 0.6, over.y + over.height / 2, { steps: 8 });
    await page.mouse.up();
    await page.getByRole("button", { name: "Show whole range" }).waitFor();
    // The zoom's request may leave a moment after the button shows (a loaded machine): up to 5 s.
    for (const until = Date.now() + 5000; historyAsks.length === asked && Date.now() < until; ) await page.waitForTimeout(50);
    const zoomed = historyAsks.slice(asked).at(-1);
    if (!zoomed) throw new Error("no history request after the zoom");
    const span = (u: URL) => Date.parse(u.searchParams.get("to") ?? "") - Date.parse(u.searchParams.get("from") ?? "");
    expect(span(zoomed)).toBeLessThan(span(ask) * 0.5);
    expect(Date.parse(zoomed.searchParams.get("from") ?? "")).toBeGreaterThan(Date.parse(ask.searchParams.get("from") ?? ""));
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows a general-user who may not shelve the service's refusal, and the alert stays unshelved", async () => {
    expect((await c.t.http("POST", `/_alerting/alerts/${hotId}/_unshelve`)).status).toBe(200);
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, operator, `#/alerts/${hotId}`);
    await page.getByRole("heading", { name: "Alert: Bearing hot" }).waitFor();
    await page.getByLabel("Minutes").fill("15");
    await page.getByLabel("Reason").fill("Would like some quiet");
    await page.getByRole("button", { name: "Shelve" }).click();
    const refusal = page.getByRole("form", { name: "Shelve" }).getByRole("alert");
    await expect(refusal.textContent()).resolves.toContain("Unauthorized operation");
    expect((await alertOf(hotId)).shelved_until).toBeNull();
    await shot(page, "console-alerts-shelve-refused");
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("filters and acknowledging many", () => {
  it("honours the overview's function link, filters by acknowledgement, and acknowledges the selected alerts at once", async () => {
    const now = Date.now();
    await send([
      { tag_id: "vib", ts: now - 1500, value: 9.2 },
      { tag_id: "vib", ts: now - 500, value: 9.4 },
    ]);
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, `#/alerts?function_id=${place.function_id}`);
    await page.getByRole("link", { name: "Running rough" }).waitFor({ timeout: 5000 });
    const filters = page.getByRole("form", { name: "Filters" });
    await expect(filters.getByLabel("Function").locator("option:checked").textContent()).resolves.toBe("Cooling ca");
    await expect(filters.getByLabel("Plant").locator("option:checked").textContent()).resolves.toBe("Plant ca");

    await filters.getByLabel("Acknowledged").selectOption("unacknowledged");
    await page.waitForURL(/ack_state=unacknowledged/);
    await page.getByRole("link", { name: "Bearing hot" }).waitFor({ state: "detached" });
    expect(page.url()).toContain(`function_id=${place.function_id}`);
    await expect(page.getByRole("link", { name: "Running rough" }).count()).resolves.toBe(1);

    await page.getByRole("checkbox", { name: /^Select Running rough/ }).check();
    await page.getByText("1 selected").waitFor();
    await page.getByRole("button", { name: "Acknowledge selected" }).click();
    await page.getByText("Acknowledged: 1 of 1 selected").waitFor();
    await page.getByText("No alert matches these filters").waitFor();

    const list = await c.t.http<Alert[]>("GET", `/_alerting/alerts/_list?function_id=${place.function_id}&is_hidden=0`);
    expect(list.body.map((a) => [a.trigger_name, a.ack_state]).sort()).toEqual([
      ["Bearing hot", "acknowledged"],
      ["Running rough", "acknowledged"],
    ]);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("the KPI view", () => {
  it("shows the alarm figures of the plant, the 10-minute rate chart and the bad actors", async () => {
    const kpi = await c.t.http<Kpi>("GET", `/_alerting/alerts/_kpi?plant_id=${place.plant_id}`);
    expect(kpi.body.alerts).toBe(2);
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, "#/alerts");
    await page.getByRole("link", { name: "Performance (KPI)" }).click();
    await page.getByRole("heading", { name: "Alarm performance" }).waitFor();
    await page.getByRole("form", { name: "Place and range" }).getByLabel("Plant").selectOption({ label: "Plant ca" });
    await page.waitForURL(new RegExp(`plant_id=${place.plant_id}`));
    const figure = page.locator(".figure").filter({ hasText: /^Alerts/ });
    await expect(figure.locator("[data-figure=alerts]").textContent()).resolves.toBe("2");
    // The chart's highest bar is the busiest 10-minute window: the peak the figures give.
    const peak = await page.locator(".figure").filter({ hasText: /^Peak in 10 min/ }).locator(".figure-value").textContent();
    expect(["1", "2"]).toContain(peak);
    await page.getByRole("img", { name: new RegExp(`^Alerts opened per 10 minutes, \\d+ bars, highest ${peak}$`) }).waitFor();
    const bad = page.getByRole("table").filter({ has: page.getByText("The 10 triggers that opened the most alerts") });
    await expect(bad.textContent()).resolves.toContain("Bearing hot");
    await expect(bad.textContent()).resolves.toContain("Console watch");
    await shot(page, "console-alerts-kpi");
    expect(errors).toEqual([]);
    await context.close();
  });
});
