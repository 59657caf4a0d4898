/**
 * ems: energy metrics (operations 75-77). Fed by the readings stream: readings of an energy
 * monitor's kWh, kW, V and A tags are folded into quarter-hour rollups (rollups.ts), and every
 * answer reads the rollups (metrics.ts), so a year of minute data answers about as fast as a day.
 * Names, tags and the site's time zone come from config's actions, through the port (port.ts).
 * The readings it keeps as their dedupe key go compressed past HISTORY_COMPRESS_AFTER (hours.ts);
 * `ems.storage.monitors` tells the storage route what they and the rollups cost (storage.ts).
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
import type { MonitorEvent } from "../config/contract";
import type { PipelineStreams } from "../pipelines/contract";
import type { EmsLocals, EmsMethods, EmsThis } from "./ems.types";
import { MSG } from "./messages";
import { metricsActions } from "./metrics.actions";
import { migrations } from "./migrations";
import { COMPRESS_EVERY_MS } from "./hours";
import { EMS_SCHEMAS } from "./openapi";
import { emsPort } from "./port";
import * as rollups from "./rollups";
import { storageActions } from "./storage.actions";

/** Internal actions, events, streams and jobs answer for the whole deployment: they are not reachable over HTTP. */
const SYSTEM: Principal = { username: "ems", user_type: "saas-admin", site_id: null, plant_id: null, modules: [] };

/**
 * The durable group "ems" on the readings stream, and `ingest.readings`: the energy tags' readings
 * folded into the rollups (rollups.ts). A redelivered batch is a no-op (readings are keyed), so
 * any order is safe; a throw leaves the batch to be delivered again.
 */
const readings = readingsConsumer<EmsThis>("ems", function (caller, batch) {
  return rollups.storeReadings(this.system(caller), batch);
});

const jobs: PeriodicJobs<EmsThis> = {
  /** The daily retention run: raw readings older than their site's retention go, the rollups stay (rollups.ts). */
  retention: {
    everyMs: DAILY_CHECK_MS,
    daily: true,
    run(caller, now) {
      return rollups.deleteOldReadings(this.system(caller), now);
    },
  },
  /** The readings key past HISTORY_COMPRESS_AFTER kept as one row per tag and hour (hours.ts; one replica at a time). */
  compress: {
    everyMs: COMPRESS_EVERY_MS,
    runnable: true,
    run(caller, now) {
      return rollups.compressOldReadings(this.system(caller), now);
    },
  },
};

const EmsService: ServiceSchema<ServiceSettingSchema, EmsMethods, EmsLocals> & { streams: StreamConsumers<EmsThis, PipelineStreams>; jobs: PeriodicJobs<EmsThis> } = {
  name: "ems",
  // The stream mixin first: the database opens before the consumer starts and closes after it stops.
  mixins: [
    PeriodicMixin(),
    StreamMixin(),
    DbMixin({ schema: "ems", migrations }),
    readings.mixin,
  ],
  jobs,
  streams: { readings: readings.stream },
  settings: { openapi: { schemas: EMS_SCHEMAS } },

  actions: {
    ...metricsActions,
    ...storageActions,
  },

  events: {
    "config.monitor.deleted": {
      handler(ctx: Context<MonitorEvent>) {
        return rollups.monitorDeleted(this.system(ctx), ctx.params);
      },
    },
  },

  methods: {
    use(ctx: Context<unknown, Partial<RequestMeta>>) {
      const user = ctx.meta.user;
      if (!user) throw new DomainError(401, MSG.invalidCredentials);
      return emsPort({ db: this.db, caller: ctx, user, meta: ctx.meta, logger: this.logger });
    },

    system(caller: Caller) {
      return emsPort({ db: this.db, caller, user: SYSTEM, logger: this.logger });
    },
  },
};

export default EmsService;
