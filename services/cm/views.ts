/**
 * The shapes of the /_cm operations, built from cm's rows and config's names. Pure.
 */
import { isVelocityTag, ISO_20816_3, machineClassOf, worstZone, zoneBoundaries, zoneOf, type Zone, type ZoneBoundaries } from "../../lib/iso20816";
import type { MonitorTag, ResolvedMonitor } from "../config/contract";
import { bearingFault, bearingFindings, bearingGeometryOf, diagnose, leadingFinding, summaryLines, type BearingEvidence, type BearingFinding, type BearingMatch, type Fault } from "./faults";
import { fundamentalFrequency, type Peak } from "./peaks";
import type { EventRow } from "./events.repo";
import type { LatestValue } from "./latest-values.repo";
import type { SpectrumRow } from "./spectra.repo";
import { colorOf, statusOf, type AssetStatus, type Color } from "./status";

/** Frequencies to the µHz and amplitudes to float32's 7 significant digits: what the data holds, without binary noise. */
const freqOf = (hz: number): number => Math.round(hz * 1e6) / 1e6;
const valueOf = (v: number): number => Number(v.toPrecision(7));

export function spectrumView(amplitudes: ArrayLike<number>, df: number, peaks: Peak[]) {
  const flagged = new Set(peaks.map((p) => p.bin));
  const out = new Array<{ freq: number; tag_value: number; peak: boolean }>(amplitudes.length);
  for (let k = 0; k < amplitudes.length; k++) {
    out[k] = { freq: freqOf(k * df), tag_value: valueOf(amplitudes[k]), peak: flagged.has(k) };
  }
  return out;
}

/** Op 67's items; a peak that matches a bearing defect says which (`bearing`), the others are as before. */
export function peaksView(peaks: Peak[], fundamental: number, matches: ReadonlyMap<number, BearingMatch> = new Map()) {
  return peaks.map((p) => {
    const m = matches.get(p.bin);
    const item = { freq: freqOf(p.freq), tag_value: valueOf(p.amplitude), fundamental_freq: freqOf(fundamental) };
    return m ? { ...item, bearing: { defect: m.defect, order: orderOf(m.order), harmonic: m.harmonic, sidebands: m.sidebands.map(freqOf) } } : item;
  });
}

/** Orders to 4 decimals: a 0.01% reading of a ratio, more than any speed is known to. */
const orderOf = (order: number): number => Math.round(order * 1e4) / 1e4;

/** Every peak that makes one of the bearing findings, by bin (the first defect a peak matches). */
export function bearingMatches(
  peaks: Peak[],
  fundamental: number,
  df: number,
  maxFreq: number,
  specs: unknown,
  bearingTolerance?: number,
): Map<number, BearingMatch> {
  const out = new Map<number, BearingMatch>();
  for (const f of bearingFindings({ peaks, fundamental, df, maxFreq, bearing: bearingGeometryOf(specs), bearingTolerance })) {
    for (const [bin, m] of f.matches) if (!out.has(bin)) out.set(bin, m);
  }
  return out;
}

const isStrong = (f: BearingFinding): boolean => f.evidence.strength === "strong";

const evidenceView = (e: BearingEvidence) => ({
  peak_hz: freqOf(e.peak_hz),
  harmonics: e.harmonics.map(freqOf),
  sidebands: e.sidebands.map(freqOf),
  strength: e.strength,
});

/** The asset's `rotating_speed` (RPM) when it is a positive number (or numeric text). */
export function rotatingSpeedOf(monitor: Pick<ResolvedMonitor, "asset_attributes">): number | undefined {
  const raw = monitor.asset_attributes?.rotating_speed;
  const n = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : raw;
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : undefined;
}

export interface MonitorDiagnosis {
  monitor_name: string;
  summary: string;
  Timestamp: string;
  faults: Fault[];
  /** The evidence of the leading bearing finding of the latest spectra (strong first); null without one. */
  evidence: ReturnType<typeof evidenceView> | null;
}

