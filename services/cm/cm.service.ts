/**
 * cm: condition monitoring (operations 67-74). Fed by the waveforms and readings of the
 * pipelines: each capture becomes a stored spectrum with its peaks (spectra.ts), each reading the
 * latest value of its tag (monitors.ts), and an asset whose latest values leave normal opens an
 * event (assets.ts). Names, thresholds, asset attributes and the caller's scope come from
 * config's actions, through the port (port.ts).
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { Principal } from "../../lib/access";
import type { Caller, RequestMeta } from "../../lib/contract";
import { DAILY_CHECK_MS } from "../../lib/daily-job";
import { DomainError } from "../../lib/errors";
import { DbMixin } from "../../mixins/db.mixin";
import { PeriodicMixin, type PeriodicJobs } from "../../mixins/periodic.mixin";
import { readingsConsumer } from "../../mixins/readings-consumer.mixin";
import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
import type { AssetEvent, MonitorEvent } from "../config/contract";
import type { PipelineStreams } from "../pipelines/contract";
import * as assets from "./assets";
import { assetsActions } from "./assets.actions";
import type { CmLocals, CmMethods, CmThis } from "./cm.types";
import { fftActions } from "./fft.actions";
import { ingestActions } from "./ingest.actions";
import { MSG } from "./messages";
import { migrations } from "./migrations";
import * as monitors from "./monitors";
import { monitorsActions } from "./monitors.actions";
import { CM_SCHEMAS } from "./openapi";
import { cmPort } from "./port";
import * as spectra from "./spectra";

/** Internal actions, events, streams and jobs answer for the whole deployment: they are not reachable over HTTP. */
const SYSTEM: Principal = { username: "cm", user_type: "saas-admin", site_id: null, plant_id: null, modules: [] };

/** Readings, from the stream or `ingest.readings`: each the latest value of its tag (monitors.ts). */
const readings = readingsConsumer<CmThis>("cm", function (caller, batch) {
  return monitors.storeReadings(this.system(caller), batch);
});

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
      await spectra.storeWaveform(this.system(this.broker), capture);
    },
  },
  readings: readings.stream,
};

/** The daily retention run: spectra older than their site's retention go (spectra.ts). */
const jobs: PeriodicJobs<CmThis> = {
  retention: {
    everyMs: DAILY_CHECK_MS,
    daily: true,
    run(caller, now) {
      return spectra.deleteOldSpectra(this.system(caller), now);
    },
  },
};

const CmService: ServiceSchema<ServiceSettingSchema, CmMethods, CmLocals> & { streams: StreamConsumers<CmThis, PipelineStreams>; jobs: PeriodicJobs<CmThis> } = {
  name: "cm",
  // The stream mixin first: the database opens before the consumers start and closes after they stop.
  mixins: [
    PeriodicMixin(),
    StreamMixin(),
    DbMixin({ schema: "cm", migrations }),
    readings.mixin,
  ],
  jobs,
  streams,
  settings: { openapi: { schemas: CM_SCHEMAS } },

  actions: {
    ...ingestActions,
    ...fftActions,
    ...monitorsActions,
    ...assetsActions,
  },

  events: {
    "config.monitor.updated": {
      handler(ctx: Context<MonitorEvent>) {
        return monitors.monitorUpdated(this.system(ctx), ctx.params);
      },
    },
    "config.monitor.deleted": {
      handler(ctx: Context<MonitorEvent>) {
        return monitors.monitorDeleted(this.system(ctx), ctx.params);
      },
    },
    "config.asset.deleted": {
      handler(ctx: Context<AssetEvent>) {
        return assets.assetDeleted(this.system(ctx), ctx.params);
      },
    },
  },

  methods: {
    use(ctx: Context<unknown, Partial<RequestMeta>>) {
      const user = ctx.meta.user;
      if (!user) throw new DomainError(401, MSG.invalidCredentials);
      return cmPort({ db: this.db, caller: ctx, user, meta: ctx.meta, logger: this.logger });
    },

    system(caller: Caller) {
      return cmPort({ db: this.db, caller, user: SYSTEM, logger: this.logger });
    },
  },
};

export default CmService;
