/**
 * Significant peaks of an amplitude spectrum and the running speed they are read against
 * (the answer's `fundamental_freq`).
 *
 * A peak is a local maximum (higher than the bin below it, not lower than the bin above) above
 * the noise floor. The floor is the larger of
 *   - NOISE_FACTOR × the median bin: for noise alone, bin amplitudes follow a Rayleigh law, and
 *     P(A > 5·median) = 2^−25, so a 32k-bin spectrum of pure noise shows no peak;
 *   - RELATIVE_FLOOR × the largest bin (−40 dB): keeps rounding noise of a clean synthetic
 *     signal from reading as peaks.
 * DC (bin 0) is left out: a sensor's bias is not a vibration.
 *
 * Frequency and amplitude are refined from the three bins around the maximum with the Hann
 * window's own kernel (Grandke's ratio method), which is exact for a single tone, so a tone
 * between two bins still reads its true amplitude instead of up to 15% (1.42 dB) less.
 */
export interface Peak {
  /** The bin of the local maximum, as flagged by `_spectrum`. */
  bin: number;
  freq: number;
  amplitude: number;
}

export const NOISE_FACTOR = 5;
export const RELATIVE_FLOOR = 0.01;
export const MAX_PEAKS = 50;

/** The k-th smallest value (0-based) of `a`, reordering it, in linear expected time. */
function select(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

export function noiseFloor(amplitudes: ArrayLike<number>): number {
  if (amplitudes.length < 2) return 0;
  const body = new Float64Array(amplitudes.length - 1);
  let max = 0;
  for (let k = 1; k < amplitudes.length; k++) {
    const v = amplitudes[k];
    body[k - 1] = v;
    if (v > max) max = v;
  }
  const median = select(body, Math.floor(body.length / 2));
  return Math.max(NOISE_FACTOR * median, RELATIVE_FLOOR * max);
}

/** Hann kernel magnitude at an offset of `d` bins, normalised to 1 at 0. */
function hannKernel(d: number): number {
  if (d === 0) return 1;
  const x = Math.PI * d;
  return Math.abs(Math.sin(x) / x / (1 - d * d));
}

function refine(amplitudes: ArrayLike<number>, k: number, df: number): { freq: number; amplitude: number } {
  const b = amplitudes[k];
  const a = k > 0 ? amplitudes[k - 1] : 0;
  const c = k + 1 < amplitudes.length ? amplitudes[k + 1] : 0;
  if (b <= 0) return { freq: k * df, amplitude: 0 };
  const alpha = Math.max(a, c) / b;
  const delta = ((2 * alpha - 1) / (alpha + 1)) * (c >= a ? 1 : -1);
  const d = Math.max(-0.5, Math.min(0.5, delta));
  return { freq: (k + d) * df, amplitude: b / hannKernel(d) };
}

/**
 * A floor that follows the spectrum: at each bin the larger of the global floor and LOCAL_FACTOR
 * × the mean of the bins within 1% of the range either side (at least 8). For spectra whose noise
 * is not flat, as an envelope spectrum's (band noise demodulates to a slope falling from 0 Hz to
 * the bandwidth): against one median, its low bins would all read as peaks. For Rayleigh noise
 * the mean is 1.06 × the median, so 5 × the local mean is as strict as the global floor is.
 */
export const LOCAL_FACTOR = 5;
export function localNoiseFloor(amplitudes: ArrayLike<number>): Float64Array {
  const n = amplitudes.length;
  const global = noiseFloor(amplitudes);
  const half = Math.max(8, Math.round(n / 100));
  const prefix = new Float64Array(n + 1);
  for (let k = 0; k < n; k++) prefix[k + 1] = prefix[k] + (k === 0 ? 0 : amplitudes[k]);
  const floor = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const lo = Math.max(1, k - half);
    const hi = Math.min(n, k + half + 1);
    floor[k] = Math.max(global, hi > lo ? (LOCAL_FACTOR * (prefix[hi] - prefix[lo])) / (hi - lo) : 0);
  }
  return floor;
}

/** Peaks strongest first, at most MAX_PEAKS; `floor` one level, or one a bin. */
export function findPeaks(amplitudes: ArrayLike<number>, df: number, floor: number | ArrayLike<number> = noiseFloor(amplitudes)): Peak[] {
  const peaks: Peak[] = [];
  const floorAt = typeof floor === "number" ? () => floor : (k: number) => floor[k];
  for (let k = 1; k < amplitudes.length; k++) {
    const v = amplitudes[k];
    if (v <= floorAt(k) || v <= amplitudes[k - 1]) continue;
    if (k + 1 < amplitudes.length && v < amplitudes[k + 1]) continue;
    peaks.push({ bin: k, ...refine(amplitudes, k, df) });
  }
  peaks.sort((p, q) => q.amplitude - p.amplitude);
  return peaks.slice(0, MAX_PEAKS);
}

/**
 * Running speed in Hz: the asset's `rotating_speed` (RPM) / 60 when set, else the largest peak
 * below 100 Hz; 0 when neither exists.
 */
export function fundamentalFrequency(peaks: Peak[], rotatingSpeedRpm?: number | null): number {
  if (typeof rotatingSpeedRpm === "number" && Number.isFinite(rotatingSpeedRpm) && rotatingSpeedRpm > 0) {
    return rotatingSpeedRpm / 60;
  }
  let best: Peak | undefined;
  for (const p of peaks) if (p.freq > 0 && p.freq < 100 && (!best || p.amplitude > best.amplitude)) best = p;
  return best ? best.freq : 0;
}
