/**
 * The Sparkplug edge nodes this replica handles, whichever broker their messages came through
 * (the front door or the plant's): each node's messages in the order received, each settled
 * (stored, its birth or death applied) before it is acknowledged, and acknowledged in order. The
 * messages that waited behind each other are stored together, in one call and one transaction,
 * each under its own idempotency key, a few such calls of a node under way at once; a session
 * that lost track asks the node for a rebirth.
 */
import { createHash } from "node:crypto";
import type { SparkplugMessage, SparkplugMetric, SparkplugNode } from "../pipelines/contract";
import { MSG } from "./messages";
import type { MqttPort } from "./port";
import type { UPayload } from "sparkplug-payload/lib/sparkplugbpayload";
import { decodePayload, newNodeState, rebirthCommand, receive, topicText, type NodeState, type Received, type Topic } from "./sparkplug";

/** Sends a command to a node on the broker its messages came through. */
export type Publish = (topic: string, payload: Buffer) => Promise<void>;

/** A rebirth asked is not asked again this soon, unless the node was born meanwhile. */
const REBIRTH_AGAIN_MS = 5000;
/** Rejections of a node are logged at most this often, counted in between. */
const REJECTIONS_LOG_MS = 60_000;
/** `heart_beats.gateway` of a node that publishes is written at most this often (its births and deaths write it too). */
export const HEARD_EVERY_MS = 5000;
/** At most this many waiting messages are taken at a time. */
const MESSAGES_PER_CALL = 64;
/** A call carries at most this many readings (about 30 bytes each as JSON columns): well under NATS's 1 MB message. */
const READINGS_PER_CALL = 5000;
/** At most this many calls of a node are under way at once. */
const CALLS_PER_NODE = 3;

/** A node's message waiting its turn (its payload decoded once taken), or its release (docs/sparkplug.md#stopping). */
interface Waiting {
  message: { topic: Topic; bytes: Buffer; payload?: UPayload | null } | null;
  resolve(): void;
  reject(err: unknown): void;
}

interface Session {
  node: SparkplugNode;
  /** After every message taken so far, stored or still being stored; set back to a failed group's state before it. */
  state: NodeState;
  waiting: Waiting[];
  /** The node's messages are being taken: what arrives joins them (and wakes the taking, `wake`). */
  busy: boolean;
  wake: (() => void) | null;
  /** Resolves once every group taken so far is settled: each group's messages resolve after those before them. */
  settled: Promise<void>;
  lastHeard: number;
  heardWrittenAt: number;
  rebirthAskedAt: number;
  rejections: Map<string, number>;
  rejectionsLoggedAt: number;
  /** Told present (`MqttPort.present`) at its birth, absent at its death: the plant's broker's nodes only. */
  present: boolean;
}

/** A message of a group, as its session turned it: null when it was no Sparkplug payload. */
interface Settling {
  waiting: Waiting;
  topic: Topic;
  bytes: Buffer;
  got: Received | null;
}

/** Messages taken together, stored in one call: `before`, the session's state before them. */
interface Group {
  items: Settling[];
  before: NodeState;
  /** Ends with a birth or a death: stored once every group before it is settled. */
  event: boolean;
}

/** A message's readings (all of one device, or of the node) as the columns the call carries. */
export function columnsOf(device: string | null, readings: SparkplugMetric[]): Omit<SparkplugMessage, "message_id"> {
  const n = readings.length;
  const names = new Array<string>(n);
  const ts = new Array<number>(n);
  const values = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const r = readings[i]!;
    names[i] = r.name;
    ts[i] = r.ts;
    values[i] = r.value;
  }
  return { device, names, ts, values };
}

export class SparkplugNodes {
  private readonly sessions = new Map<string, Session>();

  /**
   * `releasedByDeath`: the node's NDEATH (or will) releases it, as on the plant's broker; the
   * front door releases a node when its connection closes (`released`).
   */
  constructor(
    private readonly port: MqttPort,
    private readonly publish: Publish,
    private readonly opts: { releasedByDeath: boolean },
  ) {}

