/**
 * The single-sided amplitude spectrum of a vibration capture.
 *
 * - Window: periodic Hann, w[n] = 0.5 − 0.5·cos(2πn/N) (the DFT-even form spectral analysers
 *   use; scipy's `get_window("hann", N)`).
 * - Amplitude correction: |X[k]|·2/Σw for 0 < k < N/2, |X[k]|/Σw for DC and Nyquist, so a sine of
 *   amplitude A that falls on a bin reads A.
 * - Length: a power of two goes straight to fft.js's real transform. Any other length is
 *   transformed exactly (Bluestein's chirp-z, built on fft.js's complex transform) rather than
 *   zero-padded, so the bins are the capture's own (k·fs/N) and agree with numpy's
 *   `rfft(x·w)` for every N.
 */
import FFT from "fft.js";

export interface Spectrum {
  /** Bin spacing in Hz: sample_rate_hz / N. */
  df: number;
  /** Amplitude of bins 0..floor(N/2), in the capture's unit. */
  amplitudes: Float64Array;
}

const fftCache = new Map<number, FFT>();
function fftOf(size: number): FFT {
  let f = fftCache.get(size);
  if (!f) {
    f = new FFT(size);
    if (fftCache.size > 32) fftCache.clear();
    fftCache.set(size, f);
  }
  return f;
}

const windowCache = new Map<number, { w: Float64Array; sum: number }>();
export function hannWindow(n: number): { w: Float64Array; sum: number } {
  let hit = windowCache.get(n);
  if (!hit) {
    const w = new Float64Array(n);
    let sum = 0;
    for (let i = 0; i < n; i++) {
      w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n);
      sum += w[i];
    }
    hit = { w, sum };
    if (windowCache.size > 32) windowCache.clear();
    windowCache.set(n, hit);
  }
  return hit;
}

const isPowerOfTwo = (n: number): boolean => n >= 2 && (n & (n - 1)) === 0;

/** Bins 0..N/2 of the DFT of a real signal, interleaved re/im, for a power-of-two length. */
function realDft(x: Float64Array, out: Float64Array = new Float64Array(2 * x.length)): Float64Array {
  fftOf(x.length).realTransform(out, x);
  return out;
}

interface Chirp {
  m: number;
  /** w[k] = exp(−iπk²/N), interleaved. */
  w: Float64Array;
  /** FFT of the conjugate chirp laid out circularly over M points. */
  bHat: Float64Array;
}
const chirpCache = new Map<number, Chirp>();
function chirpOf(n: number): Chirp {
  let c = chirpCache.get(n);
  if (c) return c;
  let m = 1;
  while (m < 2 * n - 1) m <<= 1;
  const w = new Float64Array(2 * n);
  for (let k = 0; k < n; k++) {
    // k² mod 2N keeps the angle small, so the chirp stays exact for long captures.
    const angle = (Math.PI * ((k * k) % (2 * n))) / n;
    w[2 * k] = Math.cos(angle);
    w[2 * k + 1] = -Math.sin(angle);
  }
  const b = new Float64Array(2 * m);
  b[0] = 1;
  for (let k = 1; k < n; k++) {
    b[2 * k] = w[2 * k];
    b[2 * k + 1] = -w[2 * k + 1];
    b[2 * (m - k)] = w[2 * k];
    b[2 * (m - k) + 1] = -w[2 * k + 1];
  }
  const bHat = new Float64Array(2 * m);
  fftOf(m).transform(bHat, b);
  c = { m, w, bHat };
  if (chirpCache.size > 16) chirpCache.clear();
  chirpCache.set(n, c);
  return c;
}

