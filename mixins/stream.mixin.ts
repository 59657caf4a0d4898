/**
 * The stream mixin: durable streams for facts that must not be lost (readings, waveforms, alert
 * openings). One API over two adapters (lib/streams): NATS JetStream when TRANSPORTER is
 * nats://…, a PostgreSQL log in the embedded default. Delivery is at least once, with explicit
 * acks, redelivery with back-off and a dead-letter subject after STREAM_MAX_DELIVERIES failed
 * deliveries; in order per key across all the replicas of a group (messages staged with the same
 * key, e.g. one pipeline's readings batches, are handled one at a time in the order staged), and
 * keyless messages in order among themselves (lib/streams/types.ts).
 *
 * Consuming. Declare the streams a service reads under `streams`; each entry names the durable
 * group (one per consuming service: every replica of the service shares it, so each message is
 * handled by one of them), and a handler that receives the message's data. Returning acks the
 * message; throwing gets it delivered again later. Handlers must be idempotent: after a crash or
 * a timeout a message can come twice (readings carry stable ids: `readingId(batch, i)`).
 *
 * The publisher's contract maps its streams to their messages (pipelines: `PipelineStreams`);
 * typed with it and the service's `this`, a handler needs no cast:
 *
 *   import { StreamMixin, type StreamConsumers } from "../../mixins/stream.mixin";
 *   import type { PipelineStreams } from "../pipelines/contract";
 *   const streams: StreamConsumers<AlertingThis, PipelineStreams> = {
 *     readings: {
 *       group: "alerting",
 *       async handler(batch, message) { ... },   // this: AlertingThis, batch: ReadingBatch
 *     },
 *   };
 *   export default { name: "alerting", mixins: [StreamMixin(), DbMixin({ schema: "alerting", migrations })], streams, ... };
 *
 * A consumer that was stopped resumes where its group stopped. A stream keeps a message until
 * every group of it has taken it (at most STREAM_MAX_AGE_S): the groups are declared once, in
 * lib/streams/groups.ts, and made with the stream, so a service reading a stream adds its group
 * there too (a group not listed starts at the oldest message the stream still holds).
 *
 * Producing. `StreamMixin({ outbox: true })` and OUTBOX_SQL in the service's migrations: stage a
 * message in the same transaction as the rows it announces, then `flush()`; a drainer publishes
 * staged messages (also those a crash left behind) and deletes them once the stream stored them.
 * While the stream, or the outbox's part of it, holds STREAM_MAX_BYTES, `stage` throws 503
 * `Service unavailable` and the transaction rolls back (lib/streams/outbox.ts): nothing is
 * accepted that could not be kept.
 *
 *   await this.db.transaction(async (tx) => {
 *     await insertReadings(tx, rows);
 *     await this.streams.stage(tx, "readings", batch.batch_id, batch, batch.pipeline_id);
 *   });
 *   this.streams.flush();
 *
 * The outbox table comes from OUTBOX_SQL then OUTBOX_KEY_SQL in the service's migrations.
 * `StreamMixin({ outbox: true, batched: ["audit"] })` publishes each drain's messages of the named
 * streams as one message, the JSON array of their data (lib/streams/outbox.ts); their consumers
 * take an array as well as one message's data.
 *
 * List StreamMixin before DbMixin in `mixins`, so the database opens before and closes after it.
 */
import type { Service, ServiceSchema } from "moleculer";
import type { DataSource } from "typeorm";
import { config } from "../lib/config";
import { createStreamAdapter, Outbox, type StagingTx, type StreamAdapter, type StreamMessage, type Subscription } from "../lib/streams";

export interface StreamConsumer<This = Service, T = unknown> {
  /** The durable consumer group: the consuming service's name. */
  group: string;
  /**
   * Messages this replica handles at once (default 1), never two of one key (JetStream: one per
   * partition). The PostgreSQL log delivers one at a time, in order, whatever it is told.
   */
  concurrency?: number;
  /** How long one delivery may take before the stream offers it again (default 30 s). */
  ackWaitMs?: number;
  /** Failed deliveries before dead-lettering (SubscribeOptions.maxDeliveries). */
  maxDeliveries?: number;
  /** Called with the service as `this` (the mixin binds it). */
  handler(this: This, data: T, message: StreamMessage<T>): Promise<void> | void;
}

