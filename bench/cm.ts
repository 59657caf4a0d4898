/**
 * `npm run bench:cm`: the cost of a vibration capture.
 *   1. Spectrum and peaks of a 65,536-sample capture (services/cm: Hann window, fft.js,
 *      amplitude correction, noise floor, peaks), time per capture; and in the same run numpy's
 *      `rfft` on the same samples (python3-numpy): `rfft` alone and with the same window and
 *      scaling, so the ratio compares like with like. Target: within 3x of numpy.
 *   2. Captures per second the cm service sustains end to end: `cm.ingest.waveform` on a real
 *      broker (validation, spectrum, peaks, float32 encoding, the PostgreSQL insert), with
 *      BENCH_CM_CONCURRENCY captures in flight.
 *
 * Env: BENCH_CM_ITERATIONS (200), BENCH_CM_CAPTURES (200), BENCH_CM_CONCURRENCY (4), PYTHON (/usr/bin/python3).
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { findPeaks } from "../services/cm/peaks";
import { amplitudeSpectrum } from "../services/cm/spectrum";
import { startTestNode } from "../test/helpers/node";

const N = 65_536;
const FS = 25_600;
const ITERATIONS = Number(process.env.BENCH_CM_ITERATIONS ?? 200);
const CAPTURES = Number(process.env.BENCH_CM_CAPTURES ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CM_CONCURRENCY ?? 4);
const PYTHON = process.env.PYTHON ?? "/usr/bin/python3";

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

async function endToEnd(samples: number[]) {
  const t = await startTestNode({ services: ["cm"] });
  try {
    const monitor_id = randomUUID();
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
  } finally {
    await t.stop();
  }
}

async function main() {
  const samples = capture();
  const mine = ours(samples);
  const np = numpy(samples);
  console.log(`Spectrum and peaks of a ${N.toLocaleString("en")}-sample capture at ${FS} Hz (${ITERATIONS} runs, median)`);
  console.log(`  cm (fft.js, Hann, scaling, floor, ${mine.peaks} peaks): ${mine.median.toFixed(2)} ms  (p99 ${mine.p99.toFixed(2)} ms)`);
  console.log(`  numpy ${np.version} rfft alone:                 ${np.rfft.toFixed(2)} ms  -> ratio ${(mine.median / np.rfft).toFixed(2)}x`);
  console.log(`  numpy window + rfft + |X| scaling:          ${np.full.toFixed(2)} ms  -> ratio ${(mine.median / np.full).toFixed(2)}x`);
  const e2e = await endToEnd(samples);
  console.log(
    `End to end (cm.ingest.waveform: validate, spectrum, peaks, store in PostgreSQL), ${CAPTURES} captures, ${CONCURRENCY} in flight:`,
  );
  console.log(`  ${e2e.perSecond.toFixed(1)} captures/s (${e2e.seconds.toFixed(2)} s)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