/** Exact DFT of any length (Bluestein) of a complex signal (interleaved re/im), bins 0..N−1 interleaved. */
function anyLengthComplexDft(z: Float64Array): Float64Array {
  const n = z.length / 2;
  const { m, w, bHat } = chirpOf(n);
  const f = fftOf(m);
  const a = new Float64Array(2 * m);
  for (let k = 0; k < n; k++) {
    const re = z[2 * k];
    const im = z[2 * k + 1];
    a[2 * k] = re * w[2 * k] - im * w[2 * k + 1];
    a[2 * k + 1] = re * w[2 * k + 1] + im * w[2 * k];
  }
  const aHat = new Float64Array(2 * m);
  f.transform(aHat, a);
  for (let k = 0; k < m; k++) {
    const re = aHat[2 * k] * bHat[2 * k] - aHat[2 * k + 1] * bHat[2 * k + 1];
    const im = aHat[2 * k] * bHat[2 * k + 1] + aHat[2 * k + 1] * bHat[2 * k];
    aHat[2 * k] = re;
    aHat[2 * k + 1] = im;
  }
  const conv = new Float64Array(2 * m);
  f.inverseTransform(conv, aHat);
  const out = new Float64Array(2 * n);
  for (let k = 0; k < n; k++) {
    const re = conv[2 * k];
    const im = conv[2 * k + 1];
    out[2 * k] = re * w[2 * k] - im * w[2 * k + 1];
    out[2 * k + 1] = re * w[2 * k + 1] + im * w[2 * k];
  }
  return out;
}

/** Exact DFT of any length of a real signal, interleaved re/im for bins 0..N−1. */
function anyLengthDft(x: Float64Array): Float64Array {
  const z = new Float64Array(2 * x.length);
  for (let k = 0; k < x.length; k++) z[2 * k] = x[k];
  return anyLengthComplexDft(z);
}

/**
 * The DFT of a real signal of any length, interleaved re/im; bins 0..floor(N/2) are filled (the
 * others mirror them). `out` (2N values): a buffer to reuse, taken for power-of-two lengths.
 */
export function realSignalDft(x: Float64Array, out?: Float64Array): Float64Array {
  return isPowerOfTwo(x.length) ? realDft(x, out) : anyLengthDft(x);
}

/** The inverse DFT (1/N scaled) of N complex bins, interleaved re/im, for any N; `out` as realSignalDft's. */
export function inverseDft(bins: Float64Array, out?: Float64Array): Float64Array {
  const n = bins.length / 2;
  if (isPowerOfTwo(n)) {
    const result = out ?? new Float64Array(2 * n);
    fftOf(n).inverseTransform(result, bins);
    return result;
  }
  // ifft(X) = conj(fft(conj(X))) / N
  const conj = new Float64Array(bins);
  for (let k = 1; k < conj.length; k += 2) conj[k] = -conj[k];
  const back = anyLengthComplexDft(conj);
  for (let k = 0; k < back.length; k += 2) {
    back[k] /= n;
    back[k + 1] = -back[k + 1] / n;
  }
  return back;
}

/** The amplitude spectrum of `samples` taken at `sampleRateHz`. Needs at least 2 samples. */
export function amplitudeSpectrum(samples: ArrayLike<number>, sampleRateHz: number): Spectrum {
  const n = samples.length;
  if (n < 2) throw new RangeError("a spectrum needs at least 2 samples");
  const { w, sum } = hannWindow(n);
  // Windowed in place of a copy: the loop then reads one kind of array whatever the caller passed
  // (a capture's number[], an envelope's Float64Array), which keeps V8's access to it monomorphic.
  const x = new Float64Array(samples);
  for (let i = 0; i < n; i++) x[i] *= w[i];
  const dft = realSignalDft(x);
  const bins = Math.floor(n / 2) + 1;
  const amplitudes = new Float64Array(bins);
  const scale = 2 / sum;
  for (let k = 0; k < bins; k++) {
    const re = dft[2 * k];
    const im = dft[2 * k + 1];
    const mag = Math.sqrt(re * re + im * im);
    const edge = k === 0 || (n % 2 === 0 && k === n / 2);
    amplitudes[k] = edge ? mag / sum : mag * scale;
  }
  return { df: sampleRateHz / n, amplitudes };
}

/** Spectra are stored as little-endian float32 (4 bytes a bin), not as rows per bin. */
export function encodeAmplitudes(amplitudes: ArrayLike<number>): Buffer {
  const buf = Buffer.allocUnsafe(amplitudes.length * 4);
  for (let i = 0; i < amplitudes.length; i++) buf.writeFloatLE(amplitudes[i], i * 4);
  return buf;
}

export function decodeAmplitudes(buf: Buffer): Float32Array {
  const out = new Float32Array(buf.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}
