/**
 * Condition monitoring over HTTP (operations 67-74), fed through the cm service's ingestion
 * actions the way the waveforms and readings streams feed it.
 */
import { randomUUID } from "node:crypto";
import { startTestNode, type TestNode } from "../helpers/node";
import { insertUsers } from "../helpers/users";
import { envelope } from "../helpers/envelope";

let t: TestNode;
const ids = { site: "", plant: "", otherPlant: "", fn: "", asset: "", otherAsset: "", monitor: "", idle: "" };
const TS = 1_750_000_000_000;
const FS = 2000;
const N = 4096;

type Err = { error: { status: number; message: string; field?: string } };
const err = (status: number, message: string, field?: string): Err => envelope(status, message, field);

async function create(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.http<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

const thresholds = { operational: "2", caution: "5", warning: "8" };

function waveform(parts: { f: number; a: number }[], ts = TS, axis = "x") {
  const samples = Array.from({ length: N }, (_, i) => parts.reduce((s, p) => s + p.a * Math.sin(2 * Math.PI * p.f * (i / FS)), 0));
  return { monitor_id: ids.monitor, tag: "vibration", axis, ts, sample_rate_hz: FS, samples };
}

const readings = (values: Record<string, number>, ts: number, monitor = ids.monitor) =>
  t.node.broker.call("cm.ingest.readings", {
    readings: Object.entries(values).map(([tag_id, value]) => ({ monitor_id: monitor, tag_id, ts, value })),
  });

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "cm"] });
  ids.site = await create("/_config/sites", {
    site_name: "Hamburg",
    location: "Hamburg, DE",
    timezone: "Europe/Berlin",
    latitude: "53.55",
    longitude: "9.99",
    edge_firmware: { current_version: "1.0.0", previous_version: "" },
  });
  ids.plant = await create("/_config/plants", { plant_name: "Pumps", site_id: ids.site });
  ids.otherPlant = await create("/_config/plants", { plant_name: "Boilers", site_id: ids.site });
  ids.fn = await create("/_config/functions", { function_name: "Cooling water", plant_id: ids.plant });
  ids.asset = await create("/_config/assets", {
    asset_name: "Pump P-101",
    function_id: ids.fn,
    asset_category: "Rotating",
    attributes: { machine_type: "pump", rotating_speed: 1500 },
  });
  ids.otherAsset = await create("/_config/assets", { asset_name: "Fan F-7", function_id: ids.fn, asset_category: "Rotating" });
  ids.monitor = await create("/_config/monitors", { monitor_name: "P-101 DE bearing", monitor_type: "condition-monitor", asset_id: ids.asset });
  const put = await t.http("PUT", `/_config/monitors/${ids.monitor}`, {
    body: {
      monitor_name: "P-101 DE bearing",
      monitor_type: "condition-monitor",
      tags: [
        { tag_id: "vrms", tag_name: "velocity_rms", tag_desc: "RMS velocity", tag_unit: "mm/s", thresholds },
        { tag_id: "temp", tag_name: "temperature", tag_desc: "Bearing temperature", tag_unit: "C", thresholds: {} },
      ],
      specs: { speed_type: "fixed", bearing: { rolling_elements: 9, ball_diameter: 7.94, pitch_diameter: 39.04, contact_angle: 0 } },
      attributes: {},
    },
  });
  expect(put.status).toBe(200);
  ids.idle = await create("/_config/monitors", { monitor_name: "F-7 NDE", monitor_type: "condition-monitor", asset_id: ids.otherAsset });
  await insertUsers(t.db.url, [
    { username: "other@plant.test", password: "OtherPass123", user_type: "plant-admin", site_id: ids.site, plant_id: ids.otherPlant },
    { username: "nocm@plant.test", password: "NoCmPass123", user_type: "general-user", site_id: ids.site, plant_id: ids.plant, modules: ["Configuration"] },
  ]);
});

afterAll(async () => {
  await t?.stop();
});

