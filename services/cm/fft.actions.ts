/**
 * The FFT operations: a capture's peaks and spectrum, the fault summary of an asset's monitors,
 * and the times a monitor has captures at (spectra.ts).
 */
import type { Context } from "moleculer";
import type { RequestMeta } from "../../lib/contract";
import { EPOCH_MS, MAX_TEXT } from "../../lib/validation";
import type { CmActions } from "./cm.types";
import { MSG } from "./messages";
import { CAPTURE_FIELDS, EXAMPLES, MAX_TIMESTAMPS, MONITOR_ID_FIELD, TIMESTAMPS_FIELDS, ASSET_ID_FIELD } from "./openapi";
import * as spectra from "./spectra";
import type { CaptureParams, EnvelopeParams, TimestampsParams } from "./spectra";

const text = { type: "string", max: MAX_TEXT } as const;

/** The query that names one capture. */
const captureParams = {
  monitor_id: text,
  tag: text,
  axis: { type: "enum", values: ["x", "y", "z"] },
  timestamp: { ...EPOCH_MS, convert: true },
  // A query string's words only: `1`, `yes` or `True` are refused rather than guessed at.
  nearest: { type: "enum", values: ["true", "false"], optional: true },
  envelope: { type: "enum", values: ["true", "false"], optional: true },
  // Read in the domain against the capture's Nyquist frequency (spectra.ts).
  band: { ...text, optional: true },
} as const;

const captureErrors: [number, string][] = [
  [400, MSG.invalidMonitorId],
  [400, MSG.invalidInput("axis")],
  [400, MSG.invalidInput("timestamp")],
  [400, MSG.invalidInput("nearest")],
  [400, MSG.invalidInput("envelope")],
  [400, MSG.invalidInput("band")],
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
        "An empty array when the monitor has no capture at that time (with nearest=true: none of that tag and axis at all). " +
        "The capture's time is in the X-Capture-Timestamp header (epoch ms) whenever one is answered. " +
        "A peak that matches a bearing defect frequency (specs.bearing) or its harmonic says which in `bearing`. " +
        "With envelope=true: the peaks of the envelope spectrum.",
      fields: CAPTURE_FIELDS,
      answer: { schema: "$FftPeak[]", example: EXAMPLES.peaks },
      errors: [...captureErrors, [400, MSG.invalidAssetId]],
    },
    params: captureParams,
    handler(ctx: Context<CaptureParams & EnvelopeParams, RequestMeta>) {
      return spectra.capturePeaks(this.use(ctx), ctx.params);
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
    handler(ctx: Context<{ asset_id: string }, RequestMeta>) {
      return spectra.faultSummary(this.use(ctx), ctx.params.asset_id);
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
        "The capture's time is in the X-Capture-Timestamp header (epoch ms) whenever one is answered. " +
        "With envelope=true: the envelope spectrum of a band (X-Envelope-Band), its peaks flagged.",
      fields: CAPTURE_FIELDS,
      answer: { schema: "$SpectrumPoint[]", example: EXAMPLES.spectrum },
      errors: captureErrors,
    },
    params: captureParams,
    handler(ctx: Context<CaptureParams & EnvelopeParams, RequestMeta>) {
      return spectra.captureSpectrum(this.use(ctx), ctx.params);
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
    handler(ctx: Context<TimestampsParams, RequestMeta>) {
      return spectra.captureTimestamps(this.use(ctx), ctx.params);
    },
  },
};
