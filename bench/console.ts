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
 *   5. The console for the people on shift (docs/console.md), each against the console before it (BASE_REV, its files served to the same
 *      browser in the same run, interleaved): first meaningful paint of the overview and the asset
 *      page; alarm-to-screen latency, BENCH_CONSOLE_ALARMS (10) alarms each: a reading posted
 *      through the gateway's ingest route → the New alarm banner shown on the Assets view (before:
 *      the alert's row on the board, the only place it showed), p50 and p99 (target p99 < 2 s);
 *      requests per minute of an idle board with 50 sites, over BENCH_CONSOLE_IDLE_S (60) s.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Client } from "pg";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { SERVICE_SCHEMAS } from "../services";
import { ADMIN, startTestNode, type TestNode } from "../test/helpers/node";
import { CHROMIUM } from "../test/helpers/console";
import { gatewayBody, makePlace, watcherBody, type Place } from "../test/e2e/alerting-fixtures";
import { createEdge, ingest } from "../test/e2e/pipelines-fixtures";
import { pct } from "./alerts-common";
import { seedPartitions, seedRollups, seedSeries } from "./history-seed";

const LOADS = Number(process.env.BENCH_CONSOLE_LOADS ?? 10);
const ALARMS = Number(process.env.BENCH_CONSOLE_ALARMS ?? 10);
const IDLE_S = Number(process.env.BENCH_CONSOLE_IDLE_S ?? 60);
/** The console before the shift views (docs/console.md): its files are served in its place to measure against it. */
const BASE_REV = process.env.BENCH_CONSOLE_BASE ?? "71dca6d";
const ALARM_P99_TARGET_MS = 2000;
const SITES = 50;
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

/** A console to measure: this working tree's, or BASE_REV's (read from git). */
type Version = { label: string; rev: string | null };
const VERSIONS: Version[] = [
  { label: "before (the shift views' base)", rev: BASE_REV },
  { label: "now", rev: null },
];
const CONSOLE_DIR = path.join(__dirname, "..", "console");
const fileCache = new Map<string, Buffer | null>();
function consoleFile(rev: string | null, file: string): Buffer | null {
  const key = `${rev}:${file}`;
  if (!fileCache.has(key)) {
    try {
      fileCache.set(key, rev === null ? fs.readFileSync(path.join(CONSOLE_DIR, file)) : execFileSync("git", ["show", `${rev}:console/${file}`], { maxBuffer: 1 << 24 }));
    } catch {
      fileCache.set(key, null);
    }
  }
  return fileCache.get(key) ?? null;
}

/** A signed-in context whose console files (not the vendored libraries) are those of `v`, served alike for both versions. */
async function contextOf(browser: Browser, baseUrl: string, v: Version): Promise<BrowserContext> {
  const context = await signedIn(browser, baseUrl);
  await context.route(/\/console\/(?!vendor\/)[^?#]+\.(js|css)(\?.*)?$/, async (route) => {
    const file = new URL(route.request().url()).pathname.replace(/^.*?\/console\//, "");
    const body = consoleFile(v.rev, file);
    if (body === null) return route.fulfill({ status: 404, body: "" });
    return route.fulfill({ status: 200, body, contentType: file.endsWith(".css") ? "text/css" : "text/javascript" });
  });
  return context;
}

/** First meaningful paints, cold (a new context each load), of `hash`, the versions interleaved. */
async function paintsByVersion(browser: Browser, baseUrl: string, hash: string, kind: "overview" | "asset"): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>(VERSIONS.map((v) => [v.label, []]));
  for (let i = 0; i < LOADS; i++) {
    for (const v of VERSIONS) {
      const context = await contextOf(browser, baseUrl, v);
      await context.addInitScript(FIRST_SEEN("[role=treeitem]"));
      const page = await context.newPage();
      out.get(v.label)?.push(await paintOf(page, `${baseUrl}/${hash}`, kind));
      await context.close();
    }
  }
  return out;
}

