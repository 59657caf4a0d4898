/**
 * The asset page's condition monitoring in depth, in a real browser: each velocity tag's ISO
 * 20816-3 zone in words, and the envelope spectrum beside the spectrum with cursors at the
 * bearing's defect frequencies and the peaks that match them. The capture is numpy's outer-race
 * signal (test/helpers/bearing-signals.ts) on a 6205 bearing at 1797 RPM.
 */
import { bearingFrequencies, bearingGeometryOf } from "../../services/cm/faults";
import { BEARING_6205, F1, FS, numpyBearingCase, RPM } from "../helpers/bearing-signals";
import { shot, signIn, startConsole, type ConsoleHarness } from "../helpers/console";
import { makePlace, TAGS, type Place } from "./alerting-fixtures";
import { eventually } from "./pipelines-fixtures";

let c: ConsoleHarness;
let place: Place;
const FREQS = bearingFrequencies(bearingGeometryOf({ bearing: BEARING_6205 })!, F1);

beforeAll(async () => {
  c = await startConsole();
  const http = c.t.http;
  place = await makePlace(http, "depth");
  const asset = await http("PUT", `/_config/assets/${place.asset_id}`, {
    body: { asset_name: "Motor depth", function_id: place.function_id, asset_category: "Rotating", is_critical: "no", attributes: { rotating_speed: RPM, kw: 2 } },
  });
  expect(asset.status).toBe(200);
  const monitor = await http("PUT", `/_config/monitors/${place.monitor_id}`, {
    body: { monitor_name: "Bearing depth", monitor_type: "condition-monitor", tags: TAGS, specs: { bearing: BEARING_6205 }, attributes: {} },
  });
  expect(monitor.status).toBe(200);
  // 3.0 mm/s: zone C of a group 2 machine (below 300 kW) on a rigid foundation (2.8 to 4.5).
  await c.t.node.broker.call("cm.ingest.readings", { readings: [{ monitor_id: place.monitor_id, tag_id: "vib", ts: Date.now() - 1000, value: 3.0 }] });
  const { x } = numpyBearingCase("outer", 16_384, { low: 2400, high: 4800 }, FREQS);
  const stored = await c.t.node.broker.call("cm.ingest.waveform", { monitor_id: place.monitor_id, tag: "Vibration", axis: "x", ts: Date.now() - 60_000, sample_rate_hz: FS, samples: x });
  expect(stored).toEqual({ stored: true });
  await eventually(async () => (await http<{ zone: string | null }>("GET", `/_cm/assets/${place.asset_id}/_severity`)).body, (b) => b.zone === "C", 100, 100);
}, 120_000);

afterAll(async () => {
  await c?.stop();
});

describe("the asset page in depth", () => {
  it("shows each velocity tag's ISO 20816-3 zone in words, with the machine's boundaries", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, undefined, `#/assets/${place.asset_id}`);
    await page.getByRole("heading", { level: 1, name: "Motor depth" }).waitFor();
    const section = page.getByRole("region", { name: "Vibration severity (ISO 20816-3)" });
    const table = section.getByRole("table", { name: "Zone of each velocity tag, worst C" });
    await table.waitFor();
    const row = table.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "Vibration" }) });
    await expect(row.textContent()).resolves.toContain("Zone C: restricted operation");
    await expect(row.textContent()).resolves.toContain("3 mm/s");
    // The temperature tag (°C) is not a velocity tag.
    await expect(table.getByRole("rowheader", { name: "Temperature" }).count()).resolves.toBe(0);
    await expect(section.textContent()).resolves.toContain("group 2 (15 kW to 300 kW), rigid foundation");
    await shot(page, "console-cm-severity");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("draws the envelope spectrum beside the spectrum, bearing cursors at the defect frequencies, BPFO and its harmonics matched", async () => {
    const { context, page, errors } = await c.open();
    await signIn(page, c.t.baseUrl, undefined, `#/assets/${place.asset_id}`);
    const spectrum = page.getByRole("heading", { name: "Spectrum", exact: true }).locator("..");
    await spectrum.getByRole("img", { name: /^Spectrum of Vibration axis x/ }).waitFor();
    const chart = spectrum.getByRole("img", { name: /^Envelope spectrum of Vibration axis x/ });
    await chart.waitFor();
    const name = (await chart.getAttribute("aria-label"))!;
    const band = /band (\d+\.\d)-(\d+\.\d) Hz/.exec(name)!;
    expect(Number(band[1])).toBeLessThan(3000);
    expect(Number(band[2])).toBeGreaterThan(3000);
    expect(name).toContain(`BPFO ${FREQS.BPFO.toFixed(1)} Hz`);
    expect(name).toContain(`BPFI ${FREQS.BPFI.toFixed(1)} Hz`);
    const matched = spectrum.getByRole("table", { name: "Bearing peaks in the envelope" });
    const defects = await matched.getByRole("rowheader").allTextContents();
    expect(defects).toEqual(expect.arrayContaining(["BPFO", "2×BPFO", "3×BPFO"]));
    const bpfo = matched.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "BPFO", exact: true }) });
    const at = Number.parseFloat((await bpfo.getByRole("cell").first().textContent())!);
    expect(Math.abs(at - FREQS.BPFO)).toBeLessThan(0.02 * FREQS.BPFO);
    await chart.scrollIntoViewIfNeeded();
    await shot(page, "console-cm-envelope");
    expect(errors).toEqual([]);
    await context.close();
  });
});
