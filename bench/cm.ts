/**
 * `npm run bench:cm`: the cost of a vibration capture.
 *   1. Spectrum and peaks of a 65,536-sample capture (services/cm: Hann window, fft.js,
 *      amplitude correction, noise floor, peaks), time per capture; and in the same run numpy's
 *      `rfft` on the same samples (python3-numpy): `rfft` alone and with the same window and
 *      scaling, so the ratio compares like with like. Target: within 3x of numpy.
 *   2. Captures per second the cm service sustains end to end: `cm.ingest.waveform` on a real
 *      broker (validation, the monitor from config, spectrum, peaks, the default band's envelope
 *      spectrum and its peaks, as for a monitor with a bearing geometry, float32 encoding, the
 *      PostgreSQL insert), with BENCH_CM_CONCURRENCY captures in flight.
 *   3. The envelope spectrum of the same capture (services/cm/envelope.ts: band-pass and Hilbert
 *      over one fft.js pair, the envelope's Hann spectrum, its local floor and peaks) against
 *      numpy/scipy in the same run: the same steps (rfft, band mask, irfft,
 *      scipy.signal.hilbert, rfft of the envelope), and scipy's usual time-domain way
 *      (4th-order Butterworth sosfiltfilt, hilbert, rfft) for reference. Goal: within 2x.
 *   4. `GET /_cm/assets/<id>/_severity` of an asset with 12 velocity tags (3 monitors of 4)
 *      through the HTTP gateway: p50 and p99, and op 73 (the asset's condition) in the same run.
 *
 * Env: BENCH_CM_ITERATIONS (200), BENCH_CM_CAPTURES (200), BENCH_CM_CONCURRENCY (4), BENCH_CM_READS (1000), PYTHON (/usr/bin/python3).
 */
import { execFileSync } from "node:child_process";
import { envelopeSpectrum } from "../services/cm/envelope";
import { findPeaks, localNoiseFloor } from "../services/cm/peaks";
import { amplitudeSpectrum } from "../services/cm/spectrum";
import { startTestNode, type TestNode } from "../test/helpers/node";

const N = 65_536;
const FS = 25_600;
const ITERATIONS = Number(process.env.BENCH_CM_ITERATIONS ?? 200);
const CAPTURES = Number(process.env.BENCH_CM_CAPTURES ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CM_CONCURRENCY ?? 4);
const PYTHON = process.env.PYTHON ?? "/usr/bin/python3";
const READS = Number(process.env.BENCH_CM_READS ?? 1000);
/** The band demodulated: one octave around the 1234.5 Hz tone's neighbourhood, as a resonance would be. */
const BAND = { low: 900, high: 1800 };

function capture(seed = 1): number[] {
  let s = seed;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
  const tones = [
    { f: 24.7, a: 2 },
    { f: 49.4, a: 0.6 },
    { f: 74.1, a: 0.3 },
    { f: 88.3, a: 0.2 },
    { f: 1234.5, a: 0.1 },
  ];
  return Array.from({ length: N }, (_, i) => tones.reduce((acc, t) => acc + t.a * Math.sin(2 * Math.PI * t.f * (i / FS)), 0) + 0.05 * rand());
}

function stats(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: at(0.5), p99: at(0.99), mean: ms.reduce((a, b) => a + b, 0) / ms.length };
}

function ours(samples: number[]) {
  for (let i = 0; i < 20; i++) findPeaks(amplitudeSpectrum(samples, FS).amplitudes, FS / N);
  const ms: number[] = [];
  let peaks = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    const t0 = performance.now();
    const { df, amplitudes } = amplitudeSpectrum(samples, FS);
    peaks = findPeaks(amplitudes, df).length;
    ms.push(performance.now() - t0);
  }
  return { ...stats(ms), peaks };
}

function numpy(samples: number[]): { rfft: number; full: number; version: string } {
  const script = `
import sys, time, json
import numpy as np
x = np.frombuffer(sys.stdin.buffer.read(), dtype=np.float64)
n = len(x); k = int(sys.argv[1])
w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)
def bench(f):
    for _ in range(20): f()
    ts = []
    for _ in range(k):
        t0 = time.perf_counter(); f(); ts.append((time.perf_counter() - t0) * 1000)
    ts.sort(); return ts[len(ts) // 2]
def full():
    a = np.abs(np.fft.rfft(x * w)) * (2 / w.sum()); a[0] /= 2; a[-1] /= 2
    return a
print(json.dumps({"rfft": bench(lambda: np.fft.rfft(x)), "full": bench(full), "version": np.__version__}))
`;
  const out = execFileSync(PYTHON, ["-c", script, String(ITERATIONS)], { input: Buffer.from(new Float64Array(samples).buffer) });
  return JSON.parse(out.toString()) as { rfft: number; full: number; version: string };
}

