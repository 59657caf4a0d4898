/**
 * Fault rules read from a spectrum's peaks, relative to the running speed (orders of 1x), the
 * classic ones of vibration analysis:
 *   - unbalance: 1x is the strongest peak and 2x is less than half of it;
 *   - misalignment: 2x at least half of 1x;
 *   - looseness: many harmonics, at least LOOSENESS_MIN_HIGH harmonics of order 3..10;
 *   - bearing defects: a peak at BPFO, BPFI, BSF or FTF computed from the bearing geometry in
 *     the monitor's `specs`, that is not itself a harmonic of the running speed, backed by a
 *     harmonic of it or a sideband (BPFI ± 1x, BSF ± FTF): `strong`. One such peak alone is `weak`
 *     and not a fault (docs/api-tour.md, "Bearing evidence"): a lone bin near a defect frequency is
 *     what a healthy bearing's spectrum shows too.
 * Every line names its evidence: frequency, order and amplitude.
 */
import type { Peak } from "./peaks";

export interface BearingGeometry {
  rolling_elements: number;
  ball_diameter: number;
  pitch_diameter: number;
  /** Degrees. */
  contact_angle: number;
}

export interface BearingFrequencies {
  BPFO: number;
  BPFI: number;
  BSF: number;
  FTF: number;
}

export type BearingDefect = keyof BearingFrequencies;
export const BEARING_DEFECTS: readonly BearingDefect[] = ["BPFO", "BPFI", "BSF", "FTF"];

export interface Fault {
  /** Short name, as listed in a CM asset's `asset_faults`. */
  fault: string;
  /** The summary line with its evidence. */
  line: string;
}

export const LOOSENESS_MIN_HIGH = 3;
const MAX_ORDER = 10;

const BEARING_NAMES: Record<BearingDefect, string> = {
  BPFO: "Bearing outer race defect (BPFO)",
  BPFI: "Bearing inner race defect (BPFI)",
  BSF: "Bearing rolling element defect (BSF)",
  FTF: "Bearing cage defect (FTF)",
};

function num(v: unknown): number | undefined {
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
  return typeof n === "number" && Number.isFinite(n) ? n : undefined;
}

/**
 * The bearing geometry in a monitor's `specs`, flat or under `specs.bearing`:
 * `rolling_elements` (or `number_of_balls`), `ball_diameter`, `pitch_diameter` (same length
 * unit) and `contact_angle` in degrees (0 when absent). Undefined when incomplete or impossible.
 */
export function bearingGeometryOf(specs: unknown): BearingGeometry | undefined {
  if (!specs || typeof specs !== "object") return undefined;
  const s = specs as Record<string, unknown>;
  const src = s.bearing && typeof s.bearing === "object" ? (s.bearing as Record<string, unknown>) : s;
  const n = num(src.rolling_elements ?? src.number_of_balls);
  const d = num(src.ball_diameter);
  const D = num(src.pitch_diameter);
  const angle = num(src.contact_angle) ?? 0;
  if (n === undefined || d === undefined || D === undefined) return undefined;
  if (n < 1 || d <= 0 || D <= d || angle < 0 || angle >= 90) return undefined;
  return { rolling_elements: n, ball_diameter: d, pitch_diameter: D, contact_angle: angle };
}

/**
 * Defect frequencies in Hz at running speed `f` Hz (outer race stationary), with r = d/D·cos φ:
 * FTF = f/2·(1 − r), BPFO = n·f/2·(1 − r), BPFI = n·f/2·(1 + r), BSF = D·f/(2d)·(1 − r²).
 * Source: R. B. Randall and J. Antoni, "Rolling element bearing diagnostics — A tutorial",
 * Mechanical Systems and Signal Processing 25 (2011), its bearing frequency formulas. As orders:
 * divide by f.
 */
export function bearingFrequencies(g: BearingGeometry, f: number): BearingFrequencies {
  const r = (g.ball_diameter / g.pitch_diameter) * Math.cos((g.contact_angle * Math.PI) / 180);
  return {
    BPFO: ((g.rolling_elements * f) / 2) * (1 - r),
    BPFI: ((g.rolling_elements * f) / 2) * (1 + r),
    BSF: ((g.pitch_diameter * f) / (2 * g.ball_diameter)) * (1 - r * r),
    FTF: (f / 2) * (1 - r),
  };
}

