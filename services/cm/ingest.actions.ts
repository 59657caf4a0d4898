/**
 * cm's internal action for one capture, as the waveforms stream delivers it; tests and tools call
 * it directly. Its `ingest.readings` comes from the readings consumers' mixin
 * (mixins/readings-ingest.mixin.ts).
 */
import type { Context } from "moleculer";
import { MAX_TEXT } from "../../lib/validation";
import type { CmActions } from "./cm.types";
import * as spectra from "./spectra";
import type { Waveform } from "./spectra";

/** Longest capture accepted: 2^20 samples (about 17 s at 60 kHz). */
export const MAX_SAMPLES = 1 << 20;

const text = { type: "string", max: MAX_TEXT } as const;

export const ingestActions: CmActions = {
  "ingest.waveform": {
    visibility: "public",
    params: {
      monitor_id: { type: "uuid" },
      tag: text,
      axis: { type: "enum", values: ["x", "y", "z"] },
      ts: { type: "number", integer: true, min: 0 },
      sample_rate_hz: { type: "number", positive: true },
      samples: { type: "array", min: 2, max: MAX_SAMPLES, items: { type: "number" } },
    },
    async handler(ctx: Context<Waveform>) {
      return { stored: await spectra.storeWaveform(this.system(ctx), ctx.params) };
    },
  },
};
