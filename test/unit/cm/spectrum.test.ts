import { execFileSync } from "node:child_process";
import { amplitudeSpectrum, decodeAmplitudes, encodeAmplitudes } from "../../../services/cm/spectrum";
import { findPeaks, fundamentalFrequency, noiseFloor } from "../../../services/cm/peaks";

function tones(n: number, fs: number, parts: { f: number; a: number; phase?: number }[], noise = 0): number[] {
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) - 0.5;
  return Array.from({ length: n }, (_, i) =>
    parts.reduce((s, p) => s + p.a * Math.sin(2 * Math.PI * p.f * (i / fs) + (p.phase ?? 0)), 0) + noise * rand(),
  );
}

/** numpy's rfft of the same windowed samples, amplitude-corrected the same way. */
function numpySpectrum(samples: number[]): number[] {
  const script = `
import json, sys
import numpy as np
x = np.array(json.load(sys.stdin), dtype=np.float64)
n = len(x)
w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)
a = np.abs(np.fft.rfft(x * w)) * 2 / w.sum()
a[0] /= 2
if n % 2 == 0:
    a[-1] /= 2
json.dump(a.tolist(), sys.stdout)
`;
  const out = execFileSync("/usr/bin/python3", ["-c", script], { input: JSON.stringify(samples), maxBuffer: 64 << 20 });
  return JSON.parse(out.toString()) as number[];
}

describe("amplitude spectrum", () => {
  it.each([1000, 1024])("reads 50 Hz amplitude 2 and 120 Hz amplitude 0.5 at 1 kHz within 5%% (N=%i)", (n) => {
    const samples = tones(n, 1000, [
      { f: 50, a: 2 },
      { f: 120, a: 0.5, phase: 0.7 },
    ]);
    const { df, amplitudes } = amplitudeSpectrum(samples, 1000);
    expect(df).toBeCloseTo(1000 / n, 12);
    const peaks = findPeaks(amplitudes, df);
    expect(peaks).toHaveLength(2);
    expect(peaks[0].freq).toBeGreaterThan(50 * 0.95);
    expect(peaks[0].freq).toBeLessThan(50 * 1.05);
    expect(Math.abs(peaks[0].amplitude - 2) / 2).toBeLessThan(0.05);
    expect(Math.abs(peaks[1].freq - 120) / 120).toBeLessThan(0.05);
    expect(Math.abs(peaks[1].amplitude - 0.5) / 0.5).toBeLessThan(0.05);
  });

  it.each([1000, 1024, 4096, 777])("matches numpy's rfft bin by bin within 1e-6 of the largest bin (N=%i)", (n) => {
    const samples = tones(n, 1000, [
      { f: 50, a: 2 },
      { f: 120, a: 0.5, phase: 0.7 },
      { f: 333.3, a: 0.2 },
    ], 0.1).map((v) => v + 0.3);
    const ours = amplitudeSpectrum(samples, 1000).amplitudes;
    const theirs = numpySpectrum(samples);
    expect(ours.length).toBe(theirs.length);
    const largest = Math.max(...theirs);
    let worst = 0;
    for (let k = 0; k < theirs.length; k++) worst = Math.max(worst, Math.abs(ours[k] - theirs[k]));
    expect(worst).toBeLessThan(1e-6 * largest);
  });

  it("reads an off-bin tone's amplitude through the Hann interpolation", () => {
    const samples = tones(1024, 1000, [{ f: 50.4, a: 1 }]);
    const { df, amplitudes } = amplitudeSpectrum(samples, 1000);
    const [peak] = findPeaks(amplitudes, df);
    expect(Math.max(...amplitudes)).toBeLessThan(0.95);
    expect(peak.amplitude).toBeCloseTo(1, 2);
    expect(peak.freq).toBeCloseTo(50.4, 1);
  });

  it("stores a spectrum as 4 bytes a bin and reads it back to float32 precision", () => {
    const { amplitudes } = amplitudeSpectrum(tones(512, 1000, [{ f: 50, a: 2 }]), 1000);
    const buf = encodeAmplitudes(amplitudes);
    expect(buf.length).toBe(amplitudes.length * 4);
    const back = decodeAmplitudes(buf);
    for (let k = 0; k < amplitudes.length; k++) expect(Math.abs(back[k] - amplitudes[k])).toBeLessThan(1e-6);
  });

  it("refuses fewer than 2 samples", () => {
    expect(() => amplitudeSpectrum([1], 1000)).toThrow(RangeError);
  });
});

describe("peaks", () => {
  it("finds no peak in noise alone and ranks real peaks strongest first", () => {
    const noise = amplitudeSpectrum(tones(8192, 1000, [], 1), 1000);
    expect(findPeaks(noise.amplitudes, noise.df)).toEqual([]);
    const sig = amplitudeSpectrum(tones(8192, 1000, [{ f: 30, a: 0.3 }, { f: 60, a: 1 }, { f: 200, a: 0.6 }], 0.05), 1000);
    const peaks = findPeaks(sig.amplitudes, sig.df);
    expect(peaks.map((p) => Math.round(p.freq))).toEqual([60, 200, 30]);
    expect(noiseFloor(sig.amplitudes)).toBeGreaterThan(0);
  });

  it("takes the running speed from rotating_speed, else the largest peak below 100 Hz, else 0", () => {
    const peaks = [
      { bin: 150, freq: 150, amplitude: 5 },
      { bin: 25, freq: 25, amplitude: 1 },
      { bin: 75, freq: 75, amplitude: 2 },
    ];
    expect(fundamentalFrequency(peaks, 1500)).toBe(25);
    expect(fundamentalFrequency(peaks)).toBe(75);
    expect(fundamentalFrequency(peaks, null)).toBe(75);
    expect(fundamentalFrequency([{ bin: 150, freq: 150, amplitude: 5 }])).toBe(0);
  });
});