  /** Resolves once the message is settled; rejects when it could not be stored (then it is not acknowledged). */
  handle(node: SparkplugNode, topic: Topic, payload: Buffer): Promise<void> {
    return this.enqueue(node, { topic, bytes: payload });
  }

  /** The node let go of its pipeline (its connection closed): after its messages before, its pending stop completes. */
  released(node: SparkplugNode): Promise<void> {
    return this.enqueue(node, null);
  }

  /** The node is handled elsewhere now (its lease went to another replica): its session is forgotten. */
  forget(pipeline_id: string): void {
    if (this.sessions.get(pipeline_id)?.present) this.port.absent(pipeline_id).catch(() => undefined);
    this.sessions.delete(pipeline_id);
  }

  get size(): number {
    return this.sessions.size;
  }

  private sessionOf(node: SparkplugNode): Session {
    let session = this.sessions.get(node.pipeline_id);
    if (!session) {
      session = {
        node,
        state: newNodeState(),
        waiting: [],
        busy: false,
        wake: null,
        settled: Promise.resolve(),
        lastHeard: 0,
        heardWrittenAt: 0,
        rebirthAskedAt: 0,
        rejections: new Map(),
        rejectionsLoggedAt: 0,
        present: false,
      };
      this.sessions.set(node.pipeline_id, session);
    }
    return session;
  }

  private enqueue(node: SparkplugNode, message: Waiting["message"]): Promise<void> {
    const session = this.sessionOf(node);
    const settled = new Promise<void>((resolve, reject) => session.waiting.push({ message, resolve, reject }));
    if (session.busy) session.wake?.();
    else void this.drain(session);
    return settled;
  }

  /**
   * Takes what waits, in order, as groups, until nothing waits or is being stored: up to
   * CALLS_PER_NODE groups' calls under way at once, so that a node's stores overlap (the bus,
   * the check, the transaction) as concurrent `/_ingest` requests do, while their messages
   * resolve in order. A group ending with a birth or a death, and a release, wait for every
   * group before them.
   */
  private async drain(session: Session): Promise<void> {
    session.busy = true;
    const calls = new Set<Promise<void>>();
    try {
      for (;;) {
        const next = session.waiting[0];
        if (!next || calls.size >= CALLS_PER_NODE) {
          if (calls.size === 0) break;
          await new Promise<void>((resolve) => {
            session.wake = next ? null : resolve;
            void Promise.race(calls).then(resolve);
          });
          session.wake = null;
          continue;
        }
        if (!next.message) {
          session.waiting.shift();
          await Promise.all(calls);
          await session.settled;
          await this.port.release(session.node.pipeline_id).then(next.resolve, next.reject);
          continue;
        }
        const group = this.take(session);
        if (group.event) await Promise.all(calls);
        const call = this.settle(session, group);
        if (group.event) await call;
        else {
          calls.add(call);
          void call.then(() => calls.delete(call));
        }
      }
    } finally {
      session.busy = false;
    }
  }

  /**
   * The next group of waiting messages, in order: at most MESSAGES_PER_CALL and READINGS_PER_CALL,
   * ending with a birth or a death, or before a release. The session's state moves past them.
   */
  private take(session: Session): Group {
    const now = Date.now();
    const before = session.state;
    let state = before;
    const items: Settling[] = [];
    let readings = 0;
    while (items.length < MESSAGES_PER_CALL) {
      const waiting = session.waiting[0];
      if (!waiting?.message) break;
      const message = waiting.message;
      if (message.payload === undefined) {
        try {
          message.payload = decodePayload(message.bytes);
        } catch {
          message.payload = null;
          this.port.log.warn(MSG.undecodable(session.node.edge_node, topicText(message.topic)));
        }
      }
      const got = message.payload ? receive(state, message.topic, message.payload, now) : null;
      if (got && items.length > 0 && readings + got.readings.length > READINGS_PER_CALL) break;
      session.waiting.shift();
      if (got) {
        state = got.state;
        readings += got.readings.length;
      }
      items.push({ waiting, topic: message.topic, bytes: message.bytes, got });
      if (got?.event) break;
    }
    session.state = state;
    return { items, before, event: !!items[items.length - 1]?.got?.event };
  }

