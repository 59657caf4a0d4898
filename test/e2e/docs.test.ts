/** /docs in a real browser (Debian's chromium, driven by playwright-core): the operations are listed and can be filtered. */
import fs from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { SERVICE_SCHEMAS } from "../../services";
import { ADMIN, startTestNode, type TestNode } from "../helpers/node";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

let t: TestNode;
let browser: Browser;
beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  t = await startTestNode({ services: Object.keys(SERVICE_SCHEMAS), env: { LOG_LEVEL: "fatal" } });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

describe("/docs", () => {
  it("is served without credentials as a self-contained page", async () => {
    const res = await t.http<string>("GET", "/docs", { auth: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    // No CDN: nothing is loaded from another origin.
    expect(res.body).not.toMatch(/(src|href)=["']?https?:/);
  });

  it("lists every operation of /openapi.json by group, with its messages", async () => {
    const doc = (await t.http<{ paths: Record<string, Record<string, unknown>> }>("GET", "/openapi.json", { auth: null })).body;
    // Each operation once: the spec's double forms of a path are named inside it, not listed twice.
    const count = new Set(Object.values(doc.paths).flatMap((methods) => Object.values(methods).map((op) => (op as { "x-action": string })["x-action"]))).size;
    const page = await browser.newPage();
    const external: string[] = [];
    const scriptErrors: string[] = [];
    page.on("pageerror", (e) => scriptErrors.push(e.message));
    page.on("request", (r) => {
      if (!r.url().startsWith(t.baseUrl)) external.push(r.url());
    });
    await page.goto(`${t.baseUrl}/docs`);
    await page.waitForSelector("body[data-ready=true]", { timeout: 15000 }).catch((err: Error) => {
      throw new Error(`${err.message}; script errors: ${scriptErrors.join("; ")}`);
    });
    expect(await page.locator("details.operation").count()).toBe(count);
    expect(await page.locator("section.tag h2").allTextContents()).toEqual(expect.arrayContaining(["Sites", "Watchers", "Energy metrics", "Ingestion (edge gateways)"]));

    const listSites = page.locator('details.operation[data-method="GET"][data-path="/_config/sites/_list"]');
    await expect(listSites.locator("summary").textContent()).resolves.toContain("List the sites");
    await expect(listSites.locator("summary").textContent()).resolves.not.toMatch(/\d+\./);
    const createSite = page.locator('details.operation[data-method="POST"][data-path="/_config/sites"]');
    await createSite.locator("summary").click();
    await expect(createSite.locator(".body").innerText()).resolves.toContain("Either of latitude or longitude has to be specified");
    expect(external).toEqual([]);
    expect(scriptErrors).toEqual([]);
    await page.close();
  });

  it("filters the operations by what is typed", async () => {
    const page = await browser.newPage();
    await page.goto(`${t.baseUrl}/docs`);
    await page.waitForSelector("body[data-ready=true]", { timeout: 15000 });
    await page.fill("#filter", "Invalid Site ID");
    const visible = await page.locator("details.operation:not([hidden])").evaluateAll((els) => els.map((e) => e.getAttribute("data-method") + " " + e.getAttribute("data-path")));
    expect(visible).toEqual(
      expect.arrayContaining(["GET /_config/sites/{site_id}", "DELETE /_config/sites/{site_id}", "POST /_config/plants"]),
    );
    expect(visible).not.toContain("GET /_config/sites/_list");
    await page.close();
  });
});

describe("/docs for a newcomer", () => {
  it("finds the spectrum operation by a search for _spectrum, with typed fields and their units", async () => {
    const page = await browser.newPage();
    await page.goto(`${t.baseUrl}/docs`);
    await page.waitForSelector("body[data-ready=true]", { timeout: 15000 });
    await page.getByLabel("Search operations").fill("_spectrum");
    const visible = page.locator("details.operation:not([hidden])");
    await expect(visible.evaluateAll((els) => els.map((e) => e.getAttribute("data-path")))).resolves.toContain("/_cm/fft/_spectrum");
    const spectrum = page.locator('details.operation[data-path="/_cm/fft/_spectrum"]');
    await spectrum.locator("summary").click();
    const fields = await spectrum.locator("table").first().innerText();
    expect(fields).toMatch(/timestamp\s+query\s+\S+/);
    expect(fields).toContain("epoch ms");
    await page.close();
  });

  it("tries GET /_config/server-time with the credentials typed on the page and shows the number it answers", async () => {
    const page = await browser.newPage();
    await page.goto(`${t.baseUrl}/docs`);
    await page.waitForSelector("body[data-ready=true]", { timeout: 15000 });
    await page.getByLabel("Username", { exact: true }).fill(ADMIN.username);
    await page.getByLabel("Password", { exact: true }).fill(ADMIN.password);
    const op = page.locator('details.operation[data-path="/_config/server-time"]');
    await op.locator("summary").click();
    await op.getByRole("button", { name: "Send" }).click();
    const result = op.locator("pre.result");
    await expect(result.innerText()).resolves.toBeDefined();
    await page.waitForFunction((el) => /HTTP \d+/.test(el?.textContent ?? ""), await result.elementHandle(), { timeout: 10000 });
    const text = await result.innerText();
    expect(text).toMatch(/^HTTP 200\n\d{10}(\.\d+)?$/);
    const seconds = Number(text.split("\n")[1]);
    expect(Math.abs(seconds - Date.now() / 1000)).toBeLessThan(60);
    await page.close();
  });

  it("is linked from GET /", async () => {
    const page = await browser.newPage();
    await page.goto(`${t.baseUrl}/`);
    await page.getByRole("link", { name: "/docs" }).click();
    await page.waitForSelector("body[data-ready=true]", { timeout: 15000 });
    expect(new URL(page.url()).pathname).toBe("/docs");
    await page.close();
  });
});