function oursEnvelope(samples: number[]) {
  const run = () => {
    const { df, amplitudes } = envelopeSpectrum(samples, FS, BAND);
    return findPeaks(amplitudes, df, localNoiseFloor(amplitudes)).length;
  };
  for (let i = 0; i < 20; i++) run();
  const ms: number[] = [];
  let peaks = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    const t0 = performance.now();
    peaks = run();
    ms.push(performance.now() - t0);
  }
  return { ...stats(ms), peaks };
}

function numpyEnvelope(samples: number[]): { same: number; butter: number; scipy: string } {
  const script = `
import sys, time, json
import numpy as np, scipy
from scipy.signal import hilbert, butter, sosfiltfilt
x = np.frombuffer(sys.stdin.buffer.read(), dtype=np.float64)
n = len(x); k = int(sys.argv[1]); fs, low, high = map(float, sys.argv[2:5])
w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)
f = np.arange(n // 2 + 1) * fs / n
mask = (f >= low) & (f <= high)
sos = butter(4, [low, high], btype="bandpass", fs=fs, output="sos")
def spectrum(env):
    env = env - env.mean()
    a = np.abs(np.fft.rfft(env * w)) * (2 / w.sum()); a[0] /= 2; a[-1] /= 2
    return a
def same():
    X = np.fft.rfft(x); X[~mask] = 0
    return spectrum(np.abs(hilbert(np.fft.irfft(X, n))))
def butterworth():
    return spectrum(np.abs(hilbert(sosfiltfilt(sos, x))))
def bench(g):
    for _ in range(10): g()
    ts = []
    for _ in range(k):
        t0 = time.perf_counter(); g(); ts.append((time.perf_counter() - t0) * 1000)
    ts.sort(); return ts[len(ts) // 2]
print(json.dumps({"same": bench(same), "butter": bench(butterworth), "scipy": scipy.__version__}))
`;
  const args = [String(ITERATIONS), String(FS), String(BAND.low), String(BAND.high)];
  const out = execFileSync(PYTHON, ["-c", script, ...args], { input: Buffer.from(new Float64Array(samples).buffer) });
  return JSON.parse(out.toString()) as { same: number; butter: number; scipy: string };
}

/**
 * An asset with 3 condition monitors of 4 velocity tags each, a reading on every tag; and a
 * monitor with a bearing geometry for the captures (whose ingestion finds envelope peaks).
 */
async function benchAsset(t: TestNode): Promise<{ asset: string; bearingMonitor: string }> {
  const make = async (path: string, body: Record<string, unknown>) => {
    const res = await t.http<{ id: string }>("POST", path, { body });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id;
  };
  const site = await make("/_config/sites", {
    site_name: "Bench",
    location: "Bench",
    timezone: "UTC",
    latitude: "0",
    longitude: "0",
    edge_firmware: { current_version: "1.0.0", previous_version: "" },
  });
  const plant = await make("/_config/plants", { plant_name: "Bench plant", site_id: site });
  const fn = await make("/_config/functions", { function_name: "Bench function", plant_id: plant });
  const asset = await make("/_config/assets", { asset_name: "Bench asset", function_id: fn, asset_category: "Rotating", attributes: { kw: 450 } });
  for (let m = 0; m < 3; m++) {
    const name = `Bench monitor ${m}`;
    const id = await make("/_config/monitors", { monitor_name: name, monitor_type: "condition-monitor", asset_id: asset });
    const tags = Array.from({ length: 4 }, (_, k) => ({ tag_id: `v${k}`, tag_name: `velocity_${k}`, tag_desc: "", tag_unit: "mm/s", thresholds: {} }));
    const put = await t.http("PUT", `/_config/monitors/${id}`, { body: { monitor_name: name, monitor_type: "condition-monitor", tags, specs: {}, attributes: {} } });
    if (put.status !== 200) throw new Error(`monitor: ${put.status}`);
    await t.node.broker.call("cm.ingest.readings", { readings: tags.map((tag, k) => ({ monitor_id: id, tag_id: tag.tag_id, ts: Date.now(), value: 1 + 2 * k + m })) });
  }
  const bearingMonitor = await make("/_config/monitors", { monitor_name: "Bench bearing", monitor_type: "condition-monitor", asset_id: asset });
  const specs = { bearing: { rolling_elements: 9, ball_diameter: 7.94, pitch_diameter: 39.04 } };
  const put = await t.http("PUT", `/_config/monitors/${bearingMonitor}`, { body: { monitor_name: "Bench bearing", monitor_type: "condition-monitor", tags: [], specs, attributes: {} } });
  if (put.status !== 200) throw new Error(`monitor: ${put.status}`);
  return { asset, bearingMonitor };
}

