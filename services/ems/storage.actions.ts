/** What ems's readings cost on disk per monitor, for the storage route (storage.ts). Internal. */
import type { Context } from "moleculer";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import type { EmsContract } from "./contract";
import type { EmsActions } from "./ems.types";
import { monitorBytes } from "./storage";

export const storageActions: EmsActions = {
  "storage.monitors": {
    visibility: "public",
    readOnly: true,
    handler(ctx: Context<ParamsOf<EmsContract, "storage.monitors">>): Promise<ReplyOf<EmsContract, "storage.monitors">> {
      return monitorBytes(this.system(ctx));
    },
  },
};
