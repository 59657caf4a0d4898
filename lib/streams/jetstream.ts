/**
 * The cluster's stream adapter: NATS JetStream through the `nats` client's JetStream API.
 *
 * Names carry the namespace, so clusters (and test runs) sharing one server never meet:
 *   stream  `<ns>_<stream>`          subject `<ns>.stream.<stream>`
 *   dead letters: stream `<ns>_<stream>_dlq`, subject `<ns>.dlq.<stream>.<group>`
 *   durable pull consumer per group `<ns>_<group>` (explicit ack, deliver all, no server max_deliver:
 *   the adapter counts deliveries itself so that the last failure can go to the dead-letter subject
 *   with its error before the message is terminated).
 * Publishing sets `Nats-Msg-Id` to the message id, so an outbox row republished after a crash
 * inside the duplicate window is stored once.
 */
import {
  AckPolicy,
  DeliverPolicy,
  RetentionPolicy,
  StorageType,
  connect,
  headers,
  nanos,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from "nats";
import type {
  DeadLetter,
  OutgoingMessage,
  StreamAdapter,
  StreamHandler,
  StreamSettings,
  SubscribeOptions,
  Subscription,
} from "./types";

interface Logger {
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;
const safe = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, "_");
const encoder = new TextEncoder();

/** Back-off before a failed message is offered again: 1 s, 2 s, 4 s ... at most 30 s. */
export const redeliveryDelayMs = (deliveries: number): number => Math.min(30000, 1000 * 2 ** Math.max(0, deliveries - 1));

export function jetStreamNames(namespace: string, stream: string) {
  return {
    stream: safe(`${namespace}_${stream}`),
    subject: `${namespace}.stream.${stream}`,
    dlqStream: safe(`${namespace}_${stream}_dlq`),
    dlqSubject: (group: string) => `${namespace}.dlq.${stream}.${safe(group)}`,
    durable: (group: string) => safe(`${namespace}_${group}`),
  };
}

export class JetStreamAdapter implements StreamAdapter {
  readonly kind = "jetstream" as const;
  private nc?: NatsConnection;
  private js?: JetStreamClient;
  private jsm?: JetStreamManager;
  private readonly ensured = new Map<string, Promise<void>>();
  private readonly subscriptions = new Set<Subscription>();

  constructor(
    private readonly servers: string,
    private readonly settings: StreamSettings,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.nc = await connect({ servers: this.servers, name: `${this.settings.namespace}-streams`, maxReconnectAttempts: -1 });
    this.js = this.nc.jetstream();
    this.jsm = await this.nc.jetstreamManager();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    if (this.nc && !this.nc.isClosed()) await this.nc.drain();
  }

  private client(): { js: JetStreamClient; jsm: JetStreamManager } {
    if (!this.js || !this.jsm) throw new Error("stream adapter not started");
    return { js: this.js, jsm: this.jsm };
  }

  /** Creates the stream and its dead-letter stream once per process; replicas racing each other both succeed. */
  private ensureStream(stream: string): Promise<void> {
    let ready = this.ensured.get(stream);
    if (!ready) {
      const names = jetStreamNames(this.settings.namespace, stream);
      ready = Promise.all([
        this.addStream(names.stream, [names.subject]),
        this.addStream(names.dlqStream, [`${this.settings.namespace}.dlq.${stream}.>`]),
      ]).then(() => undefined);
      ready.catch(() => this.ensured.delete(stream));
      this.ensured.set(stream, ready);
    }
    return ready;
  }

  private async addStream(name: string, subjects: string[]): Promise<void> {
    const { jsm } = this.client();
    const config = {
      name,
      subjects,
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      max_age: nanos(this.settings.maxAgeS * 1000),
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
      num_replicas: 1,
    };
    try {
      await jsm.streams.info(name);
    } catch {
      try {
        await jsm.streams.add(config);
      } catch (err) {
        // Another replica created it between our info and add.
        await jsm.streams.info(name).catch(() => {
          throw err;
        });
      }
    }
  }

  async publish(stream: string, messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.ensureStream(stream);
    const { js } = this.client();
    const subject = jetStreamNames(this.settings.namespace, stream).subject;
    // Published together and awaited together: the acks come back pipelined.
    await Promise.all(messages.map((m) => js.publish(subject, encoder.encode(m.payload), { msgID: m.id })));
  }

  async subscribe(stream: string, group: string, handler: StreamHandler, opts: SubscribeOptions = {}): Promise<Subscription> {
    await this.ensureStream(stream);
    const { js, jsm } = this.client();
    const names = jetStreamNames(this.settings.namespace, stream);
    const durable = names.durable(group);
    const config = {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: names.subject,
      ack_wait: nanos(opts.ackWaitMs ?? 30000),
      max_ack_pending: 1000,
    };
    await jsm.consumers.info(names.stream, durable).catch(async () => {
      await jsm.consumers.add(names.stream, config).catch(async (err) => {
        await jsm.consumers.info(names.stream, durable).catch(() => {
          throw err;
        });
      });
    });
    const consumer = await js.consumers.get(names.stream, durable);
    const concurrency = Math.max(1, opts.concurrency ?? 1);
    const messages: ConsumerMessages = await consumer.consume({ max_messages: Math.max(16, concurrency * 2) });
    const inFlight = new Set<Promise<void>>();
    const loop = (async () => {
      for await (const m of messages) {
        const p = this.deliver(stream, group, m, handler).finally(() => inFlight.delete(p));
        inFlight.add(p);
        if (inFlight.size >= concurrency) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
    })().catch((err: unknown) => this.logger.error(`stream ${stream}/${group} consumer stopped:`, err));
    const subscription: Subscription = {
      close: async () => {
        this.subscriptions.delete(subscription);
        await messages.close().catch(() => undefined);
        await loop;
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  private async deliver(stream: string, group: string, m: JsMsg, handler: StreamHandler): Promise<void> {
    const deliveries = m.info.redeliveryCount;
    const id = m.headers?.get("Nats-Msg-Id") || String(m.seq);
    let data: unknown;
    try {
      data = JSON.parse(m.string());
      await handler({ id, stream, data, deliveries, publishedAt: Math.floor(m.info.timestampNanos / 1e6) });
      m.ack();
    } catch (err) {
      if (deliveries >= this.settings.maxDeliveries) {
        const letter: DeadLetter = { id, stream, group, deliveries, error: errorText(err), data: data ?? m.string() };
        const h = headers();
        h.set("Nats-Msg-Id", `${id}:${group}`);
        try {
          await this.client().js.publish(jetStreamNames(this.settings.namespace, stream).dlqSubject(group), encoder.encode(JSON.stringify(letter)), {
            headers: h,
          });
          m.term(`dead-lettered after ${deliveries} deliveries`);
          this.logger.warn(`stream ${stream}/${group}: message ${id} dead-lettered after ${deliveries} deliveries: ${letter.error}`);
        } catch (dlqErr) {
          this.logger.error(`stream ${stream}/${group}: could not dead-letter ${id}`, dlqErr);
          m.nak(redeliveryDelayMs(deliveries));
        }
      } else {
        m.nak(redeliveryDelayMs(deliveries));
      }
    }
  }

  async deadLetters(stream: string, group: string, limit = 100): Promise<DeadLetter[]> {
    await this.ensureStream(stream);
    const { js } = this.client();
    const names = jetStreamNames(this.settings.namespace, stream);
    // One subject as a string: nats-server 2.9 knows `filter_subject`, not the 2.10 list.
    const consumer = await js.consumers.get(names.dlqStream, { filterSubjects: names.dlqSubject(group) });
    const out: DeadLetter[] = [];
    const batch = await consumer.fetch({ max_messages: limit, expires: 1000 });
    for await (const m of batch) {
      out.push(JSON.parse(m.string()) as DeadLetter);
      if (m.info.pending === 0) break;
    }
    return out;
  }

  /** Deletes this namespace's streams (tests clean up after themselves). */
  async destroy(streams: string[]): Promise<void> {
    const { jsm } = this.client();
    for (const s of streams) {
      const names = jetStreamNames(this.settings.namespace, s);
      await jsm.streams.delete(names.stream).catch(() => undefined);
      await jsm.streams.delete(names.dlqStream).catch(() => undefined);
    }
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