async function reads(t: TestNode, path: string) {
  for (let i = 0; i < 50; i++) await t.http("GET", path);
  const ms: number[] = [];
  for (let i = 0; i < READS; i++) {
    const t0 = performance.now();
    const res = await t.http("GET", path);
    ms.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  }
  return stats(ms);
}

async function endToEnd(t: TestNode, samples: number[], monitor_id: string) {
  const call = (i: number) =>
    t.node.broker.call("cm.ingest.waveform", { monitor_id, tag: "vibration", axis: "x", ts: 1_700_000_000_000 + i, sample_rate_hz: FS, samples });
  for (let i = 0; i < 5; i++) await call(-1 - i);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CAPTURES) await call(next++);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return { perSecond: CAPTURES / seconds, seconds };
}

async function main() {
  const samples = capture();
  const mine = ours(samples);
  const np = numpy(samples);
  console.log(`Spectrum and peaks of a ${N.toLocaleString("en")}-sample capture at ${FS} Hz (${ITERATIONS} runs, median)`);
  console.log(`  cm (fft.js, Hann, scaling, floor, ${mine.peaks} peaks): ${mine.median.toFixed(2)} ms  (p99 ${mine.p99.toFixed(2)} ms)`);
  console.log(`  numpy ${np.version} rfft alone:                 ${np.rfft.toFixed(2)} ms  -> ratio ${(mine.median / np.rfft).toFixed(2)}x`);
  console.log(`  numpy window + rfft + |X| scaling:          ${np.full.toFixed(2)} ms  -> ratio ${(mine.median / np.full).toFixed(2)}x`);
  // Three rounds, ours and numpy's in turn, so that a load change on a shared machine falls on both sides.
  const rounds = [0, 1, 2].map(() => ({ ours: oursEnvelope(samples), numpy: numpyEnvelope(samples) }));
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const env = { median: mid(rounds.map((r) => r.ours.median)), p99: mid(rounds.map((r) => r.ours.p99)), peaks: rounds[0].ours.peaks };
  const npEnv = { same: mid(rounds.map((r) => r.numpy.same)), butter: mid(rounds.map((r) => r.numpy.butter)), scipy: rounds[0].numpy.scipy };
  console.log(`Envelope spectrum of the same capture, band ${BAND.low}-${BAND.high} Hz (3 rounds of ${ITERATIONS} runs in turn, median of the rounds' medians)`);
  console.log(`  cm (band-pass + Hilbert over one fft.js pair, Hann spectrum, local floor, ${env.peaks} peaks): ${env.median.toFixed(2)} ms  (p99 ${env.p99.toFixed(2)} ms)`);
  console.log(`  numpy/scipy ${npEnv.scipy} same steps (rfft, mask, irfft, hilbert, rfft): ${npEnv.same.toFixed(2)} ms  -> ratio ${(env.median / npEnv.same).toFixed(2)}x`);
  console.log(`  scipy Butterworth sosfiltfilt + hilbert + rfft:        ${npEnv.butter.toFixed(2)} ms  -> ratio ${(env.median / npEnv.butter).toFixed(2)}x`);
  console.log(`  per round, cm / numpy same steps: ${rounds.map((r) => (r.ours.median / r.numpy.same).toFixed(2)).join(", ")}`);
  const t = await startTestNode({ services: ["api", "auth", "config", "cm"] });
  try {
    const { asset, bearingMonitor } = await benchAsset(t);
    const e2e = await endToEnd(t, samples, bearingMonitor);
    console.log(
      `End to end (cm.ingest.waveform of a monitor with a bearing geometry: validate, monitor, spectrum, peaks, envelope, store in PostgreSQL), ${CAPTURES} captures, ${CONCURRENCY} in flight:`,
    );
    console.log(`  ${e2e.perSecond.toFixed(1)} captures/s (${e2e.seconds.toFixed(2)} s)`);
    const severity = await reads(t, `/_cm/assets/${asset}/_severity`);
    const condition = await reads(t, `/_cm/assets/${asset}`);
    console.log(`Severity of an asset with 12 velocity tags over HTTP (${READS} reads, one at a time):`);
    console.log(`  GET /_cm/assets/<id>/_severity: p50 ${severity.median.toFixed(2)} ms, p99 ${severity.p99.toFixed(2)} ms`);
    console.log(`  GET /_cm/assets/<id> (op 73):   p50 ${condition.median.toFixed(2)} ms, p99 ${condition.p99.toFixed(2)} ms`);
  } finally {
    await t.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
