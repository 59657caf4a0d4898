/**
 * The FFT operations: a capture's peaks and spectrum, the fault summary of an asset's monitors,
 * and the times a monitor has captures at. Spectra and peaks were computed when the capture
 * arrived (storeWaveform); these read them back in the caller's scope.
 */
import type { Context } from "moleculer";
import type { DataSource } from "typeorm";
import type { RequestMeta } from "../../lib/contract";
import { DomainError } from "../../lib/errors";
import { parseIsoDate } from "../../lib/time";
import { EPOCH_MS, MAX_TEXT } from "../../lib/validation";
import { listMonitorIds, resolveMonitors, visibleAsset } from "../config/contract";
import type { CmActions } from "./cm.types";
import { MSG } from "./messages";
import { ASSET_ID_FIELD, CAPTURE_FIELDS, EXAMPLES, MAX_TIMESTAMPS, MONITOR_ID_FIELD, TIMESTAMPS_FIELDS } from "./openapi";
import { fundamentalFrequency } from "./peaks";
import * as repo from "./repo";
import { decodeAmplitudes } from "./spectrum";
import { diagnoseMonitor, peaksView, rotatingSpeedOf, spectrumView } from "./views";

const text = { type: "string", max: MAX_TEXT } as const;

/** The answer header naming the time (epoch ms) of the capture a peaks or spectrum read answers with. */
export const CAPTURE_TIMESTAMP_HEADER = "X-Capture-Timestamp";

/** The query that names one capture. */
const captureParams = {
  monitor_id: text,
  tag: text,
  axis: { type: "enum", values: ["x", "y", "z"] },
  timestamp: { ...EPOCH_MS, convert: true },
  // A query string's words only: `1`, `yes` or `True` are refused rather than guessed at.
  nearest: { type: "enum", values: ["true", "false"], optional: true },
} as const;

interface CaptureParams {
  monitor_id: string;
  tag: string;
  axis: string;
  timestamp: number;
  nearest?: "true" | "false";
}

const captureErrors: [number, string][] = [
  [400, MSG.invalidMonitorId],
  [400, MSG.invalidInput("axis")],
  [400, MSG.invalidInput("timestamp")],
  [400, MSG.invalidInput("nearest")],
];

/**
 * The capture the query names: at exactly `timestamp`, or with nearest=true the nearest one. Its
 * time goes in the X-Capture-Timestamp header whenever there is one (exact reads too, so a client
 * reads the header the same way either way); none, no header.
 */
async function captureOf(db: DataSource, ctx: Context<CaptureParams, RequestMeta>, monitor_id: string): Promise<repo.SpectrumRow | undefined> {
  const { tag, axis, timestamp, nearest } = ctx.params;
  const s = nearest === "true" ? await repo.spectrumNearest(db, monitor_id, tag, axis, timestamp) : await repo.spectrumAt(db, monitor_id, tag, axis, timestamp);
  if (s) ctx.meta.$responseHeaders = { ...ctx.meta.$responseHeaders, [CAPTURE_TIMESTAMP_HEADER]: String(s.ts) };
  return s;
}

