/**
 * The console for the people on shift (docs/console.md, "For the people on shift"), in a real
 * browser against a real single process: an alarm opened by readings posted through a gateway's
 * ingest route while the person is on Assets shows in the header's Alarm summary, a New alarm
 * banner and the page's title within 3 s; the asset with the alarm is not shown as normal on the
 * Overview, the asset list and its own page, which lists its alarms; a shelved alarm is counted
 * apart, not as active.
 */
import type { Page } from "playwright-core";
import { ADMIN } from "../helpers/node";
import { shot, signIn, startConsole, type ConsoleHarness } from "../helpers/console";
import { gatewayBody, idFrom, makePlace, watcherBody, type Place } from "./alerting-fixtures";
import { createEdge, ingest } from "./pipelines-fixtures";

let c: ConsoleHarness;
let place: Place;
let gw: { id: string; ingest_key: string };
const NAME = "shift";

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
