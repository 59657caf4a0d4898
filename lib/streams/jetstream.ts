/**
 * The cluster's stream adapter: NATS JetStream through the `nats` client's JetStream API.
 *
 * Names carry the namespace, so clusters (and test runs) sharing one server never meet:
 *   stream  `<ns>_<stream>`, subjects `<ns>.stream.<stream>.p<k>` (k: the message key's partition)
 *   dead letters: stream `<ns>_<stream>_dlq`, subject `<ns>.dlq.<stream>.<group>`
 *   per group and partition a durable pull consumer `<ns>_<group>_p<k>` filtered on its subject,
 *   with max_ack_pending 1: the server hands a partition's next message out only once the previous
 *   one is acked or terminated, so a key's messages are handled in order by whichever replica
 *   pulls, and every replica pulls from every partition (parallel across keys). Explicit ack,
 *   deliver all, no server max_deliver: the adapter counts deliveries itself so that the last
 *   failure can go to the dead-letter subject with its error before the message is terminated;
 *   a NAK with delay keeps the message pending, so its partition waits for it (and only it).
 * Before partitions the stream's one subject was `<ns>.stream.<stream>` with one consumer
 * `<ns>_<group>` per group: the stream keeps that subject beside the wildcard, and a group whose
 * old consumer still exists reads it too, so what an older release published is still handled.
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
  type ConsumerConfig,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from "nats";
import { redactUrl, splitNatsUrls, type NatsAuth } from "../bus-credentials";
import { isTransient } from "../errors";
import { DEFAULT_PARTITIONS, partitionOf } from "./partitions";
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
/** How long a consumer's setup is tried again while JetStream is not answering yet. */
const SETUP_PATIENCE_MS = 30_000;
const safe = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, "_");
const encoder = new TextEncoder();

/**
 * How long a delivery may go unacknowledged before the server offers it again. A handler at work
 * tells the server so every third of it (m.working()), so this bounds only a delivery or an ack
 * lost on the way (a NATS node of a cluster dying with it): its partition waits this long, not 30 s.
 */
export const DEFAULT_ACK_WAIT_MS = 10_000;

/** Back-off before a failed message is offered again: 1 s, 2 s, 4 s ... at most 30 s. */
export const redeliveryDelayMs = (deliveries: number): number => Math.min(30000, 1000 * 2 ** Math.max(0, deliveries - 1));

/** The longest wait between deliveries of a message that failed only because the database was away: it goes through soon after it is back. */
export const TRANSIENT_RETRY_MAX_MS = 5000;

/**
 * Whether a failed delivery goes to the dead-letter subject. A message that failed because the
 * database (or a service, for the same reason) was away says nothing against the message: it is
 * offered again, however long the outage, rather than given up after `maxDeliveries` failures
 * that would all have been the outage.
 */
export function givesUp(err: unknown, deliveries: number, maxDeliveries: number): boolean {
  return deliveries >= maxDeliveries && !isTransient(err);
}

/** The wait before a failed message is offered again. */
export const retryDelayMs = (err: unknown, deliveries: number): number =>
  isTransient(err) ? Math.min(TRANSIENT_RETRY_MAX_MS, redeliveryDelayMs(deliveries)) : redeliveryDelayMs(deliveries);

export function jetStreamNames(namespace: string, stream: string) {
  return {
    stream: safe(`${namespace}_${stream}`),
    /** The subject before partitions: still bound to the stream, read by a group's legacy consumer. */
    subject: `${namespace}.stream.${stream}`,
    subjects: [`${namespace}.stream.${stream}`, `${namespace}.stream.${stream}.>`],
    partitionSubject: (k: number) => `${namespace}.stream.${stream}.p${k}`,
    dlqStream: safe(`${namespace}_${stream}_dlq`),
    dlqSubject: (group: string) => `${namespace}.dlq.${stream}.${safe(group)}`,
    /** The group's one consumer before partitions. */
    durable: (group: string) => safe(`${namespace}_${group}`),
    partitionDurable: (group: string, k: number) => safe(`${namespace}_${group}_p${k}`),
  };
}

