/**
 * The durable stream layer's contract. A stream is an append-only log of messages under a name
 * (`readings`, `waveforms`, ...); each consuming service reads it through a durable consumer
 * group of its own, acks what it handled, gets again what it did not, and after
 * `maxDeliveries` failed deliveries the message moves to the group's dead-letter subject.
 *
 * Two adapters implement it: NATS JetStream (lib/streams/jetstream.ts) in the cluster and a
 * PostgreSQL-backed log (lib/streams/pg.ts) for the embedded one-process default. Delivery is
 * at least once in both, so consumers are idempotent by message and item ids.
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
  /** Messages handed to the handler without waiting for earlier ones' acks (JetStream max_ack_pending). */
  concurrency?: number;
  /** How long a delivery may take before the stream delivers it again. */
  ackWaitMs?: number;
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
}

export interface StreamAdapter {
  readonly kind: "jetstream" | "pg";
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Resolves once every message is stored durably by the stream (JetStream ack / committed row). Republishing an id is a no-op. */
  publish(stream: string, messages: OutgoingMessage[]): Promise<void>;
  subscribe(stream: string, group: string, handler: StreamHandler, opts?: SubscribeOptions): Promise<Subscription>;
  /** Dead letters of one group (tests, operators). */
  deadLetters(stream: string, group: string, limit?: number): Promise<DeadLetter[]>;
}

export interface StreamSettings {
  /** Carried by stream, subject and consumer names so clusters sharing a server never meet. */
  namespace: string;
  maxDeliveries: number;
  maxAgeS: number;
}
