/**
 * The durable stream layer's contract. A stream is an append-only log of messages under a name
 * (`readings`, `waveforms`, ...); each consuming service reads it through a durable consumer
 * group of its own, acks what it handled, gets again what it did not, and after
 * `maxDeliveries` failed deliveries the message moves to the group's dead-letter subject.
 *
 * Two adapters implement it: NATS JetStream (lib/streams/jetstream.ts) in the cluster and a
 * PostgreSQL-backed log (lib/streams/pg.ts) for the embedded one-process default. Delivery is
 * at least once in both, so consumers are idempotent by message and item ids.
 *
 * Order. A message may carry a key (the readings stream's is the pipeline id). Within one group,
 * messages with the same key are handled one at a time and in publish order, whichever replica
 * takes them, redeliveries included: a message that fails holds back the messages behind it on
 * its partition until it succeeds or, after `maxDeliveries`, is dead-lettered. A message without
 * a key goes to partition 0, so keyless messages keep one order among themselves (the stream's
 * order, as before keys). JetStream spreads keys over `partitions` partitions, each handled by
 * one replica at a time, so different keys run in parallel; the PostgreSQL log hands a group's
 * messages over one at a time in stream order (a total order, so the per-key order holds too).
 */

/** One message as a consumer sees it. */
export interface StreamMessage<T = unknown> {
  /** The producer's id of the message (an outbox row's `msg_id`); stable across redeliveries. */
  id: string;
  stream: string;
  data: T;
  /** 1 on the first delivery. */
  deliveries: number;
  /** Epoch ms at which the stream stored it. */
  publishedAt: number;
}

export type StreamHandler = (message: StreamMessage) => Promise<void>;

export interface SubscribeOptions {
  /**
   * Messages this replica handles at once (JetStream: partitions at once, each one message at a
   * time; the PostgreSQL log delivers one at a time whatever it is told).
   */
  concurrency?: number;
  /** How long a delivery may take before the stream delivers it again. */
  ackWaitMs?: number;
  /**
   * Failed deliveries before a message is dead-lettered (default: the stream's `maxDeliveries`);
   * a failure because the database is away is not counted (jetstream.ts: givesUp).
   * `Infinity` for messages that must never be given up on (alert notices): they are retried
   * with capped back-off, holding back their partition, until the consumer can take them.
   */
  maxDeliveries?: number;
}

export interface Subscription {
  /** Stops delivering; the durable group's position stays, so a later subscribe resumes there. */
  close(): Promise<void>;
}

export interface DeadLetter {
  id: string;
  stream: string;
  group: string;
  deliveries: number;
  error: string;
  data: unknown;
}

export interface OutgoingMessage {
  id: string;
  /** JSON text of the message's data. */
  payload: string;
  /**
   * What the order is kept for: messages with the same key reach each group in publish order.
   * Without one the message goes to partition 0 (ordered with the other keyless messages).
   */
  key?: string | null;
}

export interface StreamAdapter {
  readonly kind: "jetstream" | "pg";
  start(): Promise<void>;
  stop(): Promise<void>;
  /**
   * Resolves once every message is stored durably by the stream (JetStream ack / committed row).
   * Republishing an id is a no-op. A key's messages are stored in the array's order, each only
   * once the one before it is (a failed one stops those after it).
   */
  publish(stream: string, messages: OutgoingMessage[]): Promise<void>;
  subscribe(stream: string, group: string, handler: StreamHandler, opts?: SubscribeOptions): Promise<Subscription>;
  /** Dead letters of one group (tests, operators). */
  deadLetters(stream: string, group: string, limit?: number): Promise<DeadLetter[]>;
  /**
   * False while the stream holds `maxBytes` (or refused a publish for it): its producers stage
   * nothing more (ingestion answers 503) until its groups have taken enough. Answers at once what
   * was last looked up (lib/streams/room.ts), never waiting on the stream. An adapter without it
   * (a test's wrapper) is never full.
   */
  hasRoom?(stream: string): Promise<boolean>;
}

export interface StreamSettings {
  /** Carried by stream, subject and consumer names so clusters sharing a server never meet. */
  namespace: string;
  maxDeliveries: number;
  maxAgeS: number;
  /**
   * The most bytes a stream (and, apart, the outbox feeding it) holds (STREAM_MAX_BYTES); 0 or
   * unset: no bound.
   */
  maxBytes?: number;
  /**
   * The consumer groups of each stream (default STREAM_GROUPS, lib/streams/groups.ts): made with
   * the stream, and a message is kept until all of them have taken it. A stream not listed keeps
   * every message until `maxAgeS`.
   */
  groups?: Readonly<Record<string, readonly string[]>>;
  /**
   * JetStream partitions per stream (default 16, STREAM_PARTITIONS): the most keys a group
   * handles at once across its replicas. Publishers and consumers must agree; changing it moves
   * keys to other partitions, so change it with the streams drained.
   */
  partitions?: number;
  /**
   * JetStream copies of each stream and its dead-letter stream (default 1, STREAM_REPLICAS): 3 on
   * a 3-node NATS cluster, so a node's death loses nothing and a new leader takes over. A stream
   * made with another number is updated to it at start.
   */
  replicas?: number;
}
