/**
 * A consumer of the readings stream, declared once for every service that keeps something of it
 * (docs/architecture.md, "The service shape"): the service says what it does with a batch
 * (`apply`, answering how many readings it applied) and gets both doors to it, the stream's
 * durable consumer and the internal action `ingest.readings`, which takes a batch as the stream
 * delivers it so that tests and tools can hand one over directly.
 *
 *   const readings = readingsConsumer<CmThis>("cm", function (caller, batch) { return monitors.storeReadings(this.system(caller), batch); });
 *   { mixins: [..., readings.mixin], streams: { readings: readings.stream }, ... }
 *
 * The stream's consumer goes under the service's own `streams` (a mixin's would be replaced by
 * them: Moleculer keeps a schema's own value of a key it does not know).
 */
import type { Context, Service, ServiceSchema } from "moleculer";
import type { Caller } from "../lib/contract";
import { MAX_TEXT } from "../lib/validation";
import type { Reading, ReadingBatch } from "../services/pipelines/contract";
import type { StreamConsumer } from "./stream.mixin";

/** What the service does with a batch: the number of readings it applied. Idempotent (a batch may come twice). */
export type ApplyReadings<S> = (this: S, caller: Caller, readings: Reading[]) => Promise<number>;

export interface ReadingsConsumer<S> {
  /** The `ingest.readings` action. */
  mixin: Partial<ServiceSchema>;
  /** The durable consumer of the readings stream, for the service's `streams.readings`. */
  stream: StreamConsumer<S, ReadingBatch>;
}

const text = { type: "string", max: MAX_TEXT } as const;

/** `group` is the durable consumer group: the consuming service's name. */
export function readingsConsumer<S extends Service>(group: string, apply: ApplyReadings<S>): ReadingsConsumer<S> {
  return {
    mixin: {
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
    },
    stream: {
      group,
      concurrency: 4,
      async handler(batch) {
        await apply.call(this, this.broker, batch.readings);
      },
    },
  };
}
