/**
 * The console's Assets view in a real browser against a real node: the asset list with CM health
 * in words, the asset page's latest values (units, the word for a value past its warning
 * threshold), a trend zoom that asks the history route for a narrower range, a spectrum whose
 * marked peak sits at the running speed the simulator gives its waveforms, a capture picked on the
 * trend, the waterfall, and a 32,768-bin spectrum drawn whole (its draw time: bench:console).
 *
 * Readings and waveforms enter as a gateway sends them (scripts/simulate.ts): through the
 * pipeline's ingestion API with its key.
 */
import type { Page, Request } from "playwright-core";
import { shot, signIn, startConsole, type ConsoleHarness } from "../helpers/console";
import { gatewayBody, makePlace, type Place } from "./alerting-fixtures";
import { createEdge, eventually, ingest } from "./pipelines-fixtures";

const RPM = 1770;
const RUNNING_HZ = RPM / 60; // 29.5 Hz
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const SAMPLE_RATE = 2560;
const SAMPLES = 4096;

let c: ConsoleHarness;
let place: Place;
let gw: { id: string; ingest_key: string };
let bigMonitor = "";
const now = Date.now();
const captureTimes = [now - 50 * MINUTE, now - 30 * MINUTE, now - 10 * MINUTE];
/** Two days of readings a minute apart: the 7-day trend needs buckets, a zoomed one raw readings. */
const historyStart = now - 2 * 24 * HOUR - 43_000;
const readingCount = 2 * 24 * 60 + 1;

/** The simulator's vibration capture: running speed with 2× and 3× harmonics, a bearing tone, a little noise. */
function waveform(rpm: number, axis: "x" | "y" | "z", n = SAMPLES, rate = SAMPLE_RATE): number[] {
  const f0 = rpm / 60;
  const gain = { x: 1, y: 0.8, z: 0.5 }[axis];
  return Array.from({ length: n }, (_, i) => {
    const t = i / rate;
    const v =
      2.0 * Math.sin(2 * Math.PI * f0 * t) +
      0.8 * Math.sin(2 * Math.PI * 2 * f0 * t + 0.3) +
      0.35 * Math.sin(2 * Math.PI * 3 * f0 * t + 1.1) +
      0.15 * Math.sin(2 * Math.PI * 5.43 * f0 * t) +
      0.05 * Math.sin(2 * Math.PI * 997 * t);
    return Math.round(gain * v * 1000) / 1000;
  });
}

async function send(path: string, body: unknown): Promise<void> {
  const res = await ingest(c.t, "POST", `/_ingest/pipelines/${gw.id}/${path}`, gw.ingest_key, body);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
}

beforeAll(async () => {
  c = await startConsole();
  const http = c.t.http;
  place = await makePlace(http, "assets");
  const put = await http("PUT", `/_config/assets/${place.asset_id}`, {
    body: {
      asset_name: "Pump assets",
      function_id: place.function_id,
      asset_category: "Rotating",
      is_critical: "yes",
      attributes: { machine_type: "pump", rotating_speed: RPM, kw: 55 },
    },
  });
  expect(put.status).toBe(200);
  gw = await createEdge(c.t, gatewayBody(place, "Gateway assets", "Condition"));

  // Two days of temperature and vibration, then a last temperature past its warning (80 C).
  const readings: { monitor_id: string; tag_id: string; ts: number; value: number }[] = [];
  for (let i = 0; i < readingCount; i++) {
    const ts = historyStart + i * MINUTE;
    const wave = Math.sin((2 * Math.PI * i) / 240);
    readings.push({ monitor_id: place.monitor_id, tag_id: "temp", ts, value: Math.round((62 + 4 * wave) * 100) / 100 });
    readings.push({ monitor_id: place.monitor_id, tag_id: "vib", ts, value: Math.round((2.2 + 0.4 * wave) * 100) / 100 });
  }
  readings.push({ monitor_id: place.monitor_id, tag_id: "temp", ts: now, value: 85.5 });
  readings.push({ monitor_id: place.monitor_id, tag_id: "vib", ts: now, value: 3.1 });
  await send("readings", { readings });

  // Triaxial captures as the simulator sends them, of the monitor's vibration tag.
  for (const ts of captureTimes) {
    for (const axis of ["x", "y", "z"] as const) {
      await send("waveforms", { monitor_id: place.monitor_id, tag: "Vibration", axis, ts, sample_rate_hz: SAMPLE_RATE, samples: waveform(RPM, axis) });
    }
  }

  // A long capture (65,536 samples: 32,769 bins) on a second monitor, through cm's own ingestion
  // (the gateway route takes up to 32,768 samples).
  const big = await http<{ id: string }>("POST", "/_config/monitors", {
    body: {
      monitor_name: "Pump assets long capture",
      monitor_type: "condition-monitor",
      asset_id: place.asset_id,
      tags: [{ tag_id: "vib", tag_name: "Vibration", tag_desc: "", tag_unit: "mm/s", thresholds: {} }],
    },
  });
  bigMonitor = big.body.id;
  const stored = await c.t.node.broker.call("cm.ingest.waveform", {
    monitor_id: bigMonitor,
    tag: "Vibration",
    axis: "x",
    ts: now - 5 * MINUTE,
    sample_rate_hz: 25_600,
    samples: waveform(RPM, "x", 65_536, 25_600),
  });
  expect(stored).toEqual({ stored: true });

  // What the page will read is in place: the latest values, the captures, the history's buckets.
  const latest = await eventually(
    async () => (await http<Record<string, { value: number | null }>[]>("GET", `/_cm/monitors/_list?asset_id=${place.asset_id}`)).body,
    (list) => list.some((m) => m.Temperature?.value === 85.5),
    200,
    100,
  );
  expect(latest.some((m) => m.Temperature?.value === 85.5)).toBe(true);
  const times = await eventually(async () => (await http<number[]>("GET", `/_cm/fft/_timestamps?monitor_id=${place.monitor_id}`)).body, (ts) => ts.length === 3, 200, 100);
  expect(times).toEqual(captureTimes);
  const week = `from=${new Date(now - 7 * 24 * HOUR).toISOString()}&to=${new Date(now + MINUTE).toISOString()}`;
  const counted = (h: { points: { count: number }[] }) => h.points.reduce((n, p) => n + p.count, 0);
  const rolled = await eventually(
    async () => (await http<{ points: { count: number }[] }>("GET", `/_cm/monitors/${place.monitor_id}/_history?tag=Temperature&${week}&points=500`)).body,
    (h) => counted(h) === readingCount + 1,
    300,
    100,
  );
  expect(counted(rolled)).toBe(readingCount + 1);
}, 120_000);

