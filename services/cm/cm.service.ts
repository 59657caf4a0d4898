/**
 * cm: condition monitoring (operations 67-74). Fed by the waveforms and readings of the
 * pipelines: each capture becomes a stored spectrum with its peaks, each reading the latest
 * value of its tag, and an asset whose latest values leave normal opens an event. Names,
 * thresholds, asset attributes and the caller's scope come from config's actions.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { DataSource } from "typeorm";
import type { Principal } from "../../lib/access";
import { DomainError } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { EPOCH_MS, MAX_TEXT } from "../../lib/validation";
import { DailyJobMixin, type DailyJobEnv } from "../../mixins/daily-job.mixin";
import { DbMixin } from "../../mixins/db.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import type { ReadingBatch, WaveformMessage } from "../pipelines/streams";
import {
  listAssets,
  listMonitorIds,
  resolveMonitors,
  retentionCutoffs,
  visibleAsset,
  visibleFunction,
  visibleMonitor,
  type Caller,
  type ResolvedMonitor,
} from "./config-client";
import { MSG } from "./messages";
import { migrations } from "./migrations";
import { findPeaks, fundamentalFrequency } from "./peaks";
import * as repo from "./repo";
import { amplitudeSpectrum, decodeAmplitudes, encodeAmplitudes } from "./spectrum";
import { severityOf } from "./status";
import {
  assetView,
  diagnoseMonitor,
  evaluateAsset,
  eventLabel,
  monitorColorsView,
  monitorValuesView,
  peaksView,
  rotatingSpeedOf,
  spectrumView,
} from "./views";
import { parseIsoDate } from "../../lib/time";
import { PAGE_PARAMS, pageOf } from "../../lib/paging";

type Meta = { user: Principal };

/** A vibration capture as the pipelines publish it (`waveforms` stream). */
export interface Waveform {
  monitor_id: string;
  tag: string;
  axis: "x" | "y" | "z";
  ts: number;
  sample_rate_hz: number;
  samples: number[];
}

/** A reading as the pipelines publish it (`readings` stream). */
export interface Reading {
  monitor_id: string;
  tag_id: string;
  ts: number;
  value: number;
}

/** Longest capture accepted: 2^20 samples (about 17 s at 60 kHz). */
export const MAX_SAMPLES = 1 << 20;

interface CmLocals {
  db: DataSource;
}

interface CmMethods {
  storeWaveform(w: Waveform): Promise<boolean>;
  storeReadings(caller: Caller, readings: Reading[]): Promise<number>;
  evaluateAssets(caller: Caller, assetIds: Iterable<string>): Promise<void>;
  assetObject(ctx: Context<unknown, Meta>, asset: { asset_id: string; asset_name: string }): Promise<ReturnType<typeof assetView>>;
  monitorOrFail(ctx: Context<unknown, Meta>, id: string): Promise<ResolvedMonitor>;
}

const text = { type: "string", max: MAX_TEXT } as const;
const fftQuery = {
  monitor_id: text,
  tag: text,
  axis: { type: "enum", values: ["x", "y", "z"] },
  timestamp: { ...EPOCH_MS, convert: true },
} as const;
const excess = { unknown: MSG.excessInputs } as const;

/**
 * The durable group "cm" on both streams. Handlers are idempotent (a capture is stored once, a
 * latest value only moves forward), so redelivery and any order are safe; a throw (config not
 * answering, database down) leaves the message to be delivered again.
 */
const streams: StreamConsumers = {
  waveforms: {
    group: "cm",
    concurrency: 2,
    async handler(this: unknown, message: unknown) {
      await (this as CmMethods).storeWaveform(message as WaveformMessage);
    },
  },
  readings: {
    group: "cm",
    concurrency: 4,
    async handler(this: unknown, batch: unknown) {
      const self = this as CmMethods & { broker: Caller };
      await self.storeReadings(self.broker, (batch as ReadingBatch).readings);
    },
  },
};

/**
 * The daily retention run: spectra older than their site's retention go. Latest values stay (they
 * are the latest), and so do events (an open one is current, closed ones are a few rows an asset).
 */
async function deleteOldSpectra(env: DailyJobEnv, now: number): Promise<{ deleted: number }> {
  let deleted = 0;
  for (const cutoff of await retentionCutoffs(env.caller, await repo.spectraMonitors(env.db), now)) {
    deleted += await repo.deleteSpectraBefore(env.db, cutoff.monitor_ids, cutoff.before);
  }
  if (deleted) env.logger.info(`retention: deleted ${deleted} spectra`);
  return { deleted };
}

