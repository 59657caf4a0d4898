/**
 * The spectra: each capture's spectrum and peaks, computed once when it arrives, read back by
 * the FFT operations in the caller's scope, and dropped by the daily retention run.
 */
import { DomainError } from "../../lib/errors";
import { parseIsoDate } from "../../lib/time";
import { EPOCH_MS } from "../../lib/validation";
import type { WaveformMessage } from "../pipelines/contract";
import { MSG } from "./messages";
import { monitorOrFail } from "./monitors";
import { bandText, defaultBand, envelopeSpectrum, parseBand, type Band } from "./envelope";
import { bearingGeometryOf } from "./faults";
import { findPeaks, fundamentalFrequency, localNoiseFloor } from "./peaks";
import type { CmPort } from "./port";
import { bearingTolerance } from "./settings";
import * as spectra from "./spectra.repo";
import { amplitudeSpectrum, decodeAmplitudes, encodeAmplitudes } from "./spectrum";
import * as latestValues from "./latest-values.repo";
import { bearingMatches, diagnoseMonitor, peaksView, rotatingSpeedOf, severityView, spectrumView } from "./views";

/** The answer header naming the time (epoch ms) of the capture a peaks or spectrum read answers with. */
export const CAPTURE_TIMESTAMP_HEADER = "X-Capture-Timestamp";
/** The answer header naming the band (`<low>-<high>` Hz) of an envelope read. */
export const ENVELOPE_BAND_HEADER = "X-Envelope-Band";

/** What cm keeps of a capture of the `waveforms` stream (and what `ingest.waveform` takes). */
export type Waveform = Pick<WaveformMessage, "monitor_id" | "tag" | "axis" | "ts" | "sample_rate_hz" | "samples">;

/** The query that names one capture. */
export interface CaptureParams {
  monitor_id: string;
  tag: string;
  axis: string;
  timestamp: number;
  nearest?: "true" | "false";
}

export interface TimestampsParams {
  monitor_id: string;
  from?: string;
  to?: string;
  limit?: number;
}

/**
 * A capture of the `waveforms` stream (or `ingest.waveform`): its spectrum and peaks, its samples,
 * and, when its monitor has a bearing geometry, the peaks of its envelope spectrum in the default
 * band (what the fault summary matches bearing frequencies in; without a geometry nothing would
 * read them), stored once.
 */
export async function storeWaveform(port: CmPort, w: Waveform): Promise<boolean> {
  const { df, amplitudes } = amplitudeSpectrum(w.samples, w.sample_rate_hz);
  const peaks = findPeaks(amplitudes, df);
  const monitor = (await port.config.resolveMonitors([w.monitor_id])).get(w.monitor_id);
  let envelope: spectra.StoredEnvelope | null = null;
  if (monitor && bearingGeometryOf(monitor.specs)) {
    const band = defaultBand(amplitudes, df, fundamentalFrequency(peaks, rotatingSpeedOf(monitor)));
    const env = envelopePeaks(w.samples, w.sample_rate_hz, band);
    envelope = { band, df: env.df, peaks: env.peaks };
  }
  return spectra.insertSpectrum(port.db, {
    monitor_id: w.monitor_id,
    tag: w.tag,
    axis: w.axis,
    ts: w.ts,
    sample_rate_hz: w.sample_rate_hz,
    samples: w.samples.length,
    df,
    amplitudes: encodeAmplitudes(amplitudes),
    peaks,
    waveform: encodeAmplitudes(w.samples),
    envelope,
  });
}

/** The envelope spectrum of a band and its peaks, against a floor that follows its sloping noise. */
function envelopePeaks(samples: ArrayLike<number>, sampleRateHz: number, band: Band) {
  const { df, amplitudes } = envelopeSpectrum(samples, sampleRateHz, band);
  return { df, amplitudes, peaks: findPeaks(amplitudes, df, localNoiseFloor(amplitudes)) };
}

/** The envelope query of a peaks or spectrum read. */
export interface EnvelopeParams {
  envelope?: "true" | "false";
  band?: string;
}

/**
 * The envelope spectrum a read asks for (envelope=true): of the band given, else of the default
 * band; the band used goes in X-Envelope-Band. Undefined for a capture stored without its samples.
 */
function envelopeRead(port: CmPort, s: spectra.SpectrumRow, f1: number, band: Band | undefined) {
  if (!s.waveform) return undefined;
  const used = band ?? defaultBand(decodeAmplitudes(s.amplitudes), s.df, f1);
  port.setHeader(ENVELOPE_BAND_HEADER, bandText(used));
  return envelopePeaks(decodeAmplitudes(s.waveform), s.sample_rate_hz, used);
}

const badBand = () => new DomainError(400, MSG.invalidInput("band"), "band");

/**
 * The band asked for, refused before any capture is read when it cannot be one: without
 * envelope=true (it means nothing there), or not `<low>-<high>` with low < high.
 */
function bandAsked(params: EnvelopeParams): Band | undefined {
  if (params.band === undefined) return undefined;
  const band = params.envelope === "true" ? parseBand(params.band, Infinity) : undefined;
  if (!band) throw badBand();
  return band;
}

/** The band asked for, up to the capture's Nyquist frequency. */
function bandWithin(band: Band | undefined, nyquist: number): Band | undefined {
  if (band && band.high > nyquist) throw badBand();
  return band;
}

/**
 * The capture the query names: at exactly `timestamp`, or with nearest=true the nearest one. Its
 * time goes in the X-Capture-Timestamp header whenever there is one (exact reads too, so a client
 * reads the header the same way either way); none, no header.
 */