afterAll(async () => {
  await c?.stop();
});

/** The probe's value once `ok` accepts it, or its last value after `timeoutMs`. */
async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface HistoryAsk {
  from: number;
  to: number;
  points: number;
  tag: string;
}

/** A history request of the trend chart, or null (the small last-hour trends ask for 120 points; the chart for one a pixel). */
function trendAsk(url: string): HistoryAsk | null {
  const u = new URL(url);
  if (!u.pathname.endsWith("/_history") || u.searchParams.get("points") === "120") return null;
  return { from: Date.parse(u.searchParams.get("from")!), to: Date.parse(u.searchParams.get("to")!), points: Number(u.searchParams.get("points")), tag: u.searchParams.get("tag")! };
}

/** The trend's answer to a request that `test` accepts. */
const trendAnswer = (page: Page, test: (ask: HistoryAsk) => boolean) =>
  page.waitForResponse((r) => {
    const ask = trendAsk(r.url());
    return ask !== null && test(ask);
  });

async function openAsset(page: Page): Promise<void> {
  await signIn(page, c.t.baseUrl, undefined, `#/assets/${place.asset_id}`);
  await page.getByRole("heading", { level: 1, name: "Pump assets" }).waitFor();
}

describe("the asset list", () => {
  it("lists the caller's assets by site, plant and function with their health in words", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, undefined, "#/assets");
    await page.getByRole("heading", { level: 1, name: "Assets" }).waitFor();
    await page.getByLabel("Site").selectOption({ label: "Site assets" });
    await page.waitForURL(new RegExp(`#/assets\\?site_id=${place.site_id}$`));
    await page.getByLabel("Function").selectOption({ label: "Cooling assets" });
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: "Pump assets" }) });
    // The temperature past its warning makes the asset critical: said in a word, not colour alone.
    await expect(row.getByText("Critical").waitFor({ timeout: 20_000 })).resolves.toBeUndefined();
    await expect(row.textContent()).resolves.toContain("Cooling assets");
    await shot(page, "console-assets-list");
    await row.getByRole("link", { name: "Pump assets" }).click();
    await page.getByRole("heading", { level: 1, name: "Pump assets" }).waitFor();
    expect(page.url()).toMatch(new RegExp(`#/assets/${place.asset_id}$`));
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("the asset page", () => {
  it("shows the latest values with their units, the word for a value past its warning threshold, and a trend beside each", async () => {
    const { context, page, errors } = await c.open();
    await openAsset(page);
    // The rows of the monitor "Bearing assets" (the long-capture monitor has a Vibration tag too).
    const values = page.getByRole("table", { name: /^Latest values/ }).locator("tbody").filter({ hasText: /^Bearing assets/ });
    const temp = values.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "Temperature" }) });
    const tempValue = temp.getByRole("cell").nth(0);
    await expect(until(() => tempValue.textContent(), (v) => v === "85.5 C")).resolves.toBe("85.5 C");
    await expect(temp.textContent()).resolves.toContain("Above warning");
    const vib = values.getByRole("row").filter({ has: page.getByRole("rowheader", { name: /^Vibration/ }) });
    await expect(vib.getByRole("cell").nth(0).textContent()).resolves.toBe("3.1 mm/s");
    await expect(vib.textContent()).resolves.toContain("Above operational");
    await expect(vib.textContent()).resolves.not.toContain("Above warning");
    // The small last-hour trend beside the value says where the value went.
    await expect(temp.getByRole("img", { name: /Temperature, last hour: from .* C to 85\.5 C/ }).waitFor()).resolves.toBeUndefined();
    await expect(page.getByRole("heading", { name: "Health", exact: true }).locator("..").textContent()).resolves.toContain("Critical");
    await page.getByRole("heading", { name: "Fault summary" }).locator("..").getByText(/Unbalance/).first().waitFor();
    await shot(page, "console-assets-page");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("zooms a trend by dragging: a new history request for a narrower range, more detail; Zoom out goes back", async () => {
    const { context, page, errors } = await c.open();
    const asks: HistoryAsk[] = [];
    page.on("request", (r: Request) => {
      const ask = trendAsk(r.url());
      if (ask) asks.push(ask);
    });
    await openAsset(page);
    await page.getByRole("button", { name: "Trend of Temperature (Bearing assets)" }).click();
    const week = trendAnswer(page, (a) => a.to - a.from > 6 * 24 * HOUR);
    await page.getByRole("button", { name: "7 d", exact: true }).click();
    const before = trendAsk((await week).url())!;
    expect(before.tag).toBe("Temperature");
    const note = page.locator(".trend .legend-note");
    await note.filter({ hasText: /\d+ points, buckets of \d+ min/ }).waitFor();

    // The page settles first (the values above the chart arriving late would move it under the mouse).
    await page.waitForLoadState("networkidle");
    const over = page.locator(".trend .u-over");
    await over.scrollIntoViewIfNeeded();
    const box = (await over.boundingBox())!;
    const zoomed = trendAnswer(page, (a) => a.to - a.from < 24 * HOUR);
    await page.mouse.move(box.x + box.width * 0.8, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.85, box.y + box.height / 2, { steps: 5 });
    await page.mouse.move(box.x + box.width * 0.9, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    const after = trendAsk((await zoomed).url())!;
    expect(after.tag).toBe("Temperature");
    expect(after.from).toBeGreaterThanOrEqual(before.from);
    expect(after.to).toBeLessThanOrEqual(before.to);
    expect(after.to - after.from).toBeLessThan((before.to - before.from) / 5);
    expect(after.points).toBe(before.points);
    // The narrower range holds fewer readings than points: each one, raw (more detail).
    await note.filter({ hasText: /zoomed 1×.*\d+ points, raw readings/ }).waitFor();
    await shot(page, "console-assets-trend");

    const back = trendAnswer(page, (a) => a.from === before.from && a.to === before.to);
    await page.getByRole("button", { name: "Zoom out" }).click();
    await back;
    await note.filter({ hasText: /buckets of/ }).waitFor();
    expect(asks.filter((a) => a.tag === "Temperature").length).toBeGreaterThanOrEqual(3);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("draws the spectrum with its strongest peak labelled at the running speed, cursors at 1×, 2×, 3×, and the waterfall", async () => {
    const { context, page, errors } = await c.open();
    await openAsset(page);
    const spectrum = page.getByRole("heading", { name: "Spectrum", exact: true }).locator("..");
    await spectrum.getByRole("img", { name: /^Spectrum of Vibration axis x/ }).waitFor();
    const labels = (await spectrum.locator(".peak-label").allTextContents()).map((t) => Number.parseFloat(t));
    expect(labels.length).toBeGreaterThanOrEqual(3);
    // The strongest peak (first row of the peaks, labelled on the chart) is the running speed.
    const strongest = spectrum.getByRole("table", { name: "Peaks, strongest first" }).getByRole("row").nth(1);
    await expect(strongest.getByRole("cell").nth(1).textContent()).resolves.toBe("1.00×");
    const top = Number.parseFloat((await strongest.getByRole("cell").first().textContent())!);
    expect(Math.abs(top - RUNNING_HZ)).toBeLessThan(0.1);
    expect(labels.some((f) => Math.abs(f - RUNNING_HZ) < 0.1)).toBe(true);
    expect(labels.some((f) => Math.abs(f - 2 * RUNNING_HZ) < 0.1)).toBe(true);
    await expect(spectrum.textContent()).resolves.toContain(`running speed 29.5 Hz (${(1770).toLocaleString("en-US")} rpm)`);
    // The latest capture is shown first.
    await expect(spectrum.getByLabel("Capture", { exact: true }).inputValue()).resolves.toBe(String(captureTimes[2]));
    await shot(page, "console-assets-spectrum");

    const waterfall = page.getByRole("img", { name: "Waterfall of 3 captures of Vibration axis x" });
    await waterfall.waitFor();
    await waterfall.scrollIntoViewIfNeeded();
    await shot(page, "console-assets-waterfall");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("opens the capture nearest to a time clicked on the trend (X-Capture-Timestamp)", async () => {
    const { context, page, errors } = await c.open();
    await openAsset(page);
    await page.getByRole("button", { name: "Trend of Vibration (Bearing assets)" }).click();
    const hour = trendAnswer(page, (a) => a.tag === "Vibration" && a.to - a.from <= HOUR);
    await page.getByRole("button", { name: "1 h", exact: true }).click();
    await hour;
    await page.locator(".trend .legend-note", { hasText: /raw readings/ }).waitFor();
    const answered = page.waitForResponse(
      (r) => r.url().includes("/_cm/fft/_spectrum") && r.url().includes("nearest=true") && !r.url().includes(`timestamp=${captureTimes[2]}`),
      { timeout: 60_000 },
    );
    const over = page.locator(".trend .u-over");
    // A time about 30 minutes ago on the hour's trend: the capture of 30 minutes ago is the nearest.
    // Clicked again while nothing is asked: on a loaded machine the chart may still be drawing (a click lost, as a person would click again).
    let res: Awaited<typeof answered> | undefined;
    for (let i = 0; i < 25 && !res; i++) {
      const box = (await over.boundingBox())!;
      // As a person does: the pointer moved onto the time (the chart's cursor follows it), then a click there.
      await page.mouse.move(box.x + box.width * (0.5 + i * 0.002), box.y + box.height / 2, { steps: 5 });
      await new Promise((r) => setTimeout(r, 150));
      await page.mouse.down();
      await page.mouse.up();
      res = await Promise.race([answered, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 4000))]);
    }
    res ??= await answered;
    const asked = Number(new URL(res.url()).searchParams.get("timestamp"));
    const answeredTs = Number(res.headers()["x-capture-timestamp"]);
    const nearest = [...captureTimes].sort((a, b) => Math.abs(a - asked) - Math.abs(b - asked))[0];
    expect(answeredTs).toBe(nearest);
    const spectrum = page.getByRole("heading", { name: "Spectrum", exact: true }).locator("..");
    expect(await until(() => spectrum.getByLabel("Capture", { exact: true }).inputValue(), (v) => v === String(nearest))).toBe(String(nearest));
    await expect(spectrum.textContent()).resolves.toContain(`the nearest to`);
    await expect(spectrum.textContent()).resolves.toContain("picked on the trend");
    expect(errors).toEqual([]);
    await context.close();
    // The page, the hour's trend and the chart's first draw, then up to 25 clicks 4 s apart: past a
    // minute once in CI beside another suite (the file takes 12-19 s on a quiet machine).
  }, 180_000);

  it("draws a spectrum of 32,768 bins over its whole range, the running speed's peak labelled (its draw time is bench:console's)", async () => {
    const { context, page, errors } = await c.open();
    await openAsset(page);
    const spectrum = page.getByRole("heading", { name: "Spectrum", exact: true }).locator("..");
    await spectrum.getByLabel("Spectrum monitor").selectOption({ label: "Pump assets long capture" });
    const chart = spectrum.locator(".spectrum-chart[data-bins='32769']");
    // About 2 MB of bins and peaks to fetch, parse and draw: past 20 s once in CI beside the NATS cluster test.
    await chart.waitFor({ timeout: 40_000 });
    // The whole range, every bin on screen; the spectrum reports its own draw time (bench:console reads it).
    await spectrum.getByLabel("Show up to").selectOption({ label: "Whole range (12,800 Hz)" });
    await spectrum.locator(".spectrum-chart[data-bins='32769'][data-range-hz='12800'][data-draw-ms]").waitFor();
    expect(Number(await chart.getAttribute("data-draw-ms"))).toBeGreaterThan(0);
    const labels = (await spectrum.locator(".peak-label").allTextContents()).map((t) => Number.parseFloat(t));
    expect(labels.some((f) => Math.abs(f - RUNNING_HZ) < 0.1)).toBe(true);
    expect(errors).toEqual([]);
    await context.close();
  });
});
