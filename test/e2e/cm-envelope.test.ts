/**
 * Bearing findings over HTTP (docs/api-tour.md, "Bearing evidence" and "The envelope spectrum"):
 * captures made in numpy (test/helpers/bearing-signals.ts) stored through cm's
 * `ingest.waveform`, read back with envelope=true and band, and the fault summary: a defect that
 * only the envelope shows is named `(envelope)` with its evidence; a pure unbalance names none.
 */
import { randomUUID } from "node:crypto";
import { bearingFrequencies, bearingGeometryOf } from "../../services/cm/faults";
import { BEARING_6205, F1, FS, numpyBearingCase, RPM, type SignalKind } from "../helpers/bearing-signals";
import { envelope } from "../helpers/envelope";
import { startTestNode, type TestNode } from "../helpers/node";

let t: TestNode;
const ids = { fn: "", asset: "", monitor: "" };
const T0 = 1_767_225_600_000;
const N = 16_384;
const FREQS = bearingFrequencies(bearingGeometryOf({ bearing: BEARING_6205 })!, F1);
const BAND = { low: 2400, high: 4800 };
/** Only the latest capture of a tag and axis is summarised: each case has an axis of its own. */
const CASES: Record<SignalKind, { ts: number; axis: string; env: number[] }> = {
  outer: { ts: T0, axis: "x", env: [] },
  inner: { ts: T0 + 60_000, axis: "y", env: [] },
  unbalance: { ts: T0 + 120_000, axis: "z", env: [] },
};

async function create(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.http<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

interface Peak {
  freq: number;
  tag_value: number;
  fundamental_freq: number;
  bearing?: { defect: string; order: number; harmonic: number; sidebands: number[] };
}
interface Summary {
  summary: string;
  evidence: { peak_hz: number; harmonics: number[]; sidebands: number[]; strength: string } | null;
}

const read = <T>(op: "_spectrum" | "_peaks", kind: SignalKind, query = "") =>
  t.http<T>("GET", `/_cm/fft/${op}?monitor_id=${ids.monitor}&tag=accel&axis=${CASES[kind].axis}&timestamp=${CASES[kind].ts}${query}`);

async function store(kind: SignalKind) {
  const { x, env } = numpyBearingCase(kind, N, BAND, FREQS);
  CASES[kind].env = env;
  const res = await t.node.broker.call("cm.ingest.waveform", { monitor_id: ids.monitor, tag: "accel", axis: CASES[kind].axis, ts: CASES[kind].ts, sample_rate_hz: FS, samples: x });
  expect(res).toEqual({ stored: true });
}

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "cm"] });
  const site = await create("/_config/sites", {
    site_name: "Cleveland",
    location: "Cleveland, US",
    timezone: "America/New_York",
    latitude: "41.50",
    longitude: "-81.69",
    edge_firmware: { current_version: "1.0.0", previous_version: "" },
  });
  const plant = await create("/_config/plants", { plant_name: "Test rig", site_id: site });
  ids.fn = await create("/_config/functions", { function_name: "Drive", plant_id: plant });
  ids.asset = await create("/_config/assets", { asset_name: "Motor M-1", function_id: ids.fn, asset_category: "Rotating", attributes: { rotating_speed: RPM, kw: 1.5 } });
  ids.monitor = await create("/_config/monitors", { monitor_name: "M-1 drive end", monitor_type: "condition-monitor", asset_id: ids.asset });
  const put = await t.http("PUT", `/_config/monitors/${ids.monitor}`, {
    body: { monitor_name: "M-1 drive end", monitor_type: "condition-monitor", tags: [], specs: { bearing: BEARING_6205 }, attributes: {} },
  });
  expect(put.status).toBe(200);
  await store("outer");
});

afterAll(async () => {
  await t?.stop();
});

const near = (f: number, target: number, tol = 0.02) => Math.abs(f - target) <= tol * target;

