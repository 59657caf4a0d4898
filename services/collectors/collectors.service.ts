/**
 * collectors: the pipelines the service reads itself (docs/collectors.md), those whose
 * `data_source` is `Cloud` or `Third-Party-Apps`, once started with `_action`: SQL tables today
 * (PostgreSQL, MySQL/MariaDB, SQL Server), OPC-UA servers later (kinds.ts). Each pipeline is
 * collected by one replica at a time (PostgreSQL advisory-lock leases on DATABASE_URL). Stores
 * nothing itself: pages, positions and statuses are the pipelines service's (collection.actions.ts there).
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../../lib/config";
import { sourceGuardOf } from "../../lib/source-guard";
import { collectionClient } from "../pipelines/contract";
import type { CollectorsLocals, CollectorsMethods } from "./collectors.types";
import { MSG } from "./messages";
import type { CollectorsPort } from "./port";
import { startCollectors } from "./runner";

const CollectorsService: ServiceSchema<ServiceSettingSchema, CollectorsMethods, CollectorsLocals> = {
  name: "collectors",
  // Which pipelines to collect, and where their pages go, is the pipelines service's.
  dependencies: ["pipelines"],

  methods: {
    system(): CollectorsPort {
      const broker = this.broker;
      const guard = sourceGuardOf(config());
      return {
        pipelines: (subtypes) => collectionClient.call(broker, "collection.pipelines", { subtypes }),
        page: (page) => collectionClient.call(broker, "collection.page", page),
        running: async (pipeline_id, ts) => void (await collectionClient.call(broker, "collection.running", { pipeline_id, ts })),
        failed: async (pipeline_id, cause) => void (await collectionClient.call(broker, "collection.failed", { pipeline_id, cause })),
        heard: async (pipeline_id, ts) => void (await collectionClient.call(broker, "collection.heard", { pipeline_id, ts })),
        stopped: async (pipeline_id) => void (await collectionClient.call(broker, "collection.stopped", { pipeline_id })),
        checkSource: (host, port) => guard.check(host, port),
        pageRows: config().collectorPageRows,
        opcuaPkiDir: config().opcuaPkiDir,
        log: { info: (m) => this.logger.info(m), warn: (m) => this.logger.warn(m) },
      };
    },
  },

  async started() {
    const url = config().databaseUrl;
    if (!url) this.logger.warn(MSG.noDatabase);
    this.collectors = url ? await startCollectors(this.system(), url) : null;
  },

  async stopped() {
    await this.collectors?.close();
  },
};

export default CollectorsService;