interface TimestampsParams {
  monitor_id: string;
  from?: string;
  to?: string;
  limit?: number;
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

export const fftActions: CmActions = {
  "fft.peaks": {
    http: {
      op: 67,
      routes: ["GET /_cm/fft/_peaks"],
      group: "cm",
      summary: "FFT peaks of a capture",
      description:
        "The peaks of the capture's spectrum, strongest first, each with the running speed it is read against. " +
        "An empty array when the monitor has no capture at that time (with nearest=true: none of that tag and axis at all). " +
        "The capture's time is in the X-Capture-Timestamp header (epoch ms) whenever one is answered.",
      fields: CAPTURE_FIELDS,
      answer: { schema: "$FftPeak[]", example: EXAMPLES.peaks },
      errors: [...captureErrors, [400, MSG.invalidAssetId]],
    },
    params: captureParams,
    async handler(ctx: Context<CaptureParams, RequestMeta>) {
      const monitor = await this.monitorOrFail(ctx, ctx.params.monitor_id);
      if (monitor.asset_id && !monitor.asset_attributes) throw new DomainError(400, MSG.invalidAssetId);
      const s = await captureOf(this.db, ctx, monitor.monitor_id);
      if (!s) return [];
      return peaksView(s.peaks, fundamentalFrequency(s.peaks, rotatingSpeedOf(monitor)));
    },
  },

  "fft.summary": {
    http: {
      op: 68,
      routes: ["GET /_cm/fft/_summary"],
      group: "cm",
      summary: "Fault summary of an asset",
      description:
        "Per monitor of the asset with captures: the faults (unbalance, misalignment, looseness, bearing defects) " +
        "that the latest spectrum of each tag and axis shows.",
      fields: { asset_id: ASSET_ID_FIELD },
      answer: { schema: "$FaultSummary[]", example: EXAMPLES.summary },
      errors: [[400, MSG.invalidAssetId], [400, MSG.excessInputs]],
    },
    params: { asset_id: text, $$messages: { unknown: MSG.excessInputs } },
    async handler(ctx: Context<{ asset_id: string }, RequestMeta>) {
      const asset = await visibleAsset(ctx, ctx.meta.user, ctx.params.asset_id);
      if (!asset) throw new DomainError(400, MSG.invalidAssetId);
      const monitors = await resolveMonitors(ctx, await listMonitorIds(ctx, { asset_id: asset.asset_id }));
      const spectra = await repo.latestSpectra(this.db, [...monitors.keys()]);
      return [...monitors.values()]
        .map((m) => diagnoseMonitor(m, spectra.filter((s) => s.monitor_id === m.monitor_id)))
        .filter((d) => d !== undefined)
        .map(({ monitor_name, summary, Timestamp }) => ({ monitor_name, summary, Timestamp }));
    },
  },

  "fft.spectrum": {
    http: {
      op: 69,
      routes: ["GET /_cm/fft/_spectrum"],
      group: "cm",
      summary: "FFT spectrum of a capture",
      description:
        "Single-sided amplitude spectrum of the capture (Hann window), one point per bin from 0 Hz to half the sample rate, " +
        "its peaks flagged. An empty array when the monitor has no capture at that time (with nearest=true: none of that tag and axis at all). " +
        "The capture's time is in the X-Capture-Timestamp header (epoch ms) whenever one is answered.",
      fields: CAPTURE_FIELDS,
      answer: { schema: "$SpectrumPoint[]", example: EXAMPLES.spectrum },
      errors: captureErrors,
    },
    params: captureParams,
    async handler(ctx: Context<CaptureParams, RequestMeta>) {
      const monitor = await this.monitorOrFail(ctx, ctx.params.monitor_id);
      const s = await captureOf(this.db, ctx, monitor.monitor_id);
      if (!s) return [];
      return spectrumView(decodeAmplitudes(s.amplitudes), s.df, s.peaks);
    },
  },

  "fft.timestamps": {
    http: {
      op: 70,
      routes: ["GET /_cm/fft/_timestamps"],
      group: "cm",
      summary: "Timestamps of a monitor's spectra",
      description:
        "The times (epoch ms, ascending) at which the monitor has a capture on any tag or axis; " +
        "within from..to when given, and only the newest `limit` of them when given.",
      fields: { monitor_id: MONITOR_ID_FIELD, ...TIMESTAMPS_FIELDS },
      answer: { schema: "integer[]", example: EXAMPLES.timestamps },
      errors: [[400, MSG.invalidMonitorId], [400, MSG.invalidDateFormat], [400, MSG.invalidInput("from")], [400, MSG.invalidInput("limit")]],
    },
    params: {
      monitor_id: text,
      from: { ...text, optional: true },
      to: { ...text, optional: true },
      limit: { type: "number", integer: true, min: 1, max: MAX_TIMESTAMPS, convert: true, optional: true },
    },
    async handler(ctx: Context<TimestampsParams, RequestMeta>) {
      const range = captureRangeOf(ctx.params);
      const monitor = await this.monitorOrFail(ctx, ctx.params.monitor_id);
      return repo.spectrumTimestamps(this.db, monitor.monitor_id, { ...range, limit: ctx.params.limit });
    },
  },
};
