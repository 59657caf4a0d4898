/**
 * Fault rules read from a spectrum's peaks, relative to the running speed (orders of 1x), the
 * classic ones of vibration analysis:
 *   - unbalance: 1x is the strongest peak and 2x is less than half of it;
 *   - misalignment: 2x at least half of 1x;
 *   - looseness: many harmonics, at least LOOSENESS_MIN_HIGH harmonics of order 3..10;
 *   - bearing defects: a peak at BPFO, BPFI, BSF or FTF computed from the bearing geometry in
 *     the monitor's `specs`, that is not itself a harmonic of the running speed.
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

export interface Fault {
  /** Short name, as listed in a CM asset's `asset_faults`. */
  fault: string;
  /** The summary line with its evidence. */
  line: string;
}

export const LOOSENESS_MIN_HIGH = 3;
const MAX_ORDER = 10;

const BEARING_NAMES: Record<keyof BearingFrequencies, string> = {
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

/** Defect frequencies in Hz at running speed `f` Hz. */
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
export function tolerance(freq: number, df: number): number {
  return Math.max(1.5 * df, 0.03 * freq);
}

function strongestNear(peaks: Peak[], freq: number, df: number): Peak | undefined {
  const tol = tolerance(freq, df);
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
}

export function diagnose({ peaks, fundamental: f1, df, maxFreq, bearing }: DiagnoseInput): Fault[] {
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
    const freqs = bearingFrequencies(bearing, f1);
    for (const key of Object.keys(BEARING_NAMES) as (keyof BearingFrequencies)[]) {
      const target = freqs[key];
      if (target > maxFreq) continue;
      const p = strongestNear(
        peaks.filter((q) => {
          const n = Math.round(q.freq / f1);
          return n < 1 || Math.abs(q.freq - n * f1) > tolerance(n * f1, df);
        }),
        target,
        df,
      );
      if (!p) continue;
      faults.push({
        fault: BEARING_NAMES[key],
        line: `${BEARING_NAMES[key]} at ${hz(target)}: peak at ${evidence(p, f1)}`,
      });
    }
  }
  return faults;
}

/** The summary text of one spectrum: its fault lines, or what was seen when nothing matched. */
export function summaryLines(faults: Fault[], peaks: Peak[], f1: number): string[] {
  if (faults.length > 0) return faults.map((f) => f.line);
  if (peaks.length === 0) return ["No fault detected: no significant peaks"];
  const top = peaks[0];
  const at = f1 > 0 ? evidence(top, f1) : `${hz(top.freq)}, amplitude ${amp(top.amplitude)}`;
  return [`No fault detected: largest peak at ${at}`];
}