  /**
   * Stores a group, then resolves its messages once those before them are settled (or rejects
   * them: not acknowledged, the session's state set back to before them for their redelivery).
   * Resolves when its call is done.
   */
  private settle(session: Session, group: Group): Promise<void> {
    const stored = this.store(session, group.items, Date.now()).then(
      () => ({ ok: true as const }),
      (err: unknown) => {
        session.state = group.before;
        return { ok: false as const, err };
      },
    );
    session.settled = Promise.all([session.settled, stored]).then(([, outcome]) => {
      for (const s of group.items) {
        if (outcome.ok) s.waiting.resolve();
        else s.waiting.reject(outcome.err);
      }
    });
    return stored.then(() => undefined);
  }

  /** A group's readings in one call, then its birth or death, then the rebirth its messages asked for. */
  private async store(session: Session, group: Settling[], now: number): Promise<void> {
    const { pipeline_id } = session.node;
    const messages: SparkplugMessage[] = [];
    for (const { topic, bytes, got } of group) {
      if (!got || got.readings.length === 0) continue;
      const message_id = createHash("sha256").update(`${topic.group}/${topic.type}/${topic.device ?? ""}\n`).update(bytes).digest("hex");
      messages.push({ message_id, ...columnsOf(topic.device, got.readings) });
    }
    if (messages.length > 0) {
      const answers = await this.port.readings(pipeline_id, messages);
      this.countRejections(session, answers.flatMap((a) => a.rejected.map((r) => r.reason)), now);
    }
    const ignored = group.reduce((n, s) => n + (s.got?.ignored ?? 0), 0);
    if (ignored > 0) this.countRejections(session, Array(ignored).fill("not numeric or Boolean") as string[], now);
    const last = group[group.length - 1]!.got;
    const heard = group.some((s) => s.got && s.got.event !== "death");
    if (last?.event === "birth") {
      // On the plant's broker a node is connected from its birth (docs/sparkplug.md#stopping), told before the
      // birth moves the pipeline; the front door tells its connections itself.
      if (this.opts.releasedByDeath && !session.present) {
        await this.port.present(pipeline_id);
        session.present = true;
      }
      await this.port.birth(pipeline_id, now);
      session.heardWrittenAt = now;
    } else if (last?.event === "death") {
      await this.port.death(pipeline_id, heard ? now : session.lastHeard || now);
      if (this.opts.releasedByDeath) {
        if (session.present) await this.port.absent(pipeline_id);
        session.present = false;
        await this.port.release(pipeline_id);
      }
    } else if (heard && now - session.heardWrittenAt >= HEARD_EVERY_MS) {
      // Kept current while the node publishes, without a write a message (docs/sparkplug.md).
      session.heardWrittenAt = now;
      await this.port.heard(pipeline_id, now).catch(() => undefined);
    }
    for (const { topic, got } of group) {
      if (!got) continue;
      if (got.event === "birth") session.rebirthAskedAt = 0;
      if (got.rebirth && now - session.rebirthAskedAt >= REBIRTH_AGAIN_MS) {
        session.rebirthAskedAt = now;
        this.port.log.info(MSG.rebirthAsked(session.node.edge_node, got.rebirth));
        const command = rebirthCommand(topic, now);
        await this.publish(command.topic, command.payload).catch(() => undefined);
      }
    }
    if (heard) session.lastHeard = now;
  }

  private countRejections(session: Session, reasons: string[], now: number): void {
    for (const reason of reasons) session.rejections.set(reason, (session.rejections.get(reason) ?? 0) + 1);
    if (session.rejections.size === 0 || now - session.rejectionsLoggedAt < REJECTIONS_LOG_MS) return;
    const counts = [...session.rejections].map(([reason, n]) => `${n} × ${reason}`).join("; ");
    this.port.log.warn(MSG.rejected(session.node.edge_node, counts));
    session.rejections.clear();
    session.rejectionsLoggedAt = now;
  }
}