interface AlarmRig {
  place: Place;
  gw: { id: string; ingest_key: string };
}

async function alarmRig(t: TestNode, place: Place): Promise<AlarmRig> {
  const gw = await createEdge(t, gatewayBody(place, "Bench gateway"));
  const res = await t.http("POST", "/_alerting/watchers", { body: watcherBody(place, gw.id, { watcher_name: "Bench watch" }, { minimum_duration: "0s" }) });
  if (res.status !== 200) throw new Error(`watcher: ${JSON.stringify(res.body)}`);
  return { place, gw };
}

async function reading(t: TestNode, rig: AlarmRig, value: number): Promise<void> {
  const res = await ingest(t, "POST", `/_ingest/pipelines/${rig.gw.id}/readings`, rig.gw.ingest_key, { readings: [{ monitor_id: rig.place.monitor_id, tag_id: "temp", ts: Date.now(), value }] });
  if (res.status !== 200) throw new Error(`readings: ${res.status}`);
}

async function activeCount(t: TestNode, rig: AlarmRig): Promise<number> {
  const res = await t.http<unknown[]>("GET", `/_alerting/alerts/_list?function_id=${rig.place.function_id}&is_hidden=0&state=active`);
  return res.body.length;
}

/**
 * Reading posted → the alarm on the screen, `ALARMS` times: now, the New alarm banner on the
 * Assets view; before, the alert's row on the board (no other view showed it). Between two, a
 * calm reading closes the alert and the screen is seen calm again.
 */
async function alarmLatency(browser: Browser, t: TestNode, rig: AlarmRig, v: Version): Promise<number[]> {
  const context = await contextOf(browser, t.baseUrl, v);
  const page = await context.newPage();
  await page.goto(`${t.baseUrl}/${v.rev === null ? "#/assets" : "#/alerts"}`);
  await page.getByRole("navigation", { name: "Main" }).waitFor({ timeout: 30_000 });
  const shown = v.rev === null ? page.getByRole("alert", { name: "New alarm" }) : page.locator("table.alert-board tr", { hasText: "Active" }).first();
  const out: number[] = [];
  for (let i = 0; i < ALARMS; i++) {
    await reading(t, rig, 55);
    for (let k = 0; k < 200 && (await activeCount(t, rig)) > 0; k++) await new Promise((r) => setTimeout(r, 50));
    await shown.waitFor({ state: "detached", timeout: 30_000 });
    await new Promise((r) => setTimeout(r, 300 + Math.random() * 1000));
    const sent = performance.now();
    await reading(t, rig, 86);
    await shown.waitFor({ timeout: 30_000 });
    out.push(performance.now() - sent);
  }
  await context.close();
  return out;
}

/** The API requests an idle board makes in `IDLE_S` seconds (the console's own files not counted), per minute. */
async function idleRequests(browser: Browser, baseUrl: string, v: Version): Promise<number> {
  const context = await contextOf(browser, baseUrl, v);
  const page = await context.newPage();
  let n = 0;
  let counting = false;
  page.on("request", (req) => {
    const p = new URL(req.url()).pathname;
    if (counting && req.url().startsWith(baseUrl) && p.startsWith("/_")) n++;
  });
  await page.goto(`${baseUrl}/#/alerts`);
  // The board's first load (50 sites' places and alerts) over, then idle: what it asks by itself,
  // answered or not (the board before asks again every 2.5 s whether the last answers came).
  await page.getByRole("heading", { name: "Alerts", exact: true }).waitFor({ timeout: 60_000 });
  await new Promise((r) => setTimeout(r, 15_000));
  counting = true;
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  counting = false;
  await context.close();
  return (n * 60) / IDLE_S;
}

