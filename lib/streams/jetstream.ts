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
 *
 * The conveyor (docs/architecture.md, "The stream as a conveyor"). A stream with declared groups (lib/streams/groups.ts) has
 * interest retention: the server deletes a message once every consumer whose subject it matches
 * has acked (or terminated) it, and at most STREAM_MAX_AGE_S after. Each declared group's
 * partition consumers are made with the stream, before anything is published to it, so no
 * message finds a group without its consumer. It holds about STREAM_MAX_BYTES at most: hasRoom
 * says no once its bytes reach it (looked up in the background), so ingestion answers 503 and
 * the outbox keeps what it has. Not JetStream's own max_bytes: the server reserves a stream's
 * max_bytes of its storage when the stream is made, so a few namespaces of 1 GiB streams used up
 * a server's JetStream storage ("insufficient storage resources available") holding nothing; a
 * stream made with it has it taken off at start. A stream made
 * before, with limits retention, cannot be turned into one (JetStream cannot change a stream's
 * retention): it goes on as it is until every consumer of it has nothing pending, is then sealed
 * (a publish is refused and waits in the outbox), and once what came meanwhile is taken too, it
 * is deleted and made again as a conveyor, each step logged. Dead-letter streams keep limits
 * retention, bounded by age only: operators read them, no group takes from them, and they hold
 * only the rare message given up on.
 */
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
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
  type StreamConfig,
} from "nats";
import { redactUrl, splitNatsUrls, type NatsAuth } from "../bus-credentials";
import { isTransient } from "../errors";
import { groupsOf, undeclaredGroup } from "./groups";
import { DEFAULT_PARTITIONS, partitionOf } from "./partitions";
import { RoomCache } from "./room";
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
/** How often an old-kind stream is looked at for being drained (see the conveyor above). */
const REPLACE_CHECK_MS = 2000;
/** JetStream's error code for a publish past max_bytes with discard new. */
const MAXIMUM_BYTES_EXCEEDED = 10077;
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
  /** Per stream, this process's subscriptions' re-attachment, for after the stream was replaced. */
  private readonly reattach = new Map<string, Set<() => Promise<void>>>();
  /** Old-kind streams waiting to be replaced, with the timer that looks at them. */
  private readonly replacing = new Map<string, NodeJS.Timeout>();
  /** Streams that refused a publish for their size, until one is stored again. */
  private readonly refused = new Set<string>();
  private readonly rooms = new RoomCache((stream) => this.lookForRoom(stream));
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
    for (const timer of this.replacing.values()) clearInterval(timer);
    this.replacing.clear();
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    if (this.nc && !this.nc.isClosed()) await this.nc.drain();
  }

  private client(): { js: JetStreamClient; jsm: JetStreamManager } {
    if (!this.js || !this.jsm) throw new Error("stream adapter not started");
    return { js: this.js, jsm: this.jsm };
  }

  /**
   * Creates the stream, its dead-letter stream and its declared groups' consumers once per
   * process, the consumers before anything is published; replicas racing each other all succeed.
   */
  private ensureStream(stream: string): Promise<void> {
    let ready = this.ensured.get(stream);
    if (!ready) {
      const names = jetStreamNames(this.settings.namespace, stream);
      const groups = groupsOf(stream, this.settings.groups);
      ready = (async () => {
        await Promise.all([
          this.addStream(stream, names.stream, names.subjects, groups !== undefined),
          this.addStream(stream, names.dlqStream, [`${this.settings.namespace}.dlq.${stream}.>`], false),
        ]);
        await Promise.all((groups ?? []).flatMap((group) => this.partitionConsumers(stream, group, DEFAULT_ACK_WAIT_MS).map((c) => this.ensureConsumer(names.stream, c, false))));
      })();
      ready.catch(() => this.ensured.delete(stream));
      this.ensured.set(stream, ready);
    }
    return ready;
  }

  /** A group's durable consumer of each partition. */
  private partitionConsumers(stream: string, group: string, ackWaitMs: number): (Partial<ConsumerConfig> & { durable_name: string })[] {
    const names = jetStreamNames(this.settings.namespace, stream);
    return Array.from({ length: this.partitions }, (_, k) => ({
      durable_name: names.partitionDurable(group, k),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: names.partitionSubject(k),
      ack_wait: nanos(ackWaitMs),
      // One unacked message per partition: the order of a key across every replica.
      max_ack_pending: 1,
    }));
  }

  /** `conveyor`: interest retention (bounded by hasRoom, not by max_bytes: see above); else limits retention (every message until its age). */
  private streamConfig(name: string, subjects: string[], conveyor: boolean): Partial<StreamConfig> & { name: string } {
    return {
      name,
      subjects,
      storage: StorageType.File,
      retention: conveyor ? RetentionPolicy.Interest : RetentionPolicy.Limits,
      max_age: nanos(this.settings.maxAgeS * 1000),
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
      num_replicas: this.replicas,
    };
  }

  private async addStream(stream: string, name: string, subjects: string[], conveyor: boolean): Promise<void> {
    const { jsm } = this.client();
    const config = this.streamConfig(name, subjects, conveyor);
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
      if (conveyor && existing.config.retention !== RetentionPolicy.Interest) this.replaceWhenDrained(stream);
      else if (conveyor && ((existing.config.max_bytes ?? -1) !== -1 || existing.config.max_age !== config.max_age)) {
        // STREAM_MAX_AGE_S changed, or the stream was made with a max_bytes (its reservation given back): changed in place.
        const now = await jsm.streams.info(name);
        await jsm.streams
          .update(name, { ...now.config, max_age: config.max_age, max_bytes: -1, discard: DiscardPolicy.Old })
          .catch((err: unknown) => this.logger.warn(`stream ${name} keeps its bounds: ${errorText(err)}`));
      }
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

  /**
   * Looks at an old-kind stream every REPLACE_CHECK_MS until it is replaced by a conveyor (see
   * the conveyor above); until then it works as before.
   */
  private replaceWhenDrained(stream: string): void {
    if (this.replacing.has(stream)) return;
    const name = jetStreamNames(this.settings.namespace, stream).stream;
    this.logger.warn(`stream ${name} keeps every message (limits retention, made before the conveyor): it is replaced by one that keeps a message until every group has taken it, once its consumers have nothing pending`);
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      this.replaceIfDrained(stream)
        .then((done) => {
          if (done) {
            clearInterval(timer);
            this.replacing.delete(stream);
          }
        })
        .catch((err: unknown) => this.logger.warn(`stream ${name}: its replacement waits: ${errorText(err)}`))
        .finally(() => {
          busy = false;
        });
    }, REPLACE_CHECK_MS);
    timer.unref();
    this.replacing.set(stream, timer);
  }

  /** One look at an old-kind stream: sealed once drained, replaced once drained sealed. True when it is a conveyor now. */
  private async replaceIfDrained(stream: string): Promise<boolean> {
    const { jsm } = this.client();
    const name = jetStreamNames(this.settings.namespace, stream).stream;
    const info = await jsm.streams.info(name).catch(() => undefined);
    if (info?.config.retention === RetentionPolicy.Interest) {
      // Another process replaced it: this one's subscriptions move to the new consumers now.
      await this.reattachTo(stream);
      return true;
    }
    if (!info) {
      // Another process deleted it to replace it: make it (as a conveyor) if it has not yet.
      this.ensured.delete(stream);
      await this.ensureStream(stream);
      await this.reattachTo(stream);
      return true;
    }
    if (!(await this.drained(name))) return false;
    if (!info.config.sealed) {
      // Sealed, nothing more is stored: what a publisher sent between the look and the seal is
      // taken before the deletion; what it sends from now waits in its outbox.
      await jsm.streams.update(name, Object.assign({ ...info.config }, { sealed: true }));
      this.logger.warn(`stream ${name}: drained, sealed; publishes wait in the outbox until it is replaced`);
      if (!(await this.drained(name))) return false;
    }
    const sealed = await jsm.streams.info(name);
    if (sealed.config.retention === RetentionPolicy.Interest || !sealed.config.sealed) return sealed.config.retention === RetentionPolicy.Interest;
    await jsm.streams.delete(name);
    this.ensured.delete(stream);
    await this.ensureStream(stream);
    this.logger.warn(`stream ${name}: replaced by a conveyor (interest retention${this.settings.maxBytes ? `, at most ${this.settings.maxBytes} bytes` : ""})`);
    await this.reattachTo(stream);
    return true;
  }

  /** True when no consumer of the stream has a message it has not taken. */
  private async drained(name: string): Promise<boolean> {
    for await (const c of this.client().jsm.consumers.list(name)) if (c.num_pending > 0 || c.num_ack_pending > 0) return false;
    return true;
  }

  /** This process's subscriptions to a stream made again take from its new consumers. */
  private async reattachTo(stream: string): Promise<void> {
    await Promise.all([...(this.reattach.get(stream) ?? [])].map((again) => again()));
  }

  hasRoom(stream: string): Promise<boolean> {
    return Promise.resolve(!this.refused.has(stream) && this.rooms.has(stream));
  }

  private async lookForRoom(stream: string): Promise<boolean> {
    const max = this.settings.maxBytes ?? 0;
    if (max <= 0 || !groupsOf(stream, this.settings.groups)) return true;
    await this.ensureStream(stream);
    const info = await this.client().jsm.streams.info(jetStreamNames(this.settings.namespace, stream).stream);
    // An old-kind stream is not bounded: it keeps working as before until it is replaced.
    return info.config.retention !== RetentionPolicy.Interest || info.state.bytes < max;
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
    if (failed) {
      if (isFull(failed.reason)) this.refused.add(stream);
      throw failed.reason;
    }
    this.refused.delete(stream);
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
  private async ensureConsumer(stream: string, config: Partial<ConsumerConfig> & { durable_name: string }, bringAckWait = true): Promise<void> {
    const { jsm } = this.client();
    const existing = await jsm.consumers.info(stream, config.durable_name).catch(async () => {
      await jsm.consumers.add(stream, config).catch(async (err) => {
        await jsm.consumers.info(stream, config.durable_name).catch(() => {
          throw err;
        });
      });
      return undefined;
    });
    if (bringAckWait && existing && config.ack_wait !== undefined && existing.config.ack_wait !== config.ack_wait) {
      await jsm.consumers
        .update(stream, config.durable_name, { ack_wait: config.ack_wait })
        .catch((err: unknown) => this.logger.warn(`consumer ${config.durable_name}: its ack wait stays as it was: ${errorText(err)}`));
    }
  }

  async subscribe(stream: string, group: string, handler: StreamHandler, opts: SubscribeOptions = {}): Promise<Subscription> {
    const { js, jsm } = this.client();
    const names = jetStreamNames(this.settings.namespace, stream);
    const ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
    const groups = groupsOf(stream, this.settings.groups);
    if (groups && !groups.includes(group)) this.logger.warn(undeclaredGroup(stream, group));
    const slots = new Slots(Math.max(1, opts.concurrency ?? 1));
    let feeds: ConsumerMessages[] = [];
    let loops: Promise<void>[] = [];
    /** The group's consumers, made if missing, each consumed by a loop of its own. */
    const attach = async () => {
      const consumers = await this.patiently(`stream ${stream}/${group}`, async () => {
        await this.ensureStream(stream);
        await Promise.all(this.partitionConsumers(stream, group, ackWaitMs).map((c) => this.ensureConsumer(names.stream, c)));
        // The group's consumer from before partitions, if it exists, still has the old subject's messages.
        const legacy = await jsm.consumers.info(names.stream, names.durable(group)).then(
          () => names.durable(group),
          () => undefined,
        );
        const durables = Array.from({ length: this.partitions }, (_, k) => names.partitionDurable(group, k));
        const all = legacy ? [...durables, legacy] : durables;
        return Promise.all(all.map(async (durable) => ({ durable, consumer: await js.consumers.get(names.stream, durable) })));
      });
      feeds = [];
      loops = [];
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
    };
    const detach = async () => {
      await Promise.all(feeds.map((f) => f.close().catch(() => undefined)));
      await Promise.all(loops);
    };
    // The stream was replaced (a conveyor now): the old consumers are gone with it.
    const again = async () => {
      await detach();
      await attach();
    };
    await attach();
    const reattach = this.reattach.get(stream) ?? new Set();
    this.reattach.set(stream, reattach.add(again));
    const subscription: Subscription = {
      close: async () => {
        this.subscriptions.delete(subscription);
        reattach.delete(again);
        await detach();
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

/** A publish refused because the stream holds its max_bytes. */
function isFull(err: unknown): boolean {
  const api = (err as { api_error?: { err_code?: unknown } } | null)?.api_error;
  return api?.err_code === MAXIMUM_BYTES_EXCEEDED;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
