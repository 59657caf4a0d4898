/**
 * The console's frame in a real browser: sign-in and sign-out, the overview's tree, what a
 * general-user is shown, the session cookie's flags, the CSRF rule, and a lost session that
 * brings the sign-in back over the page the user was on.
 */
import { ADMIN } from "../helpers/node";
import { shot, signIn, startConsole, type ConsoleHarness } from "../helpers/console";
import { makePlace, makeUser, type Place } from "./alerting-fixtures";

let c: ConsoleHarness;
let place: Place;
let other: Place;

beforeAll(async () => {
  c = await startConsole();
  place = await makePlace(c.t.http, "console");
  other = await makePlace(c.t.http, "elsewhere");
}, 120_000);

afterAll(async () => {
  await c?.stop();
});

describe("sign-in", () => {
  it("is a form with labelled fields; a wrong password is answered in the service's words and no cookie is set", async () => {
    const { context, page, errors } = await c.open();
    const external: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(c.t.baseUrl)) external.push(r.url());
    });
    await page.goto(`${c.t.baseUrl}/`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await shot(page, "console-sign-in");
    await page.getByLabel("Username").fill(ADMIN.username);
    await page.getByLabel("Password").fill("not-the-password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("Invalid credentials");
    expect(await context.cookies()).toEqual([]);
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("sets an HttpOnly, SameSite=Strict session cookie that page scripts cannot read, and signs out", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    expect(await page.evaluate("document.cookie")).toBe("");
    // No password kept in browser storage.
    const stored = await page.evaluate<string>("JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })");
    expect(stored).not.toContain(ADMIN.password);

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    const status = await page.evaluate(async () => (await fetch("/_auth/session", { headers: { "X-Requested-With": "ims-console" } })).status);
    expect(status).toBe(401);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("the overview", () => {
  it("shows the caller's sites, plants, functions and assets as a tree, each asset's health in a word", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl);
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const tree = page.getByRole("tree");
    await tree.getByRole("treeitem", { name: "Site Site console" }).waitFor();
    await tree.getByRole("treeitem", { name: "Plant Plant console" }).waitFor();
    await tree.getByRole("treeitem", { name: "Function Cooling console" }).waitFor();
    const asset = tree.getByRole("treeitem", { name: "Asset Pump console" });
    await expect(asset.textContent()).resolves.toContain("Normal");
    await expect(asset.getByRole("link", { name: "Pump console" }).getAttribute("href")).resolves.toBe(`#/assets/${place.asset_id}`);
    await shot(page, "console-overview");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows a general-user only its plant and the views of its modules", async () => {
    const user = await makeUser(c.t.http, {
      username: "operator.console@example.com",
      user_type: "general-user",
      site_id: place.site_id,
      plant_id: place.plant_id,
      modules: ["Configuration", "Alerting"],
    });
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, user);
    const nav = page.getByRole("navigation", { name: "Main" });
    await expect(nav.getByRole("link").allTextContents()).resolves.toEqual(["Overview", "Assets", "Alerts", "Pipelines"]);
    await page.getByRole("treeitem", { name: "Plant Plant console" }).waitFor();
    expect(await page.getByRole("treeitem", { name: "Plant Plant elsewhere" }).count()).toBe(0);
    expect(await page.getByText(`Site elsewhere`).count()).toBe(0);
    expect(other.plant_id).not.toBe(place.plant_id);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("keeps a user whose modules refuse a route signed in: a refusal of rights is not a lost session", async () => {
    const user = await makeUser(c.t.http, {
      username: "alerts.only@example.com",
      user_type: "general-user",
      site_id: place.site_id,
      plant_id: place.plant_id,
      modules: ["Alerting"],
    });
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, user);
    await page.getByText("needs the Configuration module").waitFor();
    await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link").allTextContents()).resolves.toEqual(["Overview", "Alerts"]);
    // A route of a module not granted answers 401; the page stays signed in.
    const status = await page.evaluate(async () => (await fetch("/_config/sites/_list", { headers: { "X-Requested-With": "ims-console" } })).status);
    expect(status).toBe(401);
    await page.getByRole("link", { name: "Alerts" }).click();
    await page.getByRole("heading", { name: "Alerts" }).waitFor();
    expect(await page.getByRole("heading", { name: "Sign in" }).count()).toBe(0);
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("the session", () => {
  it("refuses a change made with the cookie but without the console's header (CSRF), and takes it with the header", async () => {
    const { context, page } = await c.open();
    await signIn(page, c.t.baseUrl);
    const answers = await page.evaluate(async (functionId) => {
      const body = JSON.stringify({ asset_name: "Pump csrf", function_id: functionId, asset_category: "Rotating" });
      const bare = await fetch("/_config/assets", { method: "POST", headers: { "Content-Type": "application/json" }, body });
      const withHeader = await fetch("/_config/assets", { method: "POST", headers: { "Content-Type": "application/json", "X-Requested-With": "ims-console" }, body });
      return [bare.status, await bare.json(), withHeader.status];
    }, place.function_id);
    expect(answers).toEqual([403, { error: { status: 403, message: "Unauthorized operation" } }, 200]);
    const assets = await c.t.http<{ asset_name: string }[]>("GET", `/_config/assets/_list?function_id=${place.function_id}`);
    expect(assets.body.filter((a) => a.asset_name === "Pump csrf")).toHaveLength(1);
    await context.close();
  });

  it("once lost, brings the sign-in back over the page, which goes on where it was after signing in", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, ADMIN, "#/overview");
    await page.getByRole("treeitem", { name: "Site Site console" }).waitFor();
    // The session ends (as at its idle expiry): the cookie no longer names one.
    await page.evaluate(async () => {
      await fetch("/_auth/session", { method: "DELETE", headers: { "X-Requested-With": "ims-console" } });
    });
    // The overview's next refresh meets 401.
    await page.getByText("Your session has ended").waitFor({ timeout: 15_000 });
    expect(page.url()).toMatch(/#\/overview$/);
    await page.getByLabel("Username").fill(ADMIN.username);
    await page.getByLabel("Password").fill(ADMIN.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("treeitem", { name: "Site Site console" }).waitFor();
    expect(page.url()).toMatch(/#\/overview$/);
    expect(errors).toEqual([]);
    await context.close();
  });
});