/**
 * At most `size` handlers of one subscription at once. A message waiting for a slot tells the
 * server it is being worked on, so waiting is not mistaken for a stuck handler.
 */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  async acquire(m: JsMsg, ackWaitMs: number): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    const beat = setInterval(() => m.working(), Math.max(100, ackWaitMs / 3));
    try {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } finally {
      clearInterval(beat);
    }
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

export class JetStreamAdapter implements StreamAdapter {
  readonly kind = "jetstream" as const;
  private nc?: NatsConnection;
  private js?: JetStreamClient;
  private jsm?: JetStreamManager;
  private readonly ensured = new Map<string, Promise<void>>();
  private readonly subscriptions = new Set<Subscription>();
  private readonly scaleWarned = new Set<string>();
  private singleServer = false;

  constructor(
    private readonly servers: string,
    private readonly settings: StreamSettings,
    private readonly logger: Logger,
    /** The node's NATS user (the transporter's); undefined: the credentials `servers` carries, if any. */
    private readonly auth?: NatsAuth,
  ) {}

  async start(): Promise<void> {
    // Every node of a NATS cluster, so the connection moves to another when its node dies.
    const { servers, auth } = splitNatsUrls(this.servers);
    const credentials = this.auth ?? auth;
    this.nc = await connect({
      servers,
      ...(credentials ? { user: credentials.user, pass: credentials.pass } : {}),
      name: `${this.settings.namespace}-streams`,
      maxReconnectAttempts: -1,
      ...NATS_LIVENESS,
    });
    const nc = this.nc;
    this.js = nc.jetstream();
    this.jsm = await this.patiently("JetStream", () => nc.jetstreamManager());
    if ((this.settings.replicas ?? 1) > 1 && !this.nc.info?.cluster) {
      this.singleServer = true;
      this.logger.warn(`NATS at ${redactUrl(this.servers)} is a single server, not a cluster: streams keep 1 replica, not the ${this.settings.replicas} of STREAM_REPLICAS`);
    }
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
        this.addStream(names.stream, names.subjects),
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
      num_replicas: this.replicas,
    };
    let existing;
    try {
      existing = await jsm.streams.info(name);
    } catch {
      existing = undefined;
    }
    if (existing) {
      // A stream made before partitions has the bare subject only: bind the wildcard too.
      const missing = subjects.filter((s) => !existing.config.subjects?.includes(s));
      if (missing.length) {
        await jsm.streams.update(name, { ...existing.config, subjects: [...(existing.config.subjects ?? []), ...missing] }).catch(async (err) => {
          // Another replica updated it first.
          const now = await jsm.streams.info(name);
          if (subjects.some((s) => !now.config.subjects?.includes(s))) throw err;
        });
      }
      if ((existing.config.num_replicas || 1) !== this.replicas) await this.scale(name);
    } else {
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

  /** STREAM_REPLICAS; 1 on a server that is not part of a cluster (which refuses more). */
  private get replicas(): number {
    return this.singleServer ? 1 : Math.max(1, this.settings.replicas ?? 1);
  }

  /**
   * Brings an existing stream to the configured number of replicas (JetStream changes it in
   * place). A stream it cannot scale (too few nodes up to place the copies) keeps working as it
   * is: said once, and the start goes on.
   */
  private async scale(name: string): Promise<void> {
    const { jsm } = this.client();
    try {
      const now = await jsm.streams.info(name);
      if ((now.config.num_replicas || 1) === this.replicas) return;
      await jsm.streams.update(name, { ...now.config, num_replicas: this.replicas });
    } catch (err) {
      const now = await jsm.streams.info(name).catch(() => undefined);
      // Another process of the cluster scaled it first.
      if (now && (now.config.num_replicas || 1) === this.replicas) return;
      this.warnScale(name, now?.config.num_replicas, err);
    }
  }

  private warnScale(name: string, replicas: number | undefined, err: unknown): void {
    if (this.scaleWarned.has(name)) return;
    this.scaleWarned.add(name);
    this.logger.warn(`stream ${name} keeps ${replicas ?? "its"} replica(s), not the ${this.replicas} of STREAM_REPLICAS: ${errorText(err)}`);
  }

  private get partitions(): number {
    return Math.max(1, this.settings.partitions ?? DEFAULT_PARTITIONS);
  }

  async publish(stream: string, messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.ensureStream(stream);
    const { js } = this.client();
    const names = jetStreamNames(this.settings.namespace, stream);
    // A partition's messages one after the other, each once the previous is stored; partitions at
    // once. Pipelined, a publish lost with a dying NATS node could fail while the next, sent after
    // the reconnect, was stored: the failed one, staged again, would then come after it, and its
    // consumers (the evaluator ignores readings older than their series' last) would skip it.
    const chains = new Map<number, OutgoingMessage[]>();
    for (const m of messages) {
      const k = partitionOf(m.key, this.partitions);
      const chain = chains.get(k);
      if (chain) chain.push(m);
      else chains.set(k, [m]);
    }
    const published = await Promise.allSettled(
      [...chains].map(async ([k, chain]) => {
        for (const m of chain) await js.publish(names.partitionSubject(k), encoder.encode(m.payload), { msgID: m.id });
      }),
    );
    const failed = published.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
  }

  /**
   * The start and a consumer's setup, tried again while a NATS cluster settles: for a moment after
   * a node dies or joins, or a stream is made or scaled, JetStream answers "temporarily
   * unavailable", "stream not found" or nothing at all. A process starting then waits for it
   * rather than failing its start.
   */
  private async patiently<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + SETUP_PATIENCE_MS;
    for (let delay = 250; ; delay = Math.min(2000, delay * 2)) {
      try {
        return await fn();
      } catch (err) {
        if (Date.now() + delay > deadline) throw err;
        this.logger.warn(`${what}: ${errorText(err)}; trying again in ${delay} ms`);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /** The consumer, made if missing (replicas racing each other both succeed), its ack wait brought to the one asked. */
  private async ensureConsumer(stream: string, config: Partial<ConsumerConfig> & { durable_name: string }): Promise<void> {
    const { jsm } = this.client();
    const existing = await jsm.consumers.info(stream, config.durable_name).catch(async () => {
      await jsm.consumers.add(stream, config).catch(async (err) => {
        await jsm.consumers.info(stream, config.durable_name).catch(() => {
          throw err;
        });
      });
      return undefined;
    });
    if (existing && config.ack_wait !== undefined && existing.config.ack_wait !== config.ack_wait) {
      await jsm.consumers
        .update(stream, config.durable_name, { ack_wait: config.ack_wait })
        .catch((err: unknown) => this.logger.warn(`consumer ${config.durable_name}: its ack wait stays as it was: ${errorText(err)}`));
    }
  }

  async subscribe(stream: string, group: string, handler: StreamHandler, opts: SubscribeOptions = {}): Promise<Subscription> {
    const { js, jsm } = this.client();
    const names = jetStreamNames(this.settings.namespace, stream);
    const ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    const durables = Array.from({ length: this.partitions }, (_, k) => names.partitionDurable(group, k));
    const consumers = await this.patiently(`stream ${stream}/${group}`, async () => {
      await this.ensureStream(stream);
      await Promise.all(
        durables.map((durable, k) =>
          this.ensureConsumer(names.stream, {
            durable_name: durable,
            ack_policy: AckPolicy.Explicit,
            deliver_policy: DeliverPolicy.All,
            filter_subject: names.partitionSubject(k),
            ack_wait: nanos(ackWaitMs),
            // One unacked message per partition: the order of a key across every replica.
            max_ack_pending: 1,
          }),
        ),
      );
      // The group's consumer from before partitions, if it exists, still has the old subject's messages.
      const legacy = await jsm.consumers.info(names.stream, names.durable(group)).then(
        () => names.durable(group),
        () => undefined,
      );
      const all = legacy ? [...durables, legacy] : durables;
      return Promise.all(all.map(async (durable) => ({ durable, consumer: await js.consumers.get(names.stream, durable) })));
    });
    const slots = new Slots(Math.max(1, opts.concurrency ?? 1));
    const feeds: ConsumerMessages[] = [];
    const loops: Promise<void>[] = [];
    for (const { durable, consumer } of consumers) {
      const messages = await consumer.consume({ max_messages: 2 });
      feeds.push(messages);
      loops.push(
        (async () => {
          // One message at a time per partition: the server would not hand out the next one anyway.
          for await (const m of messages) {
            await slots.acquire(m, ackWaitMs);
            try {
              await this.deliver(stream, group, m, handler, opts.maxDeliveries ?? this.settings.maxDeliveries, ackWaitMs);
            } finally {
              slots.release();
            }
          }
        })().catch((err: unknown) => this.logger.error(`stream ${stream}/${group} consumer ${durable} stopped:`, err)),
      );
    }
    const subscription: Subscription = {
      close: async () => {
        this.subscriptions.delete(subscription);
        await Promise.all(feeds.map((f) => f.close().catch(() => undefined)));
        await Promise.all(loops);
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  private async deliver(stream: string, group: string, m: JsMsg, handler: StreamHandler, maxDeliveries: number, ackWaitMs: number): Promise<void> {
    const deliveries = m.info.redeliveryCount;
    const id = m.headers?.get("Nats-Msg-Id") || String(m.seq);
    let data: unknown;
    // A long handler is not a lost delivery: the server hears from it within every ack wait.
    const beat = setInterval(() => m.working(), Math.max(100, ackWaitMs / 3));
    try {
      data = JSON.parse(m.string());
      await handler({ id, stream, data, deliveries, publishedAt: Math.floor(m.info.timestampNanos / 1e6) });
      clearInterval(beat);
      m.ack();
    } catch (err) {
      clearInterval(beat);
      if (givesUp(err, deliveries, maxDeliveries)) {
        const letter: DeadLetter = { id, stream, group, deliveries, error: errorText(err), data: data ?? m.string() };
        const h = headers();
        h.set("Nats-Msg-Id", `${id}:${group}`);
        try {
          await this.client().js.publish(jetStreamNames(this.settings.namespace, stream).dlqSubject(group), encoder.encode(JSON.stringify(letter)), {
            headers: h,
          });
          // A bare +TERM: nats-server 2.9 does not know `+TERM <reason>` and would ignore it, leaving
          // the message pending (and, with max_ack_pending 1, its partition stuck) until ack_wait.
          m.term();
          this.logger.warn(`stream ${stream}/${group}: message ${id} dead-lettered after ${deliveries} deliveries: ${letter.error}`);
        } catch (dlqErr) {
          this.logger.error(`stream ${stream}/${group}: could not dead-letter ${id}`, dlqErr);
          m.nak(redeliveryDelayMs(deliveries));
        }
      } else {
        m.nak(retryDelayMs(err, deliveries));
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

/**
 * How a NATS client finds its server gone when the socket stays open (a frozen node, a machine
 * lost without a reset): it pings every 4 s and gives the connection up when a third ping would
 * go out with two unanswered, then reconnects to another node of the cluster, waiting at most
 * 4 s for a node to greet it (a frozen node's kernel still accepts the connection). About 12-20 s
 * in all, where the client's defaults (2-minute pings, 20 s to connect) took minutes. Both the
 * transporter's and the streams' connections.
 */
export const NATS_LIVENESS = { pingInterval: 4000, maxPingOut: 2, timeout: 4000 };

/**
 * `nats://a:4222,nats://b:4222` (TRANSPORTER's form) as the list the `nats` client takes (it reads
 * a string as one server), without the credentials a URL may carry: those go as user and pass.
 */
export function natsServerList(servers: string): string[] {
  return splitNatsUrls(servers).servers;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
