/**
 * Vibration captures with known answers, made in numpy (python3-numpy, python3-scipy), and
 * numpy/scipy's own envelope spectrum of them: band-pass by the rfft's bins,
 * scipy.signal.hilbert, rfft of the envelope (Hann, amplitude-corrected as services/cm does).
 * The bearing is the 6205 of the public seeded-defect recordings at 1797 RPM, 12 kHz.
 */
import { execFileSync } from "node:child_process";

export const FS = 12_000;
export const RPM = 1797;
export const F1 = RPM / 60;
export const BEARING_6205 = { rolling_elements: 9, ball_diameter: 7.94, pitch_diameter: 39.04, contact_angle: 0 };

/** outer: impacts at BPFO ringing a 3 kHz resonance; inner: at BPFI, modulated at 1x; unbalance: 1x alone. All with noise and 1% slip. */
export type SignalKind = "outer" | "inner" | "unbalance";

/**
 * The samples (float32-exact: cm keeps a capture as float32) and numpy's envelope spectrum of
 * the band.
 */
export function numpyBearingCase(kind: SignalKind, n: number, band: { low: number; high: number }, freqs: { BPFO: number; BPFI: number }) {
  const script = `
import json, sys
import numpy as np
from scipy.signal import hilbert
kind, n, fs, f1, bpfo, bpfi, low, high = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:9])
rng = np.random.default_rng(7)
t = np.arange(n) / fs
def impacts(rate, amp):
    x = np.zeros(n)
    for t0 in np.arange(0, n / fs, 1 / rate):
        t0 += rng.normal(0, 0.01 / rate)
        m = t >= t0
        dt = t[m] - t0
        x[m] += amp(t0) * np.exp(-dt / 0.0008) * np.sin(2 * np.pi * 3000 * dt)
    return x
x = 0.5 * np.sin(2 * np.pi * f1 * t) + rng.normal(0, 0.15, n)
if kind == "outer":
    x += impacts(bpfo, lambda t0: 1.0)
elif kind == "inner":
    x += impacts(bpfi, lambda t0: 1.0 + 0.8 * np.cos(2 * np.pi * f1 * t0))
else:
    x = 2.0 * np.sin(2 * np.pi * f1 * t) + rng.normal(0, 0.05, n)
x = x.astype(np.float32).astype(np.float64)
X = np.fft.rfft(x)
k = np.arange(len(X)) * fs / n
X[(k < low) | (k > high) | (k == 0)] = 0
env = np.abs(hilbert(np.fft.irfft(X, n)))
env -= env.mean()
w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)
a = np.abs(np.fft.rfft(env * w)) * 2 / w.sum()
a[0] /= 2
if n % 2 == 0: a[-1] /= 2
json.dump({"x": x.tolist(), "env": a.tolist()}, sys.stdout)
`;
  const args = [kind, n, FS, F1, freqs.BPFO, freqs.BPFI, band.low, band.high].map(String);
  const out = execFileSync("/usr/bin/python3", ["-c", script, ...args], { maxBuffer: 256 << 20 });
  return JSON.parse(out.toString()) as { x: number[]; env: number[] };
}