describe("FFT (ops 67, 69, 70)", () => {
  it("lists no timestamps before a capture, then the capture's", async () => {
    const before = await t.http("GET", `/_cm/fft/_timestamps?monitor_id=${ids.monitor}`);
    expect(before).toMatchObject({ status: 200, body: [] });
    // Unbalance at 25 Hz (1500 RPM) with a small 2x.
    const stored = await t.node.broker.call("cm.ingest.waveform", waveform([{ f: 25, a: 2 }, { f: 50, a: 0.4 }]));
    expect(stored).toEqual({ stored: true });
    const again = await t.node.broker.call("cm.ingest.waveform", waveform([{ f: 25, a: 2 }, { f: 50, a: 0.4 }]));
    expect(again).toEqual({ stored: false });
    const after = await t.http("GET", `/_cm/fft/_timestamps?monitor_id=${ids.monitor}`);
    expect(after).toMatchObject({ status: 200, body: [TS] });
  });

  it("returns the spectrum with freq, tag_value and the peak flags", async () => {
    const res = await t.http<{ freq: number; tag_value: number; peak: boolean }[]>(
      "GET",
      `/_cm/fft/_spectrum?monitor_id=${ids.monitor}&tag=vibration&axis=x&timestamp=${TS}`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(N / 2 + 1);
    const df = FS / N;
    expect(res.body[1].freq).toBeCloseTo(df, 6);
    const flagged = res.body.filter((b) => b.peak);
    expect(flagged.map((b) => Math.round(b.freq))).toEqual([25, 50]);
    const top = res.body.reduce((a, b) => (b.tag_value > a.tag_value ? b : a));
    expect(top.peak).toBe(true);
    expect(Math.abs(top.freq - 25)).toBeLessThan(df);
  });

  it("returns the peaks strongest first with the asset's running speed as fundamental", async () => {
    const res = await t.http<{ freq: number; tag_value: number; fundamental_freq: number }[]>(
      "GET",
      `/_cm/fft/_peaks?monitor_id=${ids.monitor}&tag=vibration&axis=x&timestamp=${TS}`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(2);
    expect(res.body[0].freq).toBeCloseTo(25, 1);
    expect(Math.abs(res.body[0].tag_value - 2) / 2).toBeLessThan(0.05);
    expect(res.body[1].freq).toBeCloseTo(50, 1);
    expect(Math.abs(res.body[1].tag_value - 0.4) / 0.4).toBeLessThan(0.05);
    expect(res.body.every((p) => p.fundamental_freq === 25)).toBe(true);
  });

  it("answers [] for a timestamp without a capture", async () => {
    const res = await t.http("GET", `/_cm/fft/_peaks?monitor_id=${ids.monitor}&tag=vibration&axis=x&timestamp=${TS + 1}`);
    expect(res).toMatchObject({ status: 200, body: [] });
  });

  it.each([
    ["_peaks", "not-a-uuid"],
    ["_spectrum", randomUUID()],
  ])("answers Invalid Monitor Id for an unknown monitor (%s)", async (op, id) => {
    const res = await t.http("GET", `/_cm/fft/${op}?monitor_id=${id}&tag=vibration&axis=x&timestamp=${TS}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(err(400, "Invalid Monitor Id"));
    const ts = await t.http("GET", `/_cm/fft/_timestamps?monitor_id=${id}`);
    expect(ts.body).toEqual(err(400, "Invalid Monitor Id"));
  });

  it("refuses missing and malformed inputs", async () => {
    const missing = await t.http("GET", `/_cm/fft/_spectrum?monitor_id=${ids.monitor}&tag=vibration&axis=x`);
    expect(missing.body).toEqual(err(400, "Insufficient inputs"));
    const axis = await t.http("GET", `/_cm/fft/_spectrum?monitor_id=${ids.monitor}&tag=vibration&axis=w&timestamp=${TS}`);
    expect(axis.body).toEqual(err(400, "Invalid input: axis"));
    const ts = await t.http("GET", `/_cm/fft/_peaks?monitor_id=${ids.monitor}&tag=vibration&axis=x&timestamp=yesterday`);
    expect(ts.body).toEqual(err(400, "Invalid input: timestamp"));
    // An "integer" PostgreSQL's bigint cannot hold (it answered 500).
    for (const op of ["_peaks", "_spectrum"]) {
      const huge = await t.http("GET", `/_cm/fft/${op}?monitor_id=${ids.monitor}&tag=vibration&axis=x&timestamp=1e308`);
      expect(huge.body).toEqual(err(400, "Invalid input: timestamp"));
    }
    const noId = await t.http("GET", `/_cm/fft/_timestamps`);
    expect(noId.body).toEqual(err(400, "Insufficient inputs"));
  });

  it("hides another plant's monitor and refuses a user without the module", async () => {
    const other = await t.http("GET", `/_cm/fft/_timestamps?monitor_id=${ids.monitor}`, {
      auth: { username: "other@plant.test", password: "OtherPass123" },
    });
    expect(other.body).toEqual(err(400, "Invalid Monitor Id"));
    const nocm = await t.http("GET", `/_cm/fft/_timestamps?monitor_id=${ids.monitor}`, {
      auth: { username: "nocm@plant.test", password: "NoCmPass123" },
    });
    expect(nocm.status).toBe(401);
    expect(nocm.body).toEqual(err(401, "Unauthorized access to module by general-user"));
  });
});

describe("fault summary (op 68)", () => {
  it("names unbalance with its evidence from the latest spectrum", async () => {
    const res = await t.http<{ monitor_name: string; summary: string; Timestamp: string }[]>("GET", `/_cm/fft/_summary?asset_id=${ids.asset}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        monitor_name: "P-101 DE bearing",
        summary: expect.stringMatching(/^Unbalance: 1x running speed dominant at 25\.0 Hz \(order 1\.00\), amplitude (1\.9\d\d|2\.0\d\d)$/),
        Timestamp: new Date(TS).toISOString(),
        // No velocity reading yet: no ISO 20816-3 zone; no bearing peak.
        zone: null,
        evidence: null,
      },
    ]);
  });

  it("reads a later capture with a bearing outer race defect", async () => {
    const bpfo = (9 * 25 / 2) * (1 - 7.94 / 39.04);
    // BPFO with its second harmonic: a strong finding (a lone BPFO peak is weak, not a fault).
    await t.node.broker.call("cm.ingest.waveform", waveform([{ f: 25, a: 1 }, { f: bpfo, a: 0.3 }, { f: 2 * bpfo, a: 0.12 }], TS + 60_000));
    const res = await t.http<{ summary: string; Timestamp: string; evidence: Record<string, unknown> }[]>("GET", `/_cm/fft/_summary?asset_id=${ids.asset}`);
    expect(res.body).toHaveLength(1);
    expect(res.body[0].Timestamp).toBe(new Date(TS + 60_000).toISOString());
    const lines = res.body[0].summary.split("\n");
    expect(lines[0]).toMatch(/^Unbalance: /);
    expect(lines[1]).toMatch(/^Bearing outer race defect \(BPFO\) at 89\.6 Hz: peak at 89\.\d Hz \(order 3\.5\d\), amplitude 0\.\d{3}$/);
    expect(lines).toHaveLength(2);
    expect(res.body[0].evidence).toEqual({ peak_hz: expect.closeTo(bpfo, 0), harmonics: [expect.closeTo(2 * bpfo, 0)], sidebands: [], strength: "strong" });
    const peaks = await t.http<{ freq: number; bearing?: Record<string, unknown> }[]>(
      "GET",
      `/_cm/fft/_peaks?monitor_id=${ids.monitor}&tag=vibration&axis=x&timestamp=${TS + 60_000}`,
    );
    expect(peaks.body.filter((p) => p.bearing).map((p) => p.bearing)).toEqual([
      { defect: "BPFO", order: expect.closeTo(bpfo / 25, 2), harmonic: 1, sidebands: [] },
      { defect: "BPFO", order: expect.closeTo((2 * bpfo) / 25, 2), harmonic: 2, sidebands: [] },
    ]);
    // The running-speed peak is as before: no bearing key.
    expect(Object.keys(peaks.body[0])).toEqual(["freq", "tag_value", "fundamental_freq"]);
    const ts = await t.http("GET", `/_cm/fft/_timestamps?monitor_id=${ids.monitor}`);
    expect(ts.body).toEqual([TS, TS + 60_000]);
  });

  it("answers Invalid Asset Id for an unknown asset and Excess Inputs for unknown keys", async () => {
    expect((await t.http("GET", `/_cm/fft/_summary?asset_id=${randomUUID()}`)).body).toEqual(err(400, "Invalid Asset Id"));
    expect((await t.http("GET", `/_cm/fft/_summary?asset_id=nope`)).body).toEqual(err(400, "Invalid Asset Id"));
    expect((await t.http("GET", `/_cm/fft/_summary?asset_id=${ids.asset}&x=1`)).body).toEqual(err(400, "Excess Inputs"));
    expect((await t.http("GET", `/_cm/fft/_summary`)).body).toEqual(err(400, "Insufficient inputs"));
  });
});

