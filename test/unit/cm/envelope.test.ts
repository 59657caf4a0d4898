/**
 * The envelope spectrum (services/cm/envelope.ts) against signals with known answers, each made
 * and analysed independently in numpy/scipy: band-pass by the rfft's bins, scipy.signal.hilbert,
 * rfft of the envelope. The bearing is the 6205 of the public seeded-defect recordings (9 balls,
 * 7.94 mm, pitch 39.04 mm) at 1797 RPM, sampled at 12 kHz.
 */
import { defaultBand, envelopeSpectrum, parseBand } from "../../../services/cm/envelope";
import { bearingFindings, bearingFrequencies, bearingGeometryOf } from "../../../services/cm/faults";
import { findPeaks, localNoiseFloor } from "../../../services/cm/peaks";
import { amplitudeSpectrum } from "../../../services/cm/spectrum";
import { BEARING_6205, F1, FS, numpyBearingCase, type SignalKind } from "../../helpers/bearing-signals";

const BEARING = bearingGeometryOf({ bearing: BEARING_6205 })!;
const FREQS = bearingFrequencies(BEARING, F1);
const numpyCase = (kind: SignalKind, n: number, band: { low: number; high: number }) => numpyBearingCase(kind, n, band, FREQS);

const BAND = { low: 2400, high: 4800 };

function analyse(x: number[], band = BAND) {
  const { df, amplitudes } = envelopeSpectrum(x, FS, band);
  const peaks = findPeaks(amplitudes, df, localNoiseFloor(amplitudes));
  return { df, amplitudes, peaks, findings: bearingFindings({ peaks, fundamental: F1, df, maxFreq: FS / 2, bearing: BEARING }) };
}

function expectSameSpectrum(ours: ArrayLike<number>, theirs: number[]) {
  expect(ours.length).toBe(theirs.length);
  const largest = Math.max(...theirs);
  let worst = 0;
  for (let k = 0; k < theirs.length; k++) worst = Math.max(worst, Math.abs(ours[k] - theirs[k]));
  expect(worst).toBeLessThan(1e-6 * largest);
}

/** numpy's largest bin within ±2% of `f`, in Hz. */
function numpyPeakNear(env: number[], df: number, f: number): number {
  let best = Math.round((f * 0.98) / df);
  for (let k = best; k <= Math.round((f * 1.02) / df); k++) if (env[k] > env[best]) best = k;
  return best * df;
}

describe("envelope spectrum", () => {
  it.each([16_384, 12_000])("finds BPFO and two harmonics of outer-race impacts on a 3 kHz resonance, as numpy does (N=%i)", (n) => {
    const { x, env } = numpyCase("outer", n, BAND);
    const ours = analyse(x);
    expectSameSpectrum(ours.amplitudes, env);
    const bpfo = ours.findings.find((f) => f.defect === "BPFO");
    expect(bpfo?.evidence.strength).toBe("strong");
    expect(Math.abs(bpfo!.evidence.peak_hz - numpyPeakNear(env, ours.df, FREQS.BPFO))).toBeLessThanOrEqual(ours.df);
    for (const k of [2, 3]) {
      const near = bpfo!.evidence.harmonics.find((h) => Math.abs(h - k * FREQS.BPFO) < 0.02 * k * FREQS.BPFO);
      expect(near).toBeDefined();
      expect(Math.abs(near! - numpyPeakNear(env, ours.df, k * FREQS.BPFO))).toBeLessThanOrEqual(ours.df);
    }
    // Nothing else of the bearing is called strong.
    expect(ours.findings.filter((f) => f.evidence.strength === "strong").map((f) => f.defect)).toEqual(["BPFO"]);
  });

  it("finds BPFI with ±1x sidebands of inner-race impacts modulated at running speed", () => {
    const { x, env } = numpyCase("inner", 16_384, BAND);
    const ours = analyse(x);
    expectSameSpectrum(ours.amplitudes, env);
    const bpfi = ours.findings.find((f) => f.defect === "BPFI");
    expect(bpfi?.evidence.strength).toBe("strong");
    expect(Math.abs(bpfi!.evidence.peak_hz - numpyPeakNear(env, ours.df, FREQS.BPFI))).toBeLessThanOrEqual(ours.df);
    for (const side of [FREQS.BPFI - F1, FREQS.BPFI + F1]) {
      const near = bpfi!.evidence.sidebands.find((s) => Math.abs(s - side) < 0.02 * side);
      expect(near).toBeDefined();
      expect(Math.abs(near! - numpyPeakNear(env, ours.df, side))).toBeLessThanOrEqual(ours.df);
    }
  });

  it("matches no bearing frequency in a pure unbalance", () => {
    const { x, env } = numpyCase("unbalance", 16_384, BAND);
    const ours = analyse(x);
    expectSameSpectrum(ours.amplitudes, env);
    expect(ours.findings).toEqual([]);
    const plain = amplitudeSpectrum(x, FS);
    const plainPeaks = findPeaks(plain.amplitudes, plain.df);
    expect(bearingFindings({ peaks: plainPeaks, fundamental: F1, df: plain.df, maxFreq: FS / 2, bearing: BEARING })).toEqual([]);
  });

  it("finds the 3 kHz resonance by default: one octave around it, above 10x", () => {
    const { x } = numpyCase("outer", 16_384, BAND);
    const plain = amplitudeSpectrum(x, FS);
    const band = defaultBand(plain.amplitudes, plain.df, F1);
    expect(band.low).toBeLessThan(3000);
    expect(band.high).toBeGreaterThan(3000);
    expect(band.high / band.low).toBeCloseTo(2, 6);
    expect(analyse(x, band).findings.find((f) => f.defect === "BPFO")?.evidence.strength).toBe("strong");
  });

  it("reads band=<low>-<high> up to Nyquist and nothing else", () => {
    expect(parseBand("2400-4800", 6000)).toEqual({ low: 2400, high: 4800 });
    expect(parseBand("0-6000", 6000)).toEqual({ low: 0, high: 6000 });
    for (const bad of ["4800-2400", "100-100", "2400-6001", "2400", "a-b", "-5-10", "1e3-2e3"]) expect(parseBand(bad, 6000)).toBeUndefined();
  });
});
