/** The collectors service as its lifecycle sees it (`this`): its locals and methods, typed once here. */
import type { Service, ServiceSettingSchema } from "moleculer";
import type { CollectorsPort } from "./port";
import type { Collectors } from "./runner";

export interface CollectorsLocals {
  /** The pipelines this replica collects; null without a database for the leases. */
  collectors: Collectors | null;
}

export interface CollectorsMethods {
  /** The port the service's domain modules work with (port.ts): not per request, a collection outlives any. */
  system(): CollectorsPort;
}

export type CollectorsThis = Service<ServiceSettingSchema> & CollectorsLocals & CollectorsMethods;