/**
 * The streams a service reads, by name: `This` is the service's `this`, `S` maps stream names to
 * their messages (the publisher's contract), so each handler gets its stream's message type.
 */
export type StreamConsumers<This = Service, S = Record<string, unknown>> = { [K in keyof S]?: StreamConsumer<This, S[K]> };

/** `S` maps the streams a producer publishes to their messages (its contract): `stage` checks both. */
export interface StreamClient<S = Record<string, unknown>> {
  readonly adapter: StreamAdapter;
  /**
   * Writes a message into the outbox inside the caller's transaction (producers only). Messages
   * with the same `key` reach every consumer group in the order staged; without one, in order with
   * the other keyless messages of the stream (and with no parallelism among them).
   */
  stage<K extends keyof S & string>(tx: StagingTx, stream: K, id: string, data: S[K], key?: string | null): Promise<void>;
  /** Publishes what is staged now rather than at the next tick. */
  flush(): void;
  /** Resolves once nothing staged is left unpublished (tests, benchmarks). */
  drained(): Promise<void>;
}

export interface StreamMixinOptions {
  /** The service publishes through an outbox table (OUTBOX_SQL in its migrations). */
  outbox?: boolean;
  /** How often the drainer looks for staged messages it was not told about. */
  drainIntervalMs?: number;
  /**
   * Streams whose staged messages a drain publishes together as one message, the JSON array of
   * their data in the order staged (OutboxOptions.batched): for streams of many small messages
   * (the audit trail's entries) whose consumers take an array. Every producer of such a stream
   * declares it; its consumers also take a single message's data (what was published before).
   */
  batched?: readonly string[];
}

interface StreamLocals {
  streams: StreamClient;
  db?: DataSource;
  streamSubscriptions: Subscription[];
  streamOutbox?: Outbox;
}

export function StreamMixin(opts: StreamMixinOptions = {}): Partial<ServiceSchema> {
  return {
    async started(this: Service) {
      const self = this as Service & StreamLocals;
      const adapter = createStreamAdapter(config(), this.logger);
      await adapter.start();
      const outbox = opts.outbox ? new Outbox(() => self.db, adapter, this.logger, { batched: opts.batched, maxBytes: config().streamMaxBytes }) : undefined;
      self.streamOutbox = outbox;
      self.streams = {
        adapter,
        async stage(tx, stream, id, data, key) {
          if (!outbox) throw new Error("StreamMixin({ outbox: true }) is needed to publish");
          await outbox.stage(tx, stream, id, data, key);
        },
        flush: () => outbox?.kick(),
        drained: async () => {
          await outbox?.flush();
        },
      };
      outbox?.start(opts.drainIntervalMs ?? 1000);
      self.streamSubscriptions = [];
      // Each service typed its consumers by its own `this` and the publisher's messages; here they are generic.
      const consumers: StreamConsumers = (this.schema as { streams?: StreamConsumers }).streams ?? {};
      for (const [stream, consumer] of Object.entries(consumers)) {
        if (!consumer) continue;
        const handler = consumer.handler.bind(this);
        const sub = await adapter.subscribe(stream, consumer.group, (m: StreamMessage) => Promise.resolve(handler(m.data, m)), {
          concurrency: consumer.concurrency,
          ackWaitMs: consumer.ackWaitMs,
          maxDeliveries: consumer.maxDeliveries,
        });
        self.streamSubscriptions.push(sub);
      }
    },

    async stopped(this: Service) {
      const self = this as Service & Partial<StreamLocals>;
      for (const sub of self.streamSubscriptions ?? []) await sub.close();
      await self.streamOutbox?.stop();
      await self.streams?.adapter.stop();
    },
  };
}
