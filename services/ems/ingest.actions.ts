/** ems's internal action: the readings stream's batch, called directly by tests and tools. */
import type { Context } from "moleculer";
import { MAX_TEXT } from "../../lib/validation";
import type { EmsActions } from "./ems.types";
import type { Reading } from "./rollup";

export const ingestActions: EmsActions = {
  "ingest.readings": {
    visibility: "public",
    params: {
      readings: {
        type: "array",
        items: {
          type: "object",
          props: {
            monitor_id: { type: "string", max: MAX_TEXT },
            tag_id: { type: "string", max: MAX_TEXT },
            ts: { type: "number", integer: true },
            value: { type: "number" },
          },
        },
      },
    },
    async handler(ctx: Context<{ readings: Reading[] }>) {
      return { applied: await this.storeReadings(ctx, ctx.params.readings) };
    },
  },
};