/** Fault summary of a monitor from the latest spectrum of each of its (tag, axis). */
export function diagnoseMonitor(
  monitor: ResolvedMonitor,
  spectra: Omit<SpectrumRow, "amplitudes" | "waveform">[],
  bearingTolerance?: number,
): MonitorDiagnosis | undefined {
  if (spectra.length === 0) return undefined;
  const rpm = rotatingSpeedOf(monitor);
  const bearing = bearingGeometryOf(monitor.specs);
  const lines: string[] = [];
  const faults: Fault[] = [];
  const plain: BearingFinding[] = [];
  const enveloped: BearingFinding[] = [];
  const sorted = [...spectra].sort((a, b) => a.tag.localeCompare(b.tag) || a.axis.localeCompare(b.axis));
  for (const s of sorted) {
    const input = { peaks: s.peaks, fundamental: fundamentalFrequency(s.peaks, rpm), df: s.df, maxFreq: s.sample_rate_hz / 2, bearing, bearingTolerance };
    const found = diagnose(input);
    const inPlain = bearingFindings(input);
    plain.push(...inPlain);
    // A defect the envelope spectrum shows strong and the plain one does not: named, " (envelope)".
    const inEnvelope = s.envelope ? bearingFindings({ ...input, peaks: s.envelope.peaks, df: s.envelope.df }) : [];
    enveloped.push(...inEnvelope);
    const strongInPlain = new Set(inPlain.filter(isStrong).map((f) => f.defect));
    for (const f of inEnvelope) if (isStrong(f) && !strongInPlain.has(f.defect)) found.push(bearingFault(f, input.fundamental, " (envelope)"));
    faults.push(...found);
    for (const line of summaryLines(found, s.peaks, input.fundamental)) lines.push(sorted.length > 1 ? `[${s.tag} ${s.axis}] ${line}` : line);
  }
  const latest = Math.max(...spectra.map((s) => s.ts));
  // The plain spectrum's strong finding, else the envelope's, else the weak one of either.
  const lead = [plain, enveloped, [...plain, ...enveloped]].map(leadingFinding).find((f, i) => f && (i === 2 || isStrong(f)));
  return {
    monitor_name: monitor.monitor_name,
    summary: lines.join("\n"),
    Timestamp: new Date(latest).toISOString(),
    faults,
    evidence: lead ? evidenceView(lead.evidence) : null,
  };
}

export interface TagReading {
  tag: MonitorTag;
  value: LatestValue | undefined;
  color: Color;
}

export function tagReadings(monitor: ResolvedMonitor, latest: LatestValue[], window?: { from?: number; to?: number }): TagReading[] {
  const byTag = new Map(latest.filter((v) => v.monitor_id === monitor.monitor_id).map((v) => [v.tag_id, v]));
  return (monitor.tags ?? []).map((tag) => {
    let value = byTag.get(tag.tag_id);
    if (value && window && ((window.from !== undefined && value.ts < window.from) || (window.to !== undefined && value.ts > window.to))) {
      value = undefined;
    }
    return { tag, value, color: colorOf(value?.value, tag.thresholds) };
  });
}

const latestTs = (readings: TagReading[]): number | null => {
  const ts = readings.map((r) => r.value?.ts).filter((t): t is number => t !== undefined);
  return ts.length ? Math.max(...ts) : null;
};

/** Op 71: `{timestamp, <tag_name>: value}`. */
export function monitorValuesView(monitor: ResolvedMonitor, latest: LatestValue[]) {
  const readings = tagReadings(monitor, latest);
  const out: Record<string, number | null> = { timestamp: latestTs(readings) };
  for (const r of readings) out[r.tag.tag_name] = r.value ? r.value.value : null;
  return out;
}