async function captureOf(port: CmPort, params: CaptureParams, monitor_id: string, withWaveform = false): Promise<spectra.SpectrumRow | undefined> {
  const { tag, axis, timestamp, nearest } = params;
  const s =
    nearest === "true"
      ? await spectra.spectrumNearest(port.db, monitor_id, tag, axis, timestamp, withWaveform)
      : await spectra.spectrumAt(port.db, monitor_id, tag, axis, timestamp, withWaveform);
  if (s) port.setHeader(CAPTURE_TIMESTAMP_HEADER, String(s.ts));
  return s;
}

/** Op 67: the capture's peaks (with envelope=true its envelope spectrum's), each with the running speed it is read against. */
export async function capturePeaks(port: CmPort, params: CaptureParams & EnvelopeParams) {
  const monitor = await monitorOrFail(port, params.monitor_id);
  if (monitor.asset_id && !monitor.asset_attributes) throw new DomainError(400, MSG.invalidAssetId);
  const band = bandAsked(params);
  const s = await captureOf(port, params, monitor.monitor_id, params.envelope === "true");
  if (!s) return [];
  const f1 = fundamentalFrequency(s.peaks, rotatingSpeedOf(monitor));
  const nyquist = s.sample_rate_hz / 2;
  const share = bearingTolerance();
  if (params.envelope !== "true") return peaksView(s.peaks, f1, bearingMatches(s.peaks, f1, s.df, nyquist, monitor.specs, share));
  const env = envelopeRead(port, s, f1, bandWithin(band, nyquist));
  return env ? peaksView(env.peaks, f1, bearingMatches(env.peaks, f1, env.df, nyquist, monitor.specs, share)) : [];
}

/** Op 68: per monitor of the asset with captures, the faults its latest spectra show. */
export async function faultSummary(port: CmPort, asset_id: string) {
  const asset = await port.config.visibleAsset(asset_id);
  if (!asset) throw new DomainError(400, MSG.invalidAssetId);
  const monitors = await port.config.resolveMonitors(await port.config.monitorIds({ asset_id: asset.asset_id }));
  const ids = [...monitors.keys()];
  const [latest, values] = await Promise.all([spectra.latestSpectra(port.db, ids), latestValues.latestOfMonitors(port.db, ids)]);
  return [...monitors.values()]
    .map((m) => {
      const d = diagnoseMonitor(m, latest.filter((s) => s.monitor_id === m.monitor_id), bearingTolerance());
      const zone = severityView({ ...asset.attributes }, [m], values).zone;
      return d && { monitor_name: d.monitor_name, summary: d.summary, Timestamp: d.Timestamp, zone, evidence: d.evidence };
    })
    .filter((d) => d !== undefined);
}

/** Op 69: the capture's spectrum (with envelope=true its envelope spectrum), one point a bin, its peaks flagged. */
export async function captureSpectrum(port: CmPort, params: CaptureParams & EnvelopeParams) {
  const monitor = await monitorOrFail(port, params.monitor_id);
  const band = bandAsked(params);
  const s = await captureOf(port, params, monitor.monitor_id, params.envelope === "true");
  if (!s) return [];
  if (params.envelope !== "true") return spectrumView(decodeAmplitudes(s.amplitudes), s.df, s.peaks);
  const env = envelopeRead(port, s, fundamentalFrequency(s.peaks, rotatingSpeedOf(monitor)), bandWithin(band, s.sample_rate_hz / 2));
  return env ? spectrumView(env.amplitudes, env.df, env.peaks) : [];
}

/**
 * A `from`/`to` of the timestamps read: ISO 8601 as every from/to of the API, or epoch ms in
 * digits, the form this operation answers in and `timestamp` takes (a client continues from the
 * last time it was given). Undefined when it is neither.
 */
export function captureTimeOf(text: string): number | undefined {
  if (/^\d+$/.test(text)) {
    const ms = Number(text);
    return ms <= EPOCH_MS.max ? ms : undefined;
  }
  return parseIsoDate(text);
}

/** `from` and `to` in epoch ms, each where given; a reversed range is a wrong `from`. */
function captureRangeOf(params: Pick<TimestampsParams, "from" | "to">): { from?: number; to?: number } {
  const range: { from?: number; to?: number } = {};
  for (const key of ["from", "to"] as const) {
    const raw = params[key];
    if (raw === undefined) continue;
    const ms = captureTimeOf(raw);
    if (ms === undefined) throw new DomainError(400, MSG.invalidDateFormat, key);
    range[key] = ms;
  }
  if (range.from !== undefined && range.to !== undefined && range.from > range.to) throw new DomainError(400, MSG.invalidInput("from"), "from");
  return range;
}

/** Op 70: the times the monitor has captures at, ascending. */
export async function captureTimestamps(port: CmPort, params: TimestampsParams): Promise<number[]> {
  const range = captureRangeOf(params);
  const monitor = await monitorOrFail(port, params.monitor_id);
  return spectra.spectrumTimestamps(port.db, monitor.monitor_id, { ...range, limit: params.limit });
}

/**
 * The daily retention run: spectra older than their site's retention go. Latest values stay (they
 * are the latest), and so do events (an open one is current, closed ones are a few rows an asset).
 */
export async function deleteOldSpectra(port: CmPort, now: number): Promise<{ deleted: number }> {
  let deleted = 0;
  for (const cutoff of await port.config.retentionCutoffs(await spectra.spectraMonitors(port.db), now)) {
    deleted += await spectra.deleteSpectraBefore(port.db, cutoff.monitor_ids, cutoff.before);
  }
  if (deleted) port.logger.info(`retention: deleted ${deleted} spectra`);
  return { deleted };
}
