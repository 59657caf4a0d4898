/**
 * cm's internal actions: one capture and a batch of readings, as the waveforms and readings
 * streams deliver them; tests and tools call them directly.
 */
import type { Context } from "moleculer";
import { MAX_TEXT } from "../../lib/validation";
import type { Reading } from "../pipelines/contract";
import type { CmActions, Waveform } from "./cm.types";


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
      return { stored: await this.storeWaveform(ctx.params) };
    },
  },

  "ingest.readings": {
    visibility: "public",
    params: {
      readings: {
        type: "array",
        items: {
          type: "object",
          props: { monitor_id: text, tag_id: text, ts: { type: "number", integer: true }, value: { type: "number" } },
        },
      },
    },
    async handler(ctx: Context<{ readings: Reading[] }>) {
      return { applied: await this.storeReadings(ctx, ctx.params.readings) };
    },
  },
};