/** Op 72 item: `{monitor_id, monitor_name, timestamp, <tag_name>: {value, color}}`. */
export function monitorColorsView(monitor: ResolvedMonitor, latest: LatestValue[], window?: { from?: number; to?: number }) {
  const readings = tagReadings(monitor, latest, window);
  const out: Record<string, unknown> = {
    monitor_id: monitor.monitor_id,
    monitor_name: monitor.monitor_name,
    timestamp: latestTs(readings),
  };
  for (const r of readings) out[r.tag.tag_name] = { value: r.value ? r.value.value : null, color: r.color };
  return out;
}

export interface AssetEvaluation {
  status: AssetStatus;
  /** The reading that sets the status, for the event's start and label. */
  cause?: { monitor_name: string; tag_name: string; color: Color; ts: number };
}

const RANK: Record<Color, number> = { red: 3, orange: 2, yellow: 1, green: 0, grey: 0 };

/** Status of an asset from its monitors' latest values against their tags' thresholds. */
export function evaluateAsset(monitors: ResolvedMonitor[], latest: LatestValue[]): AssetEvaluation {
  const all = monitors.flatMap((m) => tagReadings(m, latest).map((r) => ({ m, r })));
  const status = statusOf(all.map(({ r }) => r.color));
  if (status === "normal") return { status };
  const worst = all
    .filter(({ r }) => r.value)
    .sort((a, b) => RANK[b.r.color] - RANK[a.r.color] || (b.r.value?.ts ?? 0) - (a.r.value?.ts ?? 0))[0];
  return {
    status,
    cause: { monitor_name: worst.m.monitor_name, tag_name: worst.r.tag.tag_name, color: worst.r.color, ts: worst.r.value?.ts ?? 0 },
  };
}

export function eventLabel(cause: NonNullable<AssetEvaluation["cause"]>): string {
  const limit = cause.color === "red" ? "warning" : "caution";
  return `${cause.monitor_name} ${cause.tag_name} above ${limit} threshold`;
}

export interface VelocityZone {
  monitor_id: string;
  /** The tag's name, as op 71 keys its values. */
  tag: string;
  value: number | null;
  zone: Zone | null;
  /** Epoch ms of the reading; null without one. */
  timestamp: number | null;
}

/** Each velocity tag of the monitors with its latest value and zone (null without a reading). */
export function velocityZones(monitors: ResolvedMonitor[], latest: LatestValue[], bounds: ZoneBoundaries): VelocityZone[] {
  return monitors.flatMap((m) =>
    tagReadings(m, latest)
      .filter((r) => isVelocityTag(m.monitor_type, r.tag.tag_unit))
      .map((r) => ({
        monitor_id: m.monitor_id,
        tag: r.tag.tag_name,
        value: r.value ? r.value.value : null,
        zone: r.value ? zoneOf(r.value.value, bounds) : null,
        timestamp: r.value ? r.value.ts : null,
      })),
  );
}

/** The zone of each velocity tag of an asset's monitors and the worst of them. */
export function severityView(attributes: Record<string, unknown>, monitors: ResolvedMonitor[], latest: LatestValue[]) {
  const machine = machineClassOf(attributes);
  const boundaries = zoneBoundaries(machine);
  const tags = velocityZones(monitors, latest, boundaries);
  return { standard: ISO_20816_3, ...machine, boundaries, tags, zone: worstZone(tags.map((t) => t.zone)) };
}

/** Op 73: event fields are empty strings, and asset_status too, when the asset has no open event. */
export function assetView(
  asset: { asset_id: string; asset_name: string },
  status: AssetStatus,
  event: EventRow | undefined,
  faults: string[],
  zone: Zone | null,
) {
  return {
    asset_id: asset.asset_id,
    asset_name: asset.asset_name,
    asset_status: event ? status : "",
    asset_faults: faults,
    event_id: event?.event_id ?? "",
    event_start: event ? event.event_start : "",
    event_severity: event ? event.event_severity : "",
    event_status: event?.event_status ?? "",
    event_label: event?.event_label ?? "",
    event_assignee: event?.event_assignee ?? "",
    zone,
  };
}