describe("outer-race impacts on a 3 kHz resonance", () => {
  it("answers the envelope spectrum of the band asked for, as numpy computes it, and says the band", async () => {
    const res = await read<{ freq: number; tag_value: number; peak: boolean }[]>("_spectrum", "outer", "&envelope=true&band=2400-4800");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-envelope-band")).toBe("2400.0-4800.0");
    expect(res.headers.get("x-capture-timestamp")).toBe(String(T0));
    const theirs = CASES.outer.env;
    expect(res.body).toHaveLength(theirs.length);
    const largest = Math.max(...theirs);
    for (let k = 0; k < theirs.length; k++) expect(Math.abs(res.body[k].tag_value - theirs[k])).toBeLessThan(1e-5 * largest);
    expect(res.body[1].freq).toBeCloseTo(FS / N, 6);
  });

  it("finds BPFO and two harmonics in the envelope peaks of the default band, one octave around 3 kHz", async () => {
    const res = await read<Peak[]>("_peaks", "outer", "&envelope=true");
    expect(res.status).toBe(200);
    const [low, high] = (res.headers.get("x-envelope-band") ?? "").split("-").map(Number);
    expect(low).toBeLessThan(3000);
    expect(high).toBeGreaterThan(3000);
    expect(high / low).toBeCloseTo(2, 1);
    const bpfo = res.body.filter((p) => p.bearing?.defect === "BPFO");
    expect(bpfo.map((p) => p.bearing!.harmonic).slice(0, 3).sort()).toEqual([1, 2, 3]);
    for (const p of bpfo) {
      expect(near(p.freq, p.bearing!.harmonic * FREQS.BPFO)).toBe(true);
      expect(p.bearing!.order).toBeCloseTo(p.freq / F1, 3);
      expect(p.fundamental_freq).toBeCloseTo(F1, 6);
    }
  });

  it("names the defect in the summary as found in the envelope, with its evidence", async () => {
    const res = await t.http<Summary[]>("GET", `/_cm/fft/_summary?asset_id=${ids.asset}`);
    expect(res.status).toBe(200);
    const lines = res.body[0].summary.split("\n");
    expect(lines).toContainEqual(expect.stringMatching(/^Bearing outer race defect \(BPFO\) at 107\.4 Hz: peak at 10\d\.\d Hz \(order 3\.\d\d\), amplitude \d\.\d{3} \(envelope\)$/));
    expect(res.body[0].evidence).toMatchObject({ strength: "strong", sidebands: [] });
    expect(near(res.body[0].evidence!.peak_hz, FREQS.BPFO)).toBe(true);
    expect(res.body[0].evidence!.harmonics.length).toBeGreaterThanOrEqual(2);
    const asset = await t.http<{ asset_faults: string[] }>("GET", `/_cm/assets/${ids.asset}`);
    expect(asset.body.asset_faults).toContain("Bearing outer race defect (BPFO)");
  });

  it("refuses a bad band with Invalid input: band", async () => {
    for (const q of ["&envelope=true&band=4800-2400", "&envelope=true&band=2400-6001", "&envelope=true&band=wide", "&band=2400-4800", "&envelope=false&band=2400-4800"]) {
      for (const op of ["_spectrum", "_peaks"] as const) {
        const res = await read(op, "outer", q);
        expect({ q, op, body: res.body }).toEqual({ q, op, body: envelope(400, "Invalid input: band", "band") });
      }
    }
    expect((await read("_peaks", "outer", "&envelope=yes")).body).toEqual(envelope(400, "Invalid input: envelope", "envelope"));
    // A band that cannot be one is refused even where no capture is.
    const none = await t.http("GET", `/_cm/fft/_spectrum?monitor_id=${ids.monitor}&tag=accel&axis=x&timestamp=${T0 + 1}&envelope=true&band=9-3`);
    expect(none.body).toEqual(envelope(400, "Invalid input: band", "band"));
  });

  it("answers the plain peaks and spectrum as before without envelope", async () => {
    const res = await read<{ freq: number }[]>("_spectrum", "outer");
    expect(res.headers.get("x-envelope-band")).toBeNull();
    expect(res.body).toHaveLength(N / 2 + 1);
    const missing = await t.http("GET", `/_cm/fft/_peaks?monitor_id=${ids.monitor}&tag=accel&axis=x&timestamp=${T0 + 1}&envelope=true`);
    expect(missing.body).toEqual([]);
    expect(missing.headers.get("x-envelope-band")).toBeNull();
    expect((await t.http("GET", `/_cm/fft/_peaks?monitor_id=${randomUUID()}&tag=accel&axis=x&timestamp=${T0}&envelope=true`)).body).toEqual(
      envelope(400, "Invalid Monitor Id"),
    );
  });
});

describe("inner-race impacts modulated at 1x, and a pure unbalance", () => {
  it("finds BPFI with its ±1x sidebands in the envelope", async () => {
    await store("inner");
    const res = await read<Peak[]>("_peaks", "inner", "&envelope=true&band=2400-4800");
    const bpfi = res.body.find((p) => p.bearing?.defect === "BPFI" && p.bearing.harmonic === 1);
    expect(bpfi).toBeDefined();
    expect(near(bpfi!.freq, FREQS.BPFI)).toBe(true);
    expect(bpfi!.bearing!.sidebands).toHaveLength(2);
    expect(near(bpfi!.bearing!.sidebands[0], FREQS.BPFI - F1)).toBe(true);
    expect(near(bpfi!.bearing!.sidebands[1], FREQS.BPFI + F1)).toBe(true);
    const summary = await t.http<Summary[]>("GET", `/_cm/fft/_summary?asset_id=${ids.asset}`);
    expect(summary.body[0].summary).toMatch(/^\[accel y\] Bearing inner race defect \(BPFI\) at 162\.2 Hz: peak at .* \(envelope\)$/m);
  });

  it("names no bearing defect for a pure unbalance", async () => {
    await store("unbalance");
    const res = await read<Peak[]>("_peaks", "unbalance", "&envelope=true");
    expect(res.body.filter((p) => p.bearing)).toEqual([]);
    const plain = await read<Peak[]>("_peaks", "unbalance");
    expect(plain.body.filter((p) => p.bearing)).toEqual([]);
    const summary = await t.http<Summary[]>("GET", `/_cm/fft/_summary?asset_id=${ids.asset}`);
    const z = summary.body[0].summary.split("\n").filter((l) => l.startsWith("[accel z]"));
    expect(z).toEqual([expect.stringMatching(/^\[accel z\] Unbalance: 1x running speed dominant at (29\.9|30\.0) Hz/)]);
  });
});
