/**
 * The live side of alerting: the readings stream's consumer, the evaluation of a batch against
 * every enabled trigger (evaluation.ts), the series clocks written in bulk, and the notices of
 * opened alerts staged on the alerts stream (contract.ts) for the notifier. The schema lists
 * these; the rules live in evaluator.ts and evaluation.ts, the SQL in the *.repo.ts files.
 */
import type { Context } from "moleculer";
import { countDomain } from "../../lib/metrics";
import { DEFAULT_PARTITIONS } from "../../lib/streams";
import type { StreamConsumers } from "../../mixins/stream.mixin";
import { resolveMonitors } from "../config/contract";
import type { PipelineStreams } from "../pipelines/contract";
import type { AlertingActions, AlertingThis, LiveMethods } from "./alerting.types";
import { evaluateBatch, type BatchOutcome, type NoticeSink } from "./evaluation";
import type { Reading } from "./evaluator";
import { resolveGateway } from "./lookups";
import { transactional, type Queryable } from "./sql";
import { advanceClocks, type SeriesClock } from "./triggers.repo";
import { STREAMS } from "./contract";

/** Series clocks of batches that changed no state are written this often. */
export const CLOCK_FLUSH_MS = 200;

/**
 * The readings stream, read by the durable group "alerting": every replica shares it, so each
 * batch is evaluated by one of them. Batches are keyed by pipeline, so the stream hands one
 * pipeline's batches over one at a time in the order stored, across all replicas (the evaluator
 * ignores a reading older than its series' clock: out of order, an excursion could be missed).
 * A replica takes a batch of every partition at once (a slot per partition, of the default 16):
 * with fewer slots, a batch the server handed to a busy replica would wait there for a slot,
 * holding its partition, while another replica had slots free; so two replicas share the
 * partitions as they come free, and one alone has all of them in flight. `inPipelineOrder` stays as a cheap second guard
 * (an unkeyed message from before partitions, read through the group's old consumer). The trigger
 * row locks and the per-series clock make a batch that is redelivered open each alert once.
 */
export const READINGS_STREAM: StreamConsumers<AlertingThis, PipelineStreams> = {
  readings: {
    group: "alerting",
    concurrency: DEFAULT_PARTITIONS,
    async handler(batch) {
      await this.inPipelineOrder(batch.pipeline_id, () => this.evaluate(batch.readings, true));
    },
  },
};

const CLOCK_WARN_EVERY_MS = 10_000;
let clockWarnedAt = 0;

/** Buffers series clocks to be written, the latest of each series. */
function keepClocks(pending: Map<string, SeriesClock>, clocks: SeriesClock[]): void {
  for (const c of clocks) {
    const key = `${c.monitor_id}\u0000${c.tag_id}`;
    const known = pending.get(key);
    if (!known || known.ts < c.ts) pending.set(key, c);
  }
}

export const LIVE_ACTIONS: AlertingActions = {
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
      const outcome = await this.evaluate(ctx.params.readings);
      return { evaluated: outcome.evaluated, opened: outcome.opened.length, closed: outcome.closed.length };
    },
  },
};

export const LIVE_METHODS: LiveMethods & ThisType<AlertingThis> = {
  describer() {
    return {
      monitors: async (ids) => [...(await resolveMonitors(this.broker, ids)).values()],
      gatewayDataType: async (id) => (await resolveGateway(this.broker, this.broker, id))?.data_type ?? null,
    };
  },

  /** `buffered`: the clocks of a batch that changed nothing are written with the next flush (the stream path). */
  async evaluate(readings: Reading[], buffered = false) {
    const sink = buffered
      ? (clocks: SeriesClock[], tx: Queryable | null) => {
          if (tx) return advanceClocks(tx, clocks);
          keepClocks(this.pendingClocks, clocks);
        }
      : undefined;
    const notices: NoticeSink = (tx, alert) => this.streams.stage(tx, STREAMS.alerts, alert.alert_id, alert, alert.watcher_id);
    const outcome = await evaluateBatch(this.tx(), readings, this.describer(), notices, sink);
    for (const a of outcome.opened) countDomain(this.broker, "alerts.opened", { severity: a.severity });
    for (const a of outcome.closed) countDomain(this.broker, "alerts.closed", { severity: a.severity });
    // Committed: publish the notices now rather than at the outbox's next tick.
    if (outcome.opened.length) this.streams.flush();
    return outcome;
  },

  async flushClocks() {
    if (this.pendingClocks.size === 0) return;
    const clocks = [...this.pendingClocks.values()];
    this.pendingClocks = new Map();
    await advanceClocks(this.db, clocks).catch((err: Error) => {
      // The database away: kept for the next flush (a later clock of a series that came meanwhile wins), not dropped.
      keepClocks(this.pendingClocks, clocks);
      // Flushed every CLOCK_FLUSH_MS: one line per outage's stretch, not five a second.
      if (Date.now() - clockWarnedAt < CLOCK_WARN_EVERY_MS) return;
      clockWarnedAt = Date.now();
      this.logger.warn("series clocks not written; kept for the next flush:", err.message);
    });
  },

  async inPipelineOrder<T>(pipeline_id: string, work: () => Promise<T>): Promise<T> {
    const previous = this.pipelineTails.get(pipeline_id) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.catch(() => undefined);
    this.pipelineTails.set(pipeline_id, tail);
    try {
      return await run;
    } finally {
      if (this.pipelineTails.get(pipeline_id) === tail) this.pipelineTails.delete(pipeline_id);
    }
  },

  tx() {
    return transactional(this.db);
  },
};
