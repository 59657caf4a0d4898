/**
 * `npm run bench:console`: the console in headless Chromium on this machine, against one
 * node running every service.
 *   1. Seeded: a site with a plant, a function, an asset and its condition monitor (the e2e
 *      fixtures); a year of one-minute readings of the monitor's Temperature tag ending now (525,600,
 *      by SQL, with their rollups) and one capture of 65,536 samples (a spectrum of 32,768 bins).
 *   2. Time to first meaningful paint, BENCH_CONSOLE_LOADS (10) loads each, median and max, from
 *      the navigation's start: the overview (its tree drawn) and the asset page (its first trend
 *      drawn with data: console/lib/chart.js marks the frame). Cold: a new browser context each load (empty
 *      cache, the session cookie set); warm: the same context reloaded (a user's second visit).
 *      Target: < 1.5 s.
 *   3. JavaScript shipped for the first view: the gzip bytes of every script the overview's cold
 *      load fetched (target < 250 KB), and all bytes (HTML, CSS, JS).
 *   4. The spectrum of 32,768 bins drawn on the asset page: the draw time the spectrum component
 *      reports (`data-draw-ms`), BENCH_CONSOLE_LOADS times (target < 100 ms).
 */
import { Client } from "pg";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { SERVICE_SCHEMAS } from "../services";
import { ADMIN, startTestNode, type TestNode } from "../test/helpers/node";
import { CHROMIUM } from "../test/helpers/console";
import { makePlace } from "../test/e2e/alerting-fixtures";
import { pct } from "./alerts-common";
import { seedPartitions, seedRollups, seedSeries } from "./history-seed";

const LOADS = Number(process.env.BENCH_CONSOLE_LOADS ?? 10);
const PAINT_TARGET_MS = 1500;
const JS_TARGET_BYTES = 250 * 1024;
const DRAW_TARGET_MS = 100;
const MIN = 60_000;
const DAY = 86_400_000;
const SAMPLES = 65_536;
const RUNNING_HZ = 24.75;

const median = (xs: number[]) => pct(xs, 0.5);
const ms0 = (x: number) => `${Math.round(x)} ms`;
const verdict = (ok: boolean) => (ok ? "met" : "MISSED");

/** A signed-in browser context: the session cookie from POST /_auth/session, as the sign-in form gets it. */
async function signedIn(browser: Browser, baseUrl: string): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const res = await context.request.post(`${baseUrl}/_auth/session`, {
    data: { username: ADMIN.username, password: ADMIN.password },
    headers: { "X-Requested-With": "ims-console" },
  });
  if (!res.ok()) throw new Error(`sign-in: ${res.status()} ${await res.text()}`);
  return context;
}

/** Records, in the page, when the first element matching `selector` appears (ms since navigation start). */
const FIRST_SEEN = (selector: string) => `
  new MutationObserver((_, obs) => {
    if (document.querySelector(${JSON.stringify(selector)})) { window.__firstSeen = performance.now(); obs.disconnect(); }
  }).observe(document, { childList: true, subtree: true });`;

/** Loads `url` in `page` and answers the first meaningful paint: the overview's tree or the asset page's first painted trend. */
async function paintOf(page: Page, url: string, kind: "overview" | "asset"): Promise<number> {
  await page.goto(url);
  if (kind === "overview") {
    // Functions, not strings: the page's policy forbids evaluating text as script.
    await page.waitForFunction(() => (globalThis as { __firstSeen?: number }).__firstSeen !== undefined, undefined, { timeout: 30_000 });
    return Number(await page.evaluate(() => (globalThis as { __firstSeen?: number }).__firstSeen));
  }
  const chart = page.locator(".chart[data-painted-at]").first();
  await chart.waitFor({ timeout: 30_000 });
  return Number(await chart.getAttribute("data-painted-at"));
}

async function measureLoads(browser: Browser, baseUrl: string, hash: string, kind: "overview" | "asset"): Promise<{ cold: number[]; warm: number[] }> {
  const cold: number[] = [];
  for (let i = 0; i < LOADS; i++) {
    const context = await signedIn(browser, baseUrl);
    await context.addInitScript(FIRST_SEEN("[role=treeitem]"));
    const page = await context.newPage();
    cold.push(await paintOf(page, `${baseUrl}/${hash}`, kind));
    await context.close();
  }
  const warm: number[] = [];
  const context = await signedIn(browser, baseUrl);
  await context.addInitScript(FIRST_SEEN("[role=treeitem]"));
  const page = await context.newPage();
  await paintOf(page, `${baseUrl}/${hash}`, kind);
  for (let i = 0; i < LOADS; i++) {
    await page.goto("about:blank");
    warm.push(await paintOf(page, `${baseUrl}/${hash}`, kind));
  }
  await context.close();
  return { cold, warm };
}

/** The bytes a cold load of the overview fetched, as sent (gzip): scripts and everything. */
async function shipped(browser: Browser, baseUrl: string): Promise<{ js: number; all: number; files: number }> {
  const context = await signedIn(browser, baseUrl);
  const page = await context.newPage();
  const sizes: { type: string; bytes: number }[] = [];
  page.on("response", (res) => {
    const type = res.request().resourceType();
    const length = Number(res.headers()["content-length"] ?? 0);
    if (res.url().startsWith(baseUrl) && ["document", "script", "stylesheet"].includes(type)) sizes.push({ type, bytes: length });
  });
  await page.goto(`${baseUrl}/#/overview`);
  await page.getByRole("tree").waitFor({ timeout: 30_000 });
  await page.waitForLoadState("networkidle");
  await context.close();
  const js = sizes.filter((s) => s.type === "script").reduce((n, s) => n + s.bytes, 0);
  return { js, all: sizes.reduce((n, s) => n + s.bytes, 0), files: sizes.length };
}

