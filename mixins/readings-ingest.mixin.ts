/**
 * The readings consumers' internal action, declared once for every service that keeps something
 * of the readings stream (docs/architecture.md, "The service shape"): `ingest.readings` takes a
 * batch as the stream delivers it, so tests and tools can hand one over directly, and answers
 * how many readings the service applied.
 *
 *   mixins: [ReadingsIngestMixin<CmThis>(function (ctx, readings) { return monitors.storeReadings(this.system(ctx), readings); }), ...]
 */
import type { Context, Service, ServiceSchema } from "moleculer";
import { MAX_TEXT } from "../lib/validation";
import type { Reading } from "../services/pipelines/contract";

/** What the service does with a batch: the number of readings it applied. */
export type ApplyReadings<S> = (this: S, ctx: Context, readings: Reading[]) => Promise<number>;

const text = { type: "string", max: MAX_TEXT } as const;

export function ReadingsIngestMixin<S extends Service>(apply: ApplyReadings<S>): Partial<ServiceSchema> {
  return {
    actions: {
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
          // The service that mixes this in is the S its `apply` was written for.
          return { applied: await apply.call(this as S, ctx, ctx.params.readings) };
        },
      },
    },
  };
}
