/**
 * cm: condition monitoring (operations 67-74). Fed by the waveforms and readings of the
 * pipelines: each capture becomes a stored spectrum with its peaks, each reading the latest
 * value of its tag, and an asset whose latest values leave normal opens an event. Names,
 * thresholds, asset attributes and the caller's scope come from config's actions.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { Caller, RequestMeta } from "../../lib/contract";
import { DomainError } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { DAILY_CHECK_MS } from "../../lib/daily-job";
import { DbMixin } from "../../mixins/db.mixin";
import { PeriodicMixin, type JobCaller, type PeriodicJobs } from "../../mixins/periodic.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import {
  listMonitorIds,
  resolveMonitors,
  retentionCutoffs,
  visibleMonitor,
  type AssetEvent,
  type MonitorEvent,
} from "../config/contract";
import type { PipelineStreams, Reading } from "../pipelines/contract";
import { assetsActions } from "./assets.actions";
import { fftActions } from "./fft.actions";
import type { CmLocals, CmMethods, CmThis, Waveform } from "./cm.types";
import { ingestActions } from "./ingest.actions";
import { MSG } from "./messages";
import { migrations } from "./migrations";
import { monitorsActions } from "./monitors.actions";
import { CM_SCHEMAS } from "./openapi";
import { findPeaks } from "./peaks";
import * as repo from "./repo";
import { amplitudeSpectrum, encodeAmplitudes } from "./spectrum";
import { severityOf } from "./status";
import { assetView, diagnoseMonitor, evaluateAsset, eventLabel } from "./views";

/**
 * The durable group "cm" on both streams. Handlers are idempotent (a capture is stored once, a
 * latest value only moves forward), so redelivery and any order are safe; a throw (config not
 * answering, database down) leaves the message to be delivered again.
 */
const streams: StreamConsumers<CmThis, PipelineStreams> = {
  waveforms: {
    group: "cm",
    concurrency: 2,
    async handler(capture) {
      await this.storeWaveform(capture);
    },
  },
  readings: {
    group: "cm",
    concurrency: 4,
    async handler(batch) {
      await this.storeReadings(this.broker, batch.readings);
    },
  },
};

/**
 * The daily retention run: spectra older than their site's retention go. Latest values stay (they
 * are the latest), and so do events (an open one is current, closed ones are a few rows an asset).
 */
async function deleteOldSpectra(this: CmThis, caller: JobCaller, now: number): Promise<{ deleted: number }> {
  let deleted = 0;
  for (const cutoff of await retentionCutoffs(caller, await repo.spectraMonitors(this.db), now)) {
    deleted += await repo.deleteSpectraBefore(this.db, cutoff.monitor_ids, cutoff.before);
  }
  if (deleted) this.logger.info(`retention: deleted ${deleted} spectra`);
  return { deleted };
}

const CmService: ServiceSchema<ServiceSettingSchema, CmMethods, CmLocals> & { streams: StreamConsumers<CmThis, PipelineStreams>; jobs: PeriodicJobs<CmThis> } = {
  name: "cm",
  // The stream mixin first: the database opens before the consumers start and closes after they stop.
  mixins: [PeriodicMixin(), StreamMixin(), DbMixin({ schema: "cm", migrations })],
  jobs: { retention: { everyMs: DAILY_CHECK_MS, daily: true, run: deleteOldSpectra } },
  streams,
  settings: { openapi: { schemas: CM_SCHEMAS } },

  actions: {
    ...ingestActions,
    ...fftActions,
    ...monitorsActions,
    ...assetsActions,
  },

  events: {
    /** A monitor moved to another asset or had its thresholds changed: both assets are re-read. */
    "config.monitor.updated": {
      async handler(ctx: Context<MonitorEvent>) {
        const before = await repo.latestOfMonitors(this.db, [ctx.params.monitor_id]);
        await repo.moveMonitor(this.db, ctx.params.monitor_id, ctx.params.asset_id ?? null);
        const assets = new Set(before.map((v) => v.asset_id).filter((a): a is string => !!a));
        if (ctx.params.asset_id) assets.add(ctx.params.asset_id);
        await this.evaluateAssets(ctx, assets);
      },
    },
    "config.monitor.deleted": {
      async handler(ctx: Context<MonitorEvent>) {
        await repo.forgetMonitor(this.db, ctx.params.monitor_id);
        if (ctx.params.asset_id) await this.evaluateAssets(ctx, [ctx.params.asset_id]);
      },
    },
    "config.asset.deleted": {
      async handler(ctx: Context<AssetEvent>) {
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
     * closes it when the asset is back to normal. Under a per-asset lock (repo.underAssetLock).
     */
    async evaluateAssets(caller: Caller, assetIds: Iterable<string>) {
      for (const assetId of assetIds) {
        await repo.underAssetLock(this.db, assetId, async (tx) => {
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

    async assetObject(ctx: Context<unknown, RequestMeta>, asset: { asset_id: string; asset_name: string }) {
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

    async monitorOrFail(ctx: Context<unknown, RequestMeta>, id: string) {
      const monitor = await visibleMonitor(ctx, ctx.meta.user, id);
      if (!monitor) throw new DomainError(400, MSG.invalidMonitorId);
      return monitor;
    },
  },
};

export default CmService;
