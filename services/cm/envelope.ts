/**
 * The envelope spectrum of a vibration capture: how bearing defects are found before their tones
 * stand out of the plain spectrum. Each impact of a defect rings a structural resonance; the
 * resonance band's envelope repeats at the defect frequency (R. B. Randall and J. Antoni,
 * "Rolling element bearing diagnostics — A tutorial", MSSP 25 (2011), on envelope
 * analysis). Three steps over one DFT pair:
 *   1. band-pass: of the capture's DFT only the bins in [low, high] are kept (DC never);
 *   2. Hilbert: the analytic signal of that band is the inverse DFT of its positive bins doubled
 *      (the Nyquist bin once) and its negative bins zeroed, as scipy.signal.hilbert computes it;
 *      the envelope is its magnitude;
 *   3. the envelope less its mean goes through the amplitude spectrum of spectrum.ts (Hann).
 * Pure.
 */
import { amplitudeSpectrum, inverseDft, realSignalDft, type Spectrum } from "./spectrum";

/** A frequency band in Hz. */
export interface Band {
  low: number;
  high: number;
}

/** Work buffers of one length (2N values each), kept: 3 MB a call at 65,536 samples is the GC's time otherwise. */
interface Scratch {
  dft: Float64Array;
  analytic: Float64Array;
  z: Float64Array;
}
const scratchCache = new Map<number, Scratch>();
function scratchOf(n: number): Scratch {
  let s = scratchCache.get(n);
  if (!s) {
    s = { dft: new Float64Array(2 * n), analytic: new Float64Array(2 * n), z: new Float64Array(2 * n) };
    if (scratchCache.size > 8) scratchCache.clear();
    scratchCache.set(n, s);
  }
  return s;
}

/** The envelope of the capture's [low, high] band. */
export function envelopeOf(samples: ArrayLike<number>, sampleRateHz: number, band: Band): Float64Array {
  const n = samples.length;
  const x = samples instanceof Float64Array ? samples : new Float64Array(samples);
  const scratch = scratchOf(n);
  const dft = realSignalDft(x, scratch.dft);
  const df = sampleRateHz / n;
  const half = Math.floor(n / 2);
  const from = Math.max(1, Math.ceil(band.low / df - 1e-9));
  const to = Math.min(half, Math.floor(band.high / df + 1e-9));
  const analytic = scratch.analytic.fill(0);
  for (let k = from; k <= to; k++) {
    const gain = n % 2 === 0 && k === half ? 1 : 2;
    analytic[2 * k] = gain * dft[2 * k];
    analytic[2 * k + 1] = gain * dft[2 * k + 1];
  }
  const z = inverseDft(analytic, scratch.z);
  const env = new Float64Array(n);
  // sqrt(re² + im²), not Math.hypot: no overflow at vibration amplitudes, and 4x faster.
  for (let i = 0; i < n; i++) {
    const re = z[2 * i];
    const im = z[2 * i + 1];
    env[i] = Math.sqrt(re * re + im * im);
  }
  return env;
}

/** The amplitude spectrum of the band's envelope, its mean removed. */
export function envelopeSpectrum(samples: ArrayLike<number>, sampleRateHz: number, band: Band): Spectrum {
  const env = envelopeOf(samples, sampleRateHz, band);
  let mean = 0;
  for (let i = 0; i < env.length; i++) mean += env[i];
  mean /= env.length;
  for (let i = 0; i < env.length; i++) env[i] -= mean;
  return amplitudeSpectrum(env, sampleRateHz);
}

/** Resonances are looked for above this many times the running speed (below: its harmonics). */
export const RESONANCE_FROM_ORDER = 10;

/**
 * One octave around the strongest resonance above 10x running speed: the centre of the highest
 * energy of the plain spectrum averaged over 1% of its range (a resonance is a hump, not a
 * line), the band [c/√2, c·√2], moved inside [10x, Nyquist] when it crosses either.
 */
export function defaultBand(amplitudes: ArrayLike<number>, df: number, fundamental: number): Band {
  const bins = amplitudes.length;
  const nyquist = (bins - 1) * df;
  const width = Math.max(3, Math.round(bins / 100));
  const prefix = new Float64Array(bins + 1);
  for (let k = 0; k < bins; k++) prefix[k + 1] = prefix[k] + amplitudes[k] * amplitudes[k];
  const floorHz = Math.max(RESONANCE_FROM_ORDER * (fundamental > 0 ? fundamental : 0), 0);
  const first = Math.max(1, Math.ceil(floorHz / df));
  let best = first;
  let bestEnergy = -1;
  for (let k = first; k + width <= bins; k++) {
    const energy = prefix[k + width] - prefix[k];
    if (energy > bestEnergy) {
      bestEnergy = energy;
      best = k;
    }
  }
  const centre = (best + width / 2) * df;
  let low = centre / Math.SQRT2;
  let high = centre * Math.SQRT2;
  if (high > nyquist) {
    high = nyquist;
    low = nyquist / 2;
  }
  if (low < floorHz) {
    low = floorHz;
    high = Math.min(nyquist, 2 * floorHz);
  }
  return { low, high };
}

/** `band=<low>-<high>` in Hz, 0 ≤ low < high ≤ Nyquist; undefined otherwise. */
export function parseBand(text: string, nyquist: number): Band | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*$/.exec(text);
  if (!m) return undefined;
  const low = Number(m[1]);
  const high = Number(m[2]);
  return low < high && high <= nyquist ? { low, high } : undefined;
}

/** The band as the X-Envelope-Band header says it: `<low>-<high>` in Hz to 0.1 Hz. */
export const bandText = (b: Band): string => `${b.low.toFixed(1)}-${b.high.toFixed(1)}`;
