import { amplitudeSpectrum } from "../../../services/cm/spectrum";
import { findPeaks, type Peak } from "../../../services/cm/peaks";
import { bearingFindings, bearingFrequencies, bearingGeometryOf, diagnose, summaryLines } from "../../../services/cm/faults";

const FS = 2000;
const N = 8192;
const F1 = 25; // 1500 RPM

function spectrumOf(parts: { f: number; a: number }[]) {
  const samples = Array.from({ length: N }, (_, i) =>
    parts.reduce((s, p) => s + p.a * Math.sin(2 * Math.PI * p.f * (i / FS)), 0),
  );
  const { df, amplitudes } = amplitudeSpectrum(samples, FS);
  const peaks = findPeaks(amplitudes, df);
  return { df, peaks, maxFreq: FS / 2 };
}

const names = (faults: { fault: string }[]) => faults.map((f) => f.fault);

describe("fault rules", () => {
  it("calls a dominant 1x unbalance and names frequency, order and amplitude", () => {
    const s = spectrumOf([{ f: F1, a: 2 }, { f: 2 * F1, a: 0.3 }]);
    const faults = diagnose({ ...s, fundamental: F1 });
    expect(names(faults)).toEqual(["Unbalance"]);
    expect(faults[0].line).toBe("Unbalance: 1x running speed dominant at 25.0 Hz (order 1.00), amplitude 2.000");
  });

  it("calls a strong 2x misalignment", () => {
    const s = spectrumOf([{ f: F1, a: 1 }, { f: 2 * F1, a: 0.8 }]);
    const faults = diagnose({ ...s, fundamental: F1 });
    expect(names(faults)).toEqual(["Misalignment"]);
    expect(faults[0].line).toBe("Misalignment: strong 2x at 50.0 Hz (order 2.00), amplitude 0.800 (80% of 1x)");
  });

  it("2x under half of 1x is not misalignment; just over half it is", () => {
    const under = spectrumOf([{ f: F1, a: 1 }, { f: 2 * F1, a: 0.49 }]);
    expect(names(diagnose({ ...under, fundamental: F1 }))).toEqual(["Unbalance"]);
    const at = spectrumOf([{ f: F1, a: 1 }, { f: 2 * F1, a: 0.51 }]);
    expect(names(diagnose({ ...at, fundamental: F1 }))).toEqual(["Misalignment"]);
  });

  it("calls many harmonics looseness", () => {
    const parts = [1, 2, 3, 4, 5, 6].map((n) => ({ f: n * F1, a: 1 / n }));
    const faults = diagnose({ ...spectrumOf(parts), fundamental: F1 });
    expect(names(faults)).toContain("Looseness");
    expect(faults.find((f) => f.fault === "Looseness")?.line).toBe(
      "Looseness: 6 harmonics of running speed (orders 1, 2, 3, 4, 5, 6), up to 150.0 Hz, amplitude 0.167",
    );
    const two = diagnose({ ...spectrumOf([1, 2, 3, 4].map((n) => ({ f: n * F1, a: 1 / n }))), fundamental: F1 });
    expect(names(two)).not.toContain("Looseness");
  });

  it("finds a bearing outer race defect at BPFO from the specs' geometry", () => {
    const geometry = bearingGeometryOf({ bearing: { rolling_elements: 9, ball_diameter: 7.94, pitch_diameter: 39.04, contact_angle: 0 } });
    expect(geometry).toBeDefined();
    const f = bearingFrequencies(geometry!, F1);
    expect(f.BPFO).toBeCloseTo((9 * 25 / 2) * (1 - 7.94 / 39.04), 9);
    expect(f.BPFI).toBeCloseTo((9 * 25 / 2) * (1 + 7.94 / 39.04), 9);
    expect(f.FTF).toBeCloseTo((25 / 2) * (1 - 7.94 / 39.04), 9);
    expect(f.BSF).toBeCloseTo((39.04 * 25) / (2 * 7.94) * (1 - (7.94 / 39.04) ** 2), 9);
    const s = spectrumOf([{ f: F1, a: 1 }, { f: f.BPFO, a: 0.3 }, { f: 2 * f.BPFO, a: 0.1 }]);
    const faults = diagnose({ ...s, fundamental: F1, bearing: geometry });
    expect(names(faults)).toEqual(["Unbalance", "Bearing outer race defect (BPFO)"]);
    expect(faults[1].line).toMatch(/^Bearing outer race defect \(BPFO\) at 89\.6 Hz: peak at 89\.\d Hz \(order 3\.5\d\), amplitude 0\.(29|30)\d$/);
    // Without the geometry, no bearing rule can fire.
    expect(names(diagnose({ ...s, fundamental: F1 }))).toEqual(["Unbalance"]);
  });

  it("calls a lone BPFO peak weak and no fault; its harmonic or BPFI's ±1x sidebands make it strong", () => {
    const geometry = bearingGeometryOf({ bearing: { rolling_elements: 9, ball_diameter: 7.94, pitch_diameter: 39.04 } })!;
    const f = bearingFrequencies(geometry, F1);
    const lone = spectrumOf([{ f: F1, a: 1 }, { f: f.BPFO, a: 0.3 }]);
    expect(names(diagnose({ ...lone, fundamental: F1, bearing: geometry }))).toEqual(["Unbalance"]);
    const [weak] = bearingFindings({ ...lone, fundamental: F1, bearing: geometry });
    expect(weak).toMatchObject({ defect: "BPFO", evidence: { harmonics: [], sidebands: [], strength: "weak" } });
    expect(weak.evidence.peak_hz).toBeCloseTo(f.BPFO, 0);

    const inner = spectrumOf([{ f: F1, a: 1 }, { f: f.BPFI, a: 0.3 }, { f: f.BPFI - F1, a: 0.1 }, { f: f.BPFI + F1, a: 0.1 }]);
    const faults = diagnose({ ...inner, fundamental: F1, bearing: geometry });
    expect(names(faults)).toEqual(["Unbalance", "Bearing inner race defect (BPFI)"]);
    const strong = bearingFindings({ ...inner, fundamental: F1, bearing: geometry }).find((x) => x.defect === "BPFI")!;
    expect(strong.evidence.strength).toBe("strong");
    expect(strong.evidence.sidebands.map((x) => Math.round(x * 10) / 10)).toEqual([Math.round((f.BPFI - F1) * 10) / 10, Math.round((f.BPFI + F1) * 10) / 10]);
    expect([...strong.matches.values()]).toEqual([{ defect: "BPFI", order: expect.closeTo(f.BPFI / F1, 2), harmonic: 1, sidebands: strong.evidence.sidebands }]);
  });

  it("matches within 3% of a defect frequency, or the share BEARING_MATCH_TOLERANCE gives", () => {
    const geometry = bearingGeometryOf({ bearing: { rolling_elements: 9, ball_diameter: 7.94, pitch_diameter: 39.04 } })!;
    const f = bearingFrequencies(geometry, F1);
    // 4% above BPFO (the speed under load was not the nameplate's), with its second harmonic.
    const off = 1.04 * f.BPFO;
    const s = spectrumOf([{ f: F1, a: 1 }, { f: off, a: 0.3 }, { f: 2 * off, a: 0.1 }]);
    expect(names(diagnose({ ...s, fundamental: F1, bearing: geometry }))).toEqual(["Unbalance"]);
    expect(names(diagnose({ ...s, fundamental: F1, bearing: geometry, bearingTolerance: 0.05 }))).toEqual(["Unbalance", "Bearing outer race defect (BPFO)"]);
    expect(names(diagnose({ ...s, fundamental: F1, bearing: geometry, bearingTolerance: 0.03 }))).toEqual(["Unbalance"]);
  });

  it("reads flat geometry keys and refuses an impossible one", () => {
    expect(bearingGeometryOf({ rolling_elements: "8", ball_diameter: 10, pitch_diameter: 50 })).toEqual({
      rolling_elements: 8, ball_diameter: 10, pitch_diameter: 50, contact_angle: 0,
    });
    expect(bearingGeometryOf({ rolling_elements: 8, ball_diameter: 60, pitch_diameter: 50 })).toBeUndefined();
    expect(bearingGeometryOf({ speed_type: "fixed" })).toBeUndefined();
    expect(bearingGeometryOf(null)).toBeUndefined();
  });

  it("says what it saw when no rule matches, and nothing without a running speed", () => {
    const peaks: Peak[] = [{ bin: 300, freq: 300, amplitude: 0.2 }];
    expect(diagnose({ peaks, fundamental: 0, df: 1, maxFreq: 500 })).toEqual([]);
    expect(summaryLines([], peaks, 25)).toEqual(["No fault detected: largest peak at 300.0 Hz (order 12.00), amplitude 0.200"]);
    expect(summaryLines([], peaks, 0)).toEqual(["No fault detected: largest peak at 300.0 Hz, amplitude 0.200"]);
    expect(summaryLines([], [], 25)).toEqual(["No fault detected: no significant peaks"]);
  });
});