/** Peaks are matched within 1.5 bins or 3% of the frequency, whichever is wider (speed varies with load). */
export function tolerance(freq: number, df: number, share = 0.03): number {
  return Math.max(1.5 * df, share * freq);
}

/**
 * A harmonic or sideband is looked for at a multiple of (or an offset from) the peak actually
 * found, so it may be nearer than the defect's own tolerance: 1.5 bins or 1%.
 */
export function evidenceTolerance(freq: number, df: number): number {
  return Math.max(1.5 * df, 0.01 * freq);
}

function strongestNear(peaks: Peak[], freq: number, df: number, tol = tolerance(freq, df)): Peak | undefined {
  let best: Peak | undefined;
  for (const p of peaks) if (Math.abs(p.freq - freq) <= tol && (!best || p.amplitude > best.amplitude)) best = p;
  return best;
}

const hz = (f: number): string => `${f.toFixed(1)} Hz`;
const amp = (a: number): string => a.toFixed(3);
const order = (f: number, f1: number): string => (f / f1).toFixed(2);

function evidence(p: Peak, f1: number): string {
  return `${hz(p.freq)} (order ${order(p.freq, f1)}), amplitude ${amp(p.amplitude)}`;
}

export interface DiagnoseInput {
  peaks: Peak[];
  /** Running speed in Hz; 0 when unknown. */
  fundamental: number;
  /** Bin spacing in Hz. */
  df: number;
  /** Highest frequency of the spectrum (Nyquist). */
  maxFreq: number;
  bearing?: BearingGeometry;
  /** The share of a defect frequency a peak may be off and match it (BEARING_MATCH_TOLERANCE); 3% when absent. */
  bearingTolerance?: number;
}

export function diagnose(input: DiagnoseInput): Fault[] {
  const { peaks, fundamental: f1, df, maxFreq, bearing } = input;
  if (!(f1 > 0) || peaks.length === 0) return [];
  const faults: Fault[] = [];
  const strongest = peaks.reduce((a, b) => (b.amplitude > a.amplitude ? b : a));
  const x1 = strongestNear(peaks, f1, df);
  const x2 = strongestNear(peaks, 2 * f1, df);

  if (x1 && x1 === strongest && (!x2 || x2.amplitude < 0.5 * x1.amplitude)) {
    faults.push({ fault: "Unbalance", line: `Unbalance: 1x running speed dominant at ${evidence(x1, f1)}` });
  }
  if (x2 && (x1 ? x2.amplitude >= 0.5 * x1.amplitude : x2 === strongest)) {
    const share = x1 ? ` (${Math.round((100 * x2.amplitude) / x1.amplitude)}% of 1x)` : "";
    faults.push({ fault: "Misalignment", line: `Misalignment: strong 2x at ${evidence(x2, f1)}${share}` });
  }

  const orders: number[] = [];
  let highest: Peak | undefined;
  for (let n = 1; n <= MAX_ORDER && n * f1 <= maxFreq; n++) {
    const p = strongestNear(peaks, n * f1, df);
    if (p) {
      orders.push(n);
      highest = p;
    }
  }
  if (orders.filter((n) => n >= 3).length >= LOOSENESS_MIN_HIGH && highest) {
    faults.push({
      fault: "Looseness",
      line: `Looseness: ${orders.length} harmonics of running speed (orders ${orders.join(", ")}), up to ${hz(highest.freq)}, amplitude ${amp(highest.amplitude)}`,
    });
  }

  if (bearing) {
    for (const f of bearingFindings(input)) {
      if (f.evidence.strength === "strong") faults.push(bearingFault(f, f1));
    }
  }
  return faults;
}

/** A strong bearing finding as a fault; `where` names the spectrum when it is not the plain one. */
export function bearingFault(f: BearingFinding, f1: number, where = ""): Fault {
  const name = BEARING_NAMES[f.defect];
  return { fault: name, line: `${name} at ${hz(f.target)}: peak at ${evidence(f.peak, f1)}${where}` };
}

/** What backs a bearing finding: the matched peak, its harmonics and its sidebands (Hz). */
export interface BearingEvidence {
  peak_hz: number;
  harmonics: number[];
  sidebands: number[];
  strength: "strong" | "weak";
}

/** What a peak that matches a bearing defect says of it (op 67's `bearing`). */
export interface BearingMatch {
  defect: BearingDefect;
  /** The peak's frequency in orders of the running speed. */
  order: number;
  /** 1 for the defect frequency itself, k for its k-th harmonic. */
  harmonic: number;
  /** Frequencies (Hz) of the sidebands found beside this peak. */
  sidebands: number[];
}