describe("latest values, colours, status and events (ops 71-74)", () => {
  it("shows null values before any reading and no event", async () => {
    const m = await t.http("GET", `/_cm/monitors/${ids.monitor}`);
    expect(m).toMatchObject({ status: 200, body: { timestamp: null, velocity_rms: null, temperature: null } });
    const a = await t.http("GET", `/_cm/assets/${ids.asset}`);
    expect(a.body).toEqual({
      asset_id: ids.asset,
      asset_name: "Pump P-101",
      asset_status: "",
      asset_faults: ["Unbalance", "Bearing outer race defect (BPFO)"],
      event_id: "",
      event_start: "",
      event_severity: "",
      event_status: "",
      event_label: "",
      event_assignee: "",
      zone: null,
    });
  });

  it("returns the latest value per tag name, ignoring older readings", async () => {
    await readings({ vrms: 1.5, temp: 41 }, TS);
    await readings({ vrms: 9.9 }, TS - 1000);
    const m = await t.http("GET", `/_cm/monitors/${ids.monitor}`);
    expect(m.body).toEqual({ timestamp: TS, velocity_rms: 1.5, temperature: 41 });
  });

  it("takes the reading sent last when two carry the same timestamp, in one batch or in two", async () => {
    await readings({ temp: 43 }, TS);
    expect((await t.http<Record<string, number>>("GET", `/_cm/monitors/${ids.monitor}`)).body.temperature).toBe(43);
    await t.node.broker.call("cm.ingest.readings", {
      readings: [44, 41].map((value) => ({ monitor_id: ids.monitor, tag_id: "temp", ts: TS, value })),
    });
    expect((await t.http<Record<string, number>>("GET", `/_cm/monitors/${ids.monitor}`)).body.temperature).toBe(41);
  });

  it.each([
    [1.99, "green", ""],
    [2, "yellow", ""],
    [4.99, "yellow", ""],
    [5, "orange", "warning"],
    [7.99, "orange", "warning"],
    [8, "red", "critical"],
  ])("value %p is %s and the asset status %p", async (value, color, status) => {
    const ts = TS + Math.round(value * 1000);
    await readings({ vrms: value }, ts);
    const list = await t.http<Record<string, unknown>[]>("GET", `/_cm/monitors/_list?asset_id=${ids.asset}`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      {
        monitor_id: ids.monitor,
        monitor_name: "P-101 DE bearing",
        timestamp: ts,
        velocity_rms: { value, color },
        temperature: { value: 41, color: "grey" },
      },
    ]);
    const asset = await t.http<Record<string, unknown>>("GET", `/_cm/assets/${ids.asset}`);
    expect(asset.body.asset_status).toBe(status);
  });

  it("opened one event when the asset left normal, raised it to critical, and closes it back at normal", async () => {
    const open = await t.http<Record<string, unknown>>("GET", `/_cm/assets/${ids.asset}`);
    expect(open.body).toMatchObject({
      asset_status: "critical",
      event_status: "Under Investigation",
      event_severity: 1,
      event_start: Math.floor((TS + 5000) / 1000),
      event_label: "P-101 DE bearing velocity_rms above caution threshold",
      event_assignee: "",
    });
    expect(open.body.event_id).toMatch(/^[0-9a-f-]{36}$/);
    const listed = await t.http<Record<string, unknown>[]>("GET", `/_cm/assets/_list?function_id=${ids.fn}`);
    expect(listed.status).toBe(200);
    expect(listed.body.map((a) => a.asset_name).sort()).toEqual(["Fan F-7", "Pump P-101"]);
    expect(listed.body.find((a) => a.asset_id === ids.asset)).toEqual(open.body);
    expect(listed.body.find((a) => a.asset_id === ids.otherAsset)).toMatchObject({ asset_status: "", event_id: "", asset_faults: [] });

    await readings({ vrms: 1 }, TS + 20_000);
    const closed = await t.http<Record<string, unknown>>("GET", `/_cm/assets/${ids.asset}`);
    expect(closed.body).toMatchObject({ asset_status: "", event_id: "", event_start: "", event_status: "" });

    await readings({ vrms: 6 }, TS + 30_000);
    const again = await t.http<Record<string, unknown>>("GET", `/_cm/assets/${ids.asset}`);
    expect(again.body).toMatchObject({ asset_status: "warning", event_severity: 2, event_start: Math.floor((TS + 30_000) / 1000) });
    expect(again.body.event_id).not.toBe(open.body.event_id);
  });

  it("shows a value outside from/to as null and grey", async () => {
    const from = new Date(TS + 40_000).toISOString();
    const res = await t.http<Record<string, unknown>[]>("GET", `/_cm/monitors/_list?asset_id=${ids.asset}&from=${from}`);
    expect(res.body[0]).toMatchObject({ timestamp: null, velocity_rms: { value: null, color: "grey" } });
    const bad = await t.http("GET", `/_cm/monitors/_list?asset_id=${ids.asset}&from=soon`);
    expect(bad.body).toEqual(err(400, "Invalid input: from"));
  });

  it("pages the lists (ops 72, 74) with limit and offset, the total in X-Total-Count, and no other operation carries one", async () => {
    const all = await t.http<{ asset_id: string }[]>("GET", `/_cm/assets/_list?function_id=${ids.fn}`);
    expect(all.headers.get("x-total-count")).toBe("2");
    const second = await t.http<{ asset_id: string }[]>("GET", `/_cm/assets/_list?function_id=${ids.fn}&limit=1&offset=1`);
    expect(second.status).toBe(200);
    expect(second.headers.get("x-total-count")).toBe("2");
    expect(second.body.map((a) => a.asset_id)).toEqual([all.body[1]!.asset_id]);
    const monitors = await t.http<unknown[]>("GET", `/_cm/monitors/_list?asset_id=${ids.asset}&limit=1`);
    expect(monitors).toMatchObject({ status: 200, body: [expect.objectContaining({ monitor_id: ids.monitor })] });
    expect(monitors.headers.get("x-total-count")).toBe("1");
    expect((await t.http("GET", `/_cm/monitors/_list?asset_id=${ids.asset}&offset=1`)).body).toEqual([]);
    expect((await t.http("GET", `/_cm/assets/_list?function_id=${ids.fn}&limit=0`)).body).toEqual(err(400, "Invalid input: limit"));
    // config's own list counts (asked for internally) are not these operations' answer.
    expect((await t.http("GET", `/_cm/assets/${ids.asset}`)).headers.get("x-total-count")).toBeNull();
    expect((await t.http("GET", `/_cm/fft/_summary?asset_id=${ids.asset}`)).headers.get("x-total-count")).toBeNull();
  });

  it("answers the spec's messages", async () => {
    expect((await t.http("GET", `/_cm/monitors/${randomUUID()}`)).body).toEqual(err(400, "Invalid Monitor Id"));
    expect((await t.http("GET", `/_cm/monitors/_list?asset_id=${randomUUID()}`)).body).toEqual(err(400, "Invalid Asset Id"));
    expect((await t.http("GET", `/_cm/monitors/_list?asset_id=${ids.asset}&color=red`)).body).toEqual(err(400, "Excess Inputs"));
    expect((await t.http("GET", `/_cm/assets/${ids.asset}?verbose=1`)).body).toEqual(err(400, "Excess Inputs"));
    expect((await t.http("GET", `/_cm/assets/${randomUUID()}`)).body).toEqual(err(400, "Invalid Asset Id"));
    expect((await t.http("GET", `/_cm/assets/_list?function_id=${randomUUID()}`)).body).toEqual(err(400, "Invalid Function Id"));
    expect((await t.http("GET", `/_cm/assets/_list?function_id=${ids.fn}&site_id=x`)).body).toEqual(err(400, "Excess Inputs"));
    expect((await t.http("GET", `/_cm/assets/_list`)).body).toEqual(err(400, "Insufficient inputs"));
    const other = { username: "other@plant.test", password: "OtherPass123" };
    expect((await t.http("GET", `/_cm/assets/${ids.asset}`, { auth: other })).body).toEqual(err(400, "Invalid Asset Id"));
    expect((await t.http("GET", `/_cm/assets/_list?function_id=${ids.fn}`, { auth: other })).body).toEqual(err(400, "Invalid Function Id"));
  });
});