/** Sites up to SITES, each with a plant and a function (what the board lists alerts by). */
async function moreSites(t: TestNode): Promise<void> {
  for (let i = 1; i < SITES; i++) {
    const site = await t.http<{ id: string }>("POST", "/_config/sites", {
      body: { site_name: `Bench site ${i}`, location: "Pune", latitude: "18.52", longitude: "73.85", timezone: "Asia/Kolkata", edge_firmware: { current_version: "1.0.0", previous_version: "0.9.0" } },
    });
    const plant = await t.http<{ id: string }>("POST", "/_config/plants", { body: { plant_name: `Bench plant ${i}`, site_id: site.body.id } });
    await t.http("POST", "/_config/functions", { body: { function_name: `Bench function ${i}`, plant_id: plant.body.id } });
  }
}

const ratio = (now: number, before: number) => (before > 0 ? `${(now / before).toFixed(2)}×` : "—");

async function seed(t: TestNode): Promise<{ asset: string; place: Place }> {
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
  return { asset: place.asset_id, place };
}

async function main(): Promise<void> {
  const t = await startTestNode({ services: Object.keys(SERVICE_SCHEMAS), env: { LOG_LEVEL: "warn", NOTEBOOK_PYTHON: "/nonexistent/python3" } });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
  try {
    const seeding = performance.now();
    const { asset, place } = await seed(t);
    console.log(`Seeded a year of one-minute readings (525,600) and a capture of ${SAMPLES.toLocaleString("en")} samples in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);

    // BENCH_CONSOLE_ONLY=idle: only the idle board's requests (part 5's last figure).
    if (process.env.BENCH_CONSOLE_ONLY === "idle") {
      await moreSites(t);
      for (const v of VERSIONS) console.log(`Requests per minute of an idle board with ${SITES} sites (${IDLE_S} s), ${v.label}: ${Math.round(await idleRequests(browser, t.baseUrl, v))}`);
      return;
    }
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

    console.log(`\nThe shift views, against the console of ${BASE_REV} served to the same browser in this run (interleaved):`);
    for (const [label, hash, kind] of [
      ["overview", "#/overview", "overview"],
      ["asset page", `#/assets/${asset}`, "asset"],
    ] as const) {
      const paints = await paintsByVersion(browser, t.baseUrl, hash, kind);
      const [before, now] = VERSIONS.map((v) => paints.get(v.label) ?? []);
      console.log(`First meaningful paint, ${label}, cold, ${LOADS} loads each: before median ${ms0(median(before))}, now median ${ms0(median(now))} (max ${ms0(Math.max(...now))}); now/before ${ratio(median(now), median(before))}`);
    }
    const rig = await alarmRig(t, place);
    const latency = new Map<string, number[]>();
    for (const v of VERSIONS) latency.set(v.label, await alarmLatency(browser, t, rig, v));
    const [latBefore, latNow] = VERSIONS.map((v) => latency.get(v.label) ?? []);
    const p99ok = pct(latNow, 0.99) < ALARM_P99_TARGET_MS;
    met &&= p99ok;
    console.log(
      `Alarm to screen, ${ALARMS} alarms each: before (the board's row; no other view showed it) p50 ${ms0(median(latBefore))}, p99 ${ms0(pct(latBefore, 0.99))}; ` +
        `now (the New alarm banner on Assets) p50 ${ms0(median(latNow))}, p99 ${ms0(pct(latNow, 0.99))} (target p99 < ${ALARM_P99_TARGET_MS} ms: ${verdict(p99ok)})`,
    );
    await moreSites(t);
    const idle = new Map<string, number>();
    for (const v of VERSIONS) idle.set(v.label, await idleRequests(browser, t.baseUrl, v));
    const [idleBefore, idleNow] = VERSIONS.map((v) => idle.get(v.label) ?? 0);
    console.log(`Requests per minute of an idle board with ${SITES} sites (${IDLE_S} s each): before ${Math.round(idleBefore)}, now ${Math.round(idleNow)}; now/before ${ratio(idleNow, idleBefore)}`);
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
