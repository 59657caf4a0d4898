/**
 * From a gateway's HTTP request to the cm and ems answers: the pipelines service stores the
 * request and publishes it on the durable streams, and the cm and ems consumers (groups "cm"
 * and "ems") turn it into spectra, latest values and energy rollups.
 */
import { formatLocal } from "../../services/ems/time";
import { startTestNode, type TestNode } from "../helpers/node";
import { createEdge, edgeBody, eventually, hierarchy, ingest, type Hierarchy } from "./pipelines-fixtures";

let t: TestNode;
let h: Hierarchy;
let condition: { id: string; ingest_key: string };
let energy: { id: string; ingest_key: string };
// Within the site's retention: three hours ago, on the hour.
const HOUR = 3_600_000;
const TS = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "pipelines", "cm", "ems"] });
  h = await hierarchy(t, "Streams");
  condition = await createEdge(t, edgeBody(h, [h.fan.id]));
  energy = await createEdge(t, edgeBody(h, [h.meter.id], { function_id: h.fn2, data_type: "Energy" }));
});
afterAll(async () => {
  await t?.stop();
});

describe("cm and ems fed by the streams", () => {
  it("a waveform posted by a gateway becomes a spectrum with its peak at the running speed", async () => {
    const samples = Array.from({ length: 2048 }, (_, i) => 3 * Math.sin((2 * Math.PI * 25 * i) / 1024));
    const res = await ingest(t, "POST", `/_ingest/pipelines/${condition.id}/waveforms`, condition.ingest_key, {
      monitor_id: h.fan.id,
      tag: "vibration",
      axis: "z",
      ts: TS,
      sample_rate_hz: 1024,
      samples,
    });
    expect(res.status).toBe(200);
    const stamps = await eventually(
      () => t.http<number[]>("GET", `/_cm/fft/_timestamps?monitor_id=${h.fan.id}`),
      (r) => Array.isArray(r.body) && r.body.length > 0,
    );
    expect(stamps.body).toEqual([TS]);
    const peaks = await t.http<{ freq: number; tag_value: number; fundamental_freq: number }[]>(
      "GET",
      `/_cm/fft/_peaks?monitor_id=${h.fan.id}&tag=vibration&axis=z&timestamp=${TS}`,
    );
    expect(peaks.body).toEqual([{ freq: 25, tag_value: 3, fundamental_freq: 25 }]);
  });

  it("readings posted by a gateway become the monitor's latest values", async () => {
    const res = await ingest(t, "POST", `/_ingest/pipelines/${condition.id}/readings`, condition.ingest_key, {
      readings: [
        { monitor_id: h.fan.id, tag_id: "vib", ts: TS, value: 3.5 },
        { monitor_id: h.fan.id, tag_id: "vib", ts: TS + 1000, value: 4.25 },
      ],
    });
    expect(res.status).toBe(200);
    const latest = await eventually(
      () => t.http<Record<string, unknown>>("GET", `/_cm/monitors/${h.fan.id}`),
      (r) => r.body.Vibration === 4.25,
    );
    expect(latest.body).toEqual({ timestamp: TS + 1000, Vibration: 4.25 });
  });

  it("an energy counter posted by a gateway becomes consumption in MWh", async () => {
    const readings = Array.from({ length: 61 }, (_, i) => ({ monitor_id: h.meter.id, tag_id: "kwh", ts: TS + i * 60_000, value: 2_000 + (1_000 * i) / 60 }));
    const res = await ingest(t, "POST", `/_ingest/pipelines/${energy.id}/readings`, energy.ingest_key, { readings });
    expect(res.status).toBe(200);
    const query = `from=${new Date(TS).toISOString()}&to=${new Date(TS + 2 * HOUR).toISOString()}`;
    const metrics = await eventually(
      () => t.http<{ total_consumption: number }>("GET", `/_ems/monitor/${h.meter.id}?${query}`),
      (r) => r.body.total_consumption > 0.99,
    );
    expect(metrics.body.total_consumption).toBeCloseTo(1, 9);
    const trend = await t.http("GET", `/_ems/monitor/_trend/${h.meter.id}?${query}&metric=consumption_chart&interval=hourly`);
    // The step to the reading on the next hour counts in that hour.
    expect(trend.body).toEqual([
      { Date: formatLocal(TS, "Europe/Paris"), Energy: expect.closeTo(59 / 60, 9), unit: "MWh" },
      { Date: formatLocal(TS + HOUR, "Europe/Paris"), Energy: expect.closeTo(1 / 60, 9), unit: "MWh" },
    ]);
  });
});
