/**
 * The FFT operations: a capture's peaks and spectrum, the fault summary of an asset's monitors,
 * and the times a monitor has captures at. Spectra and peaks were computed when the capture
 * arrived (storeWaveform); these read them back in the caller's scope.
 */
import type { Context } from "moleculer";
import type { RequestMeta } from "../../lib/contract";
import { DomainError } from "../../lib/errors";
import { EPOCH_MS, MAX_TEXT } from "../../lib/validation";
import { listMonitorIds, resolveMonitors, visibleAsset } from "../config/contract";
import type { CmActions } from "./cm.service";
import { MSG } from "./messages";
import { ASSET_ID_FIELD, CAPTURE_FIELDS, EXAMPLES, MONITOR_ID_FIELD } from "./openapi";
import { fundamentalFrequency } from "./peaks";
import * as repo from "./repo";
import { decodeAmplitudes } from "./spectrum";
import { diagnoseMonitor, peaksView, rotatingSpeedOf, spectrumView } from "./views";

const text = { type: "string", max: MAX_TEXT } as const;

/** The query that names one capture. */
const captureParams = {
  monitor_id: text,
  tag: text,
  axis: { type: "enum", values: ["x", "y", "z"] },
  timestamp: { ...EPOCH_MS, convert: true },
} as const;

interface CaptureParams {
  monitor_id: string;
  tag: string;
  axis: string;
  timestamp: number;
}

const captureErrors: [number, string][] = [
  [400, MSG.invalidMonitorId],
  [400, MSG.invalidInput("axis")],
  [400, MSG.invalidInput("timestamp")],
];

export const fftActions: CmActions = {
  "fft.peaks": {
    http: {
      op: 67,
      routes: ["GET /_cm/fft/_peaks"],
      group: "cm",
      summary: "FFT peaks of a capture",
      description:
        "The peaks of the capture's spectrum, strongest first, each with the running speed it is read against. " +
        "An empty array when the monitor has no capture at that time.",
      fields: CAPTURE_FIELDS,
      answer: { schema: "$FftPeak[]", example: EXAMPLES.peaks },
      errors: [...captureErrors, [400, MSG.invalidAssetId]],
    },
    params: captureParams,
    async handler(ctx: Context<CaptureParams, RequestMeta>) {
      const monitor = await this.monitorOrFail(ctx, ctx.params.monitor_id);
      if (monitor.asset_id && !monitor.asset_attributes) throw new DomainError(400, MSG.invalidAssetId);
      const s = await repo.spectrumAt(this.db, monitor.monitor_id, ctx.params.tag, ctx.params.axis, ctx.params.timestamp);
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
        "its peaks flagged. An empty array when the monitor has no capture at that time.",
      fields: CAPTURE_FIELDS,
      answer: { schema: "$SpectrumPoint[]", example: EXAMPLES.spectrum },
      errors: captureErrors,
    },
    params: captureParams,
    async handler(ctx: Context<CaptureParams, RequestMeta>) {
      const monitor = await this.monitorOrFail(ctx, ctx.params.monitor_id);
      const s = await repo.spectrumAt(this.db, monitor.monitor_id, ctx.params.tag, ctx.params.axis, ctx.params.timestamp);
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
      description: "The times (epoch ms, ascending) at which the monitor has a capture on any tag or axis.",
      fields: { monitor_id: MONITOR_ID_FIELD },
      answer: { schema: "integer[]", example: EXAMPLES.timestamps },
      errors: [[400, MSG.invalidMonitorId]],
    },
    params: { monitor_id: text },
    async handler(ctx: Context<{ monitor_id: string }, RequestMeta>) {
      const monitor = await this.monitorOrFail(ctx, ctx.params.monitor_id);
      return repo.spectrumTimestamps(this.db, monitor.monitor_id);
    },
  },
};