/** The spectrum component's own draw time of the seeded capture, `LOADS` times. */
async function spectrumDraws(browser: Browser, baseUrl: string, assetId: string): Promise<number[]> {
  const context = await signedIn(browser, baseUrl);
  const page = await context.newPage();
  const draws: number[] = [];
  for (let i = 0; i < LOADS; i++) {
    await page.goto("about:blank");
    await page.goto(`${baseUrl}/#/assets/${assetId}`);
    // Every bin on screen: the whole range of the capture, not the default band around the running speed.
    await page.locator(".spectrum-chart[data-bins='32769'][data-draw-ms]").first().waitFor({ timeout: 30_000 });
    const range = page.getByLabel("Show up to");
    const whole = (await range.locator("option").allTextContents()).find((o) => o.startsWith("Whole range"));
    if (!whole) throw new Error("no whole-range choice for the spectrum");
    await range.selectOption({ label: whole });
    const hz = /\(([\d,]+) Hz\)/.exec(whole)?.[1]?.replace(/,/g, "");
    const spectrum = page.locator(`.spectrum-chart[data-bins='32769'][data-range-hz='${hz}'][data-draw-ms]`).first();
    await spectrum.waitFor({ timeout: 30_000 });
    draws.push(Number(await spectrum.getAttribute("data-draw-ms")));
  }
  await context.close();
  return draws;
}

async function seed(t: TestNode): Promise<{ asset: string }> {
  const place = await makePlace(t.http, "bench");
  const pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  try {
    const to = Math.floor(Date.now() / MIN) * MIN;
    const from = to - 365 * DAY;
    await seedPartitions(pg, from, 367);
    // The tag the asset page's trend opens on: the monitor's first, Temperature.
    await seedSeries(pg, { label: "a year of Temperature", monitor: place.monitor_id, tag_id: "temp", tag_name: "Temperature", from, step: MIN, count: 525_600 }, place.site_id, crypto.randomUUID());
    await seedRollups(pg);
  } finally {
    await pg.end();
  }
  // One capture: a running-speed tone and its second harmonic, 65,536 samples → 32,768 bins.
  const fs = 2 * 16_384;
  const samples = Array.from({ length: SAMPLES }, (_, i) => 3 * Math.sin((2 * Math.PI * RUNNING_HZ * i) / fs) + Math.sin((4 * Math.PI * RUNNING_HZ * i) / fs) + 0.05 * Math.sin(i));
  await t.node.broker.call("cm.ingest.waveform", { monitor_id: place.monitor_id, tag: "Vibration", axis: "x", ts: Date.now() - 60_000, sample_rate_hz: fs, samples });
  return { asset: place.asset_id };
}

async function main(): Promise<void> {
  const t = await startTestNode({ services: Object.keys(SERVICE_SCHEMAS), env: { LOG_LEVEL: "warn", NOTEBOOK_PYTHON: "/nonexistent/python3" } });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
  try {
    const seeding = performance.now();
    const { asset } = await seed(t);
    console.log(`Seeded a year of one-minute readings (525,600) and a capture of ${SAMPLES.toLocaleString("en")} samples in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);

    const bytes = await shipped(browser, t.baseUrl);
    console.log(
      `JavaScript shipped for the overview (gzip): ${(bytes.js / 1024).toFixed(1)} KB (target < ${JS_TARGET_BYTES / 1024} KB: ${verdict(bytes.js < JS_TARGET_BYTES)}); ` +
        `all ${bytes.files} files (HTML, CSS, JS): ${(bytes.all / 1024).toFixed(1)} KB`,
    );

    let met = bytes.js < JS_TARGET_BYTES;
    for (const [label, hash, kind] of [
      ["overview", "#/overview", "overview"],
      ["asset page, a year of history", `#/assets/${asset}`, "asset"],
    ] as const) {
      const { cold, warm } = await measureLoads(browser, t.baseUrl, hash, kind);
      const ok = median(cold) < PAINT_TARGET_MS;
      met &&= ok;
      console.log(
        `First meaningful paint, ${label}, ${LOADS} loads: cold median ${ms0(median(cold))} (max ${ms0(Math.max(...cold))}), ` +
          `warm median ${ms0(median(warm))} (max ${ms0(Math.max(...warm))}) (target < ${PAINT_TARGET_MS} ms: ${verdict(ok)})`,
      );
    }

    const draws = await spectrumDraws(browser, t.baseUrl, asset);
    const drawOk = median(draws) < DRAW_TARGET_MS;
    met &&= drawOk;
    console.log(`Spectrum of 32,768 bins drawn, ${LOADS} draws: median ${draws.length ? median(draws).toFixed(1) : "—"} ms, max ${Math.max(...draws).toFixed(1)} ms (target < ${DRAW_TARGET_MS} ms: ${verdict(drawOk)})`);
    console.log(met ? "\nAll targets met." : "\nA target was missed.");
  } finally {
    await browser.close();
    await t.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
