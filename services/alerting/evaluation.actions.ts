/**
 * The live side of alerting: the readings stream's consumer, and the internal `evaluate` action.
 * Both evaluate through evaluation.ts (a batch in one transaction, the series clocks written in
 * bulk, opened alerts' notices staged on the alerts stream for the notifier); the rule is
 * evaluator.ts's.
 */
import type { Context } from "moleculer";
import { DEFAULT_PARTITIONS } from "../../lib/streams";
import type { StreamConsumers } from "../../mixins/stream.mixin";
import type { PipelineStreams } from "../pipelines/contract";
import type { AlertingActions, AlertingThis } from "./alerting.types";
import * as evaluation from "./evaluation";
import type { BatchOutcome } from "./evaluation";
import type { Reading } from "./evaluator";

/**
 * The readings stream, read by the durable group "alerting": every replica shares it, so each
 * batch is evaluated by one of them. Batches are keyed by pipeline, so the stream hands one
 * pipeline's batches over one at a time in the order stored, across all replicas (the evaluator
 * ignores a reading older than its series' clock: out of order, an excursion could be missed).
 * A replica takes a batch of every partition at once (a slot per partition, of the default 16):
 * with fewer slots, a batch the server handed to a busy replica would wait there for a slot,
 * holding its partition, while another replica had slots free; so two replicas share the
 * partitions as they come free, and one alone has all of them in flight. The pipeline's order on
 * the replica stays as a cheap second guard (an unkeyed message from before partitions, read
 * through the group's old consumer). The trigger row locks and the per-series clock make a batch
 * that is redelivered open each alert once.
 */
export const READINGS_STREAM: StreamConsumers<AlertingThis, PipelineStreams> = {
  readings: {
    group: "alerting",
    concurrency: DEFAULT_PARTITIONS,
    async handler(batch) {
      await evaluation.evaluateInOrder(this.system(), batch.pipeline_id, batch.readings);
    },
  },
};

export const EVALUATION_ACTIONS: AlertingActions = {
  /**
   * Internal: evaluates a batch of readings (the readings stream's consumer calls it; so do
   * tests and the benchmark). Idempotent: a batch seen before changes nothing.
   */
  evaluate: {
    visibility: "public",
    params: {
      readings: {
        type: "array",
        max: 100_000,
        items: {
          type: "object",
          props: { monitor_id: "string", tag_id: "string", ts: "number", value: "number" },
        },
      },
    },
    async handler(ctx: Context<{ readings: Reading[] }>): Promise<Record<keyof BatchOutcome, number>> {
      const outcome = await evaluation.evaluate(this.system(), ctx.params.readings);
      return { evaluated: outcome.evaluated, opened: outcome.opened.length, closed: outcome.closed.length };
    },
  },
};