export interface BearingFinding {
  defect: BearingDefect;
  /** The defect frequency (Hz) from the geometry. */
  target: number;
  peak: Peak;
  evidence: BearingEvidence;
  /** The peaks that make the finding (the defect's and its harmonics'), by bin. */
  matches: Map<number, BearingMatch>;
}

/** Harmonics of a defect frequency looked for, the defect's own included. */
const BEARING_HARMONICS = 5;

/**
 * Each bearing defect whose frequency a peak matches (within `tolerance`, not on a harmonic of
 * the running speed), with its evidence: harmonics 2..5 of the matched peak, and the sidebands
 * that the defect modulates with (BPFI ± 1x: the inner race turns through the load zone; BSF ±
 * FTF: the element turns with the cage; Randall and Antoni, as above) beside it and beside
 * each harmonic.
 */
export function bearingFindings({ peaks, fundamental: f1, df, maxFreq, bearing, bearingTolerance }: DiagnoseInput): BearingFinding[] {
  if (!bearing || !(f1 > 0)) return [];
  const freqs = bearingFrequencies(bearing, f1);
  // Peaks off the running speed's harmonics: within today's tolerance for the defect's own
  // peak, within the evidence's for its harmonics and sidebands (3% of order 7 would hide 2xBPFO).
  const offHarmonics = (tol: typeof tolerance) => peaks.filter((q) => {
    const n = Math.round(q.freq / f1);
    return n < 1 || Math.abs(q.freq - n * f1) > tol(n * f1, df);
  });
  const matchable = offHarmonics(tolerance);
  const candidates = offHarmonics(evidenceTolerance);
  const offsetOf: Record<BearingDefect, number> = { BPFO: 0, BPFI: f1, BSF: freqs.FTF, FTF: 0 };
  const findings: BearingFinding[] = [];
  for (const defect of BEARING_DEFECTS) {
    const target = freqs[defect];
    if (target > maxFreq) continue;
    const peak = strongestNear(matchable, target, df, tolerance(target, df, bearingTolerance));
    if (!peak) continue;
    const offset = offsetOf[defect];
    const sidebandsOf = (p: Peak): number[] => {
      if (!(offset > 0)) return [];
      return [p.freq - offset, p.freq + offset]
        .map((f) => (f > 0 ? strongestNear(candidates, f, df, evidenceTolerance(f, df)) : undefined))
        .filter((q): q is Peak => q !== undefined && q !== p)
        .map((q) => q.freq);
    };
    const matches = new Map<number, BearingMatch>();
    const harmonics: number[] = [];
    const sidebands: number[] = [];
    for (let k = 1; k <= BEARING_HARMONICS && k * peak.freq <= maxFreq; k++) {
      const h: Peak | undefined = k === 1 ? peak : strongestNear(candidates, k * peak.freq, df, evidenceTolerance(k * peak.freq, df));
      if (!h || (k > 1 && h === peak)) continue;
      if (k > 1) harmonics.push(h.freq);
      const around = sidebandsOf(h);
      sidebands.push(...around);
      matches.set(h.bin, { defect, order: h.freq / f1, harmonic: k, sidebands: around });
    }
    const strength = harmonics.length + sidebands.length > 0 ? "strong" : "weak";
    findings.push({ defect, target, peak, evidence: { peak_hz: peak.freq, harmonics, sidebands: [...new Set(sidebands)].sort((a, b) => a - b), strength }, matches });
  }
  return findings;
}

/** The finding a summary entry shows the evidence of: strong before weak, then the larger peak. */
export function leadingFinding(findings: BearingFinding[]): BearingFinding | undefined {
  const rank = (f: BearingFinding) => (f.evidence.strength === "strong" ? 1 : 0);
  return [...findings].sort((a, b) => rank(b) - rank(a) || b.peak.amplitude - a.peak.amplitude)[0];
}

/** The summary text of one spectrum: its fault lines, or what was seen when nothing matched. */
export function summaryLines(faults: Fault[], peaks: Peak[], f1: number): string[] {
  if (faults.length > 0) return faults.map((f) => f.line);
  if (peaks.length === 0) return ["No fault detected: no significant peaks"];
  const top = peaks[0];
  const at = f1 > 0 ? evidence(top, f1) : `${hz(top.freq)}, amplitude ${amp(top.amplitude)}`;
  return [`No fault detected: largest peak at ${at}`];
}