const CmService: ServiceSchema<ServiceSettingSchema, CmMethods, CmLocals> & { streams: StreamConsumers } = {
  name: "cm",
  // The stream mixin first: the database opens before the consumers start and closes after they stop.
  mixins: [StreamMixin(), DbMixin({ schema: "cm", migrations }), DailyJobMixin("retention", deleteOldSpectra)],
  streams,

  actions: {
    /** Internal: one capture, as the waveforms stream delivers it (tests and tools call it directly). */
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

    /** Internal: a batch of readings, as the readings stream delivers it (tests and tools call it directly). */
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

    /** Op 67. */
    "fft.peaks": {
      params: fftQuery,
      async handler(ctx: Context<{ monitor_id: string; tag: string; axis: string; timestamp: number }, Meta>) {
        const monitor = await this.monitorOrFail(ctx, ctx.params.monitor_id);
        if (monitor.asset_id && !monitor.asset_attributes) throw new DomainError(400, MSG.invalidAssetId);
        const s = await repo.spectrumAt(this.db, monitor.monitor_id, ctx.params.tag, ctx.params.axis, ctx.params.timestamp);
        if (!s) return [];
        return peaksView(s.peaks, fundamentalFrequency(s.peaks, rotatingSpeedOf(monitor)));
      },
    },

    /** Op 68. */
    "fft.summary": {
      params: { asset_id: text, $$messages: excess },
      async handler(ctx: Context<{ asset_id: string }, Meta>) {
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

    /** Op 69. */
    "fft.spectrum": {
      params: fftQuery,
      async handler(ctx: Context<{ monitor_id: string; tag: string; axis: string; timestamp: number }, Meta>) {
        const monitor = await this.monitorOrFail(ctx, ctx.params.monitor_id);
        const s = await repo.spectrumAt(this.db, monitor.monitor_id, ctx.params.tag, ctx.params.axis, ctx.params.timestamp);
        if (!s) return [];
        return spectrumView(decodeAmplitudes(s.amplitudes), s.df, s.peaks);
      },
    },

    /** Op 70. */
    "fft.timestamps": {
      params: { monitor_id: text },
      async handler(ctx: Context<{ monitor_id: string }, Meta>) {
        const monitor = await this.monitorOrFail(ctx, ctx.params.monitor_id);
        return repo.spectrumTimestamps(this.db, monitor.monitor_id);
      },
    },

    /** Op 71. */
    "monitors.get": {
      params: { monitor_id: text },
      async handler(ctx: Context<{ monitor_id: string }, Meta>) {
        const monitor = await this.monitorOrFail(ctx, ctx.params.monitor_id);
        return monitorValuesView(monitor, await repo.latestOfMonitors(this.db, [monitor.monitor_id]));
      },
    },

    /** Op 72. `from`/`to` bound the latest values shown: one outside the window reads null, grey. */
    "monitors.list": {
      params: {
        asset_id: text,
        from: { ...text, optional: true },
        to: { ...text, optional: true },
        ...PAGE_PARAMS,
        $$messages: excess,
      },
      async handler(ctx: Context<{ asset_id: string; from?: string; to?: string; limit?: number; offset?: number }, Meta>) {
        const window: { from?: number; to?: number } = {};
        for (const key of ["from", "to"] as const) {
          const raw = ctx.params[key];
          if (raw === undefined) continue;
          const ts = parseIsoDate(raw);
          if (ts === undefined) throw new DomainError(400, MSG.invalidInput(key));
          window[key] = ts;
        }
        const asset = await visibleAsset(ctx, ctx.meta.user, ctx.params.asset_id);
        if (!asset) throw new DomainError(400, MSG.invalidAssetId);
        const monitors = pageOf(ctx, [...(await resolveMonitors(ctx, await listMonitorIds(ctx, { asset_id: asset.asset_id }))).values()], ctx.params);
        const latest = await repo.latestOfMonitors(this.db, monitors.map((m) => m.monitor_id));
        return monitors.map((m) => monitorColorsView(m, latest, window));
      },
    },

    /** Op 73. */
    "assets.get": {
      params: { asset_id: text, $$messages: excess },
      async handler(ctx: Context<{ asset_id: string }, Meta>) {
        const asset = await visibleAsset(ctx, ctx.meta.user, ctx.params.asset_id);
        if (!asset) throw new DomainError(400, MSG.invalidAssetId);
        return this.assetObject(ctx, asset);
      },
    },

    /** Op 74. */
    "assets.list": {
      params: { function_id: text, ...PAGE_PARAMS, $$messages: excess },
      async handler(ctx: Context<{ function_id: string; limit?: number; offset?: number }, Meta>) {
        const fn = await visibleFunction(ctx, ctx.meta.user, ctx.params.function_id);
        if (!fn) throw new DomainError(400, MSG.invalidFunctionId);
        const assets = pageOf(ctx, await listAssets(ctx, fn.function_id), ctx.params);
        return Promise.all(assets.map((a) => this.assetObject(ctx, a)));
      },
    },
  },

  events: {
    /** A monitor moved to another asset or had its thresholds changed: both assets are re-read. */
    "config.monitor.updated": {
      async handler(ctx: Context<{ monitor_id: string; asset_id: string | null }>) {
        const before = await repo.latestOfMonitors(this.db, [ctx.params.monitor_id]);
        await repo.moveMonitor(this.db, ctx.params.monitor_id, ctx.params.asset_id ?? null);
        const assets = new Set(before.map((v) => v.asset_id).filter((a): a is string => !!a));
        if (ctx.params.asset_id) assets.add(ctx.params.asset_id);
        await this.evaluateAssets(ctx, assets);
      },
    },
    "config.monitor.deleted": {
      async handler(ctx: Context<{ monitor_id: string; asset_id: string | null }>) {
        await repo.forgetMonitor(this.db, ctx.params.monitor_id);
        if (ctx.params.asset_id) await this.evaluateAssets(ctx, [ctx.params.asset_id]);
      },
    },
    "config.asset.deleted": {
      async handler(ctx: Context<{ asset_id: string }>) {
        await repo.closeEvent(this.db, ctx.params.asset_id, Date.now());
      },
    },
  },

  methods: {
    async storeWaveform(w: Waveform) {
      const { df, amplitudes } = amplitudeSpectrum(w.samples, w.sample_rate_hz);
      return repo.insertSpectrum(this.db, {
        monitor_id: w.monitor_id,
        tag: w.tag,
        axis: w.axis,
        ts: w.ts,
        sample_rate_hz: w.sample_rate_hz,
        samples: w.samples.length,
        df,
        amplitudes: encodeAmplitudes(amplitudes),
        peaks: findPeaks(amplitudes, df),
      });
    },

    /** Latest value per tag, then the status of every asset the batch touched. Idempotent. */
    async storeReadings(caller: Caller, readings: Reading[]) {
      const monitors = await resolveMonitors(caller, readings.map((r) => r.monitor_id));
      const newest = new Map<string, repo.LatestValue>();
      for (const r of readings) {
        const m = monitors.get(r.monitor_id);
        if (!m || !Number.isFinite(r.value)) continue;
        const key = `${r.monitor_id}|${r.tag_id}`;
        const seen = newest.get(key);
        // Of two readings with one timestamp, the one sent last stands (a gateway's correction).
        if (!seen || r.ts >= seen.ts) newest.set(key, { ...r, asset_id: m.asset_id });
      }
      await repo.upsertLatest(this.db, [...newest.values()]);
      const assets = new Set([...newest.values()].map((v) => v.asset_id).filter((a): a is string => !!a));
      await this.evaluateAssets(caller, assets);
      return newest.size;
    },

    /**
     * Opens an asset's event when it leaves normal, raises its severity while it worsens and
     * closes it when the asset is back to normal. Under a per-asset lock, so replicas
     * evaluating the same asset take turns.
     */
    async evaluateAssets(caller: Caller, assetIds: Iterable<string>) {
      for (const assetId of assetIds) {
        await this.db.transaction(async (tx) => {
          await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`cm:asset:${assetId}`]);
          const latest = await repo.latestOfAsset(tx, assetId);
          const monitors = await resolveMonitors(caller, latest.map((v) => v.monitor_id));
          const evaluation = evaluateAsset([...monitors.values()], latest);
          if (evaluation.status === "normal" || !evaluation.cause) {
            await repo.closeEvent(tx, assetId, Date.now());
            return;
          }
          await repo.openOrEscalate(tx, {
            event_id: newId(),
            asset_id: assetId,
            event_start: Math.floor(evaluation.cause.ts / 1000),
            event_severity: severityOf(evaluation.status),
            event_status: MSG.eventStatus,
            event_label: eventLabel(evaluation.cause),
            event_assignee: "",
          });
        });
      }
    },

    async assetObject(ctx: Context<unknown, Meta>, asset: { asset_id: string; asset_name: string }) {
      const monitors = await resolveMonitors(ctx, await listMonitorIds(ctx, { asset_id: asset.asset_id }));
      const ids = [...monitors.keys()];
      const [latest, spectra, event] = await Promise.all([
        repo.latestOfMonitors(this.db, ids),
        repo.latestSpectra(this.db, ids),
        repo.openEventOf(this.db, asset.asset_id),
      ]);
      const { status } = evaluateAsset([...monitors.values()], latest);
      const faults = new Set<string>();
      for (const m of monitors.values()) {
        const d = diagnoseMonitor(m, spectra.filter((s) => s.monitor_id === m.monitor_id));
        for (const f of d?.faults ?? []) faults.add(f.fault);
      }
      return assetView(asset, status, event, [...faults]);
    },

    async monitorOrFail(ctx: Context<unknown, Meta>, id: string) {
      const monitor = await visibleMonitor(ctx, ctx.meta.user, id);
      if (!monitor) throw new DomainError(400, MSG.invalidMonitorId);
      return monitor;
    },
  },
};

export default CmService;
