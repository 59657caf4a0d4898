/**
 * The Sparkplug edge nodes this replica handles, whichever broker their messages came through
 * (the front door or the plant's): each node's messages in the order received, each settled
 * (stored, its birth or death applied) before it is acknowledged. The messages that waited
 * behind each other are stored together, in one call and one transaction, each under its own
 * idempotency key; a session that lost track asks the node for a rebirth.
 */
import { createHash } from "node:crypto";
import type { SparkplugMessage, SparkplugNode } from "../pipelines/contract";
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
/** A call carries at most this many readings (about 60 bytes each as JSON): well under NATS's 1 MB message. */
const READINGS_PER_CALL = 5000;

/** A node's message waiting its turn, or its release (docs/sparkplug.md#stopping). */
interface Waiting {
  message: { topic: Topic; bytes: Buffer } | null;
  resolve(): void;
  reject(err: unknown): void;
}

interface Session {
  node: SparkplugNode;
  state: NodeState;
  waiting: Waiting[];
  /** A call for this node is under way: what arrives waits for it, then goes in the next one. */
  busy: boolean;
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

const readingsOf = (group: Settling[]): number => group.reduce((n, s) => n + (s.got?.readings.length ?? 0), 0);

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
      session = { node, state: newNodeState(), waiting: [], busy: false, lastHeard: 0, heardWrittenAt: 0, rebirthAskedAt: 0, rejections: new Map(), rejectionsLoggedAt: 0, present: false };
      this.sessions.set(node.pipeline_id, session);
    }
    return session;
  }

  private enqueue(node: SparkplugNode, message: Waiting["message"]): Promise<void> {
    const session = this.sessionOf(node);
    const settled = new Promise<void>((resolve, reject) => session.waiting.push({ message, resolve, reject }));
    if (!session.busy) void this.drain(session);
    return settled;
  }

  /** Settles what waits, in order, a call at a time, until nothing waits. */
  private async drain(session: Session): Promise<void> {
    session.busy = true;
    try {
      while (session.waiting.length > 0) await this.settle(session, session.waiting.splice(0, MESSAGES_PER_CALL));
    } finally {
      session.busy = false;
    }
  }

  /**
   * Waiting messages in order, as groups each stored in one call: a group ends with a birth or a
   * death (applied once the group's readings are stored) or a release. A group that fails is not
   * acknowledged and leaves the session as it was; the messages after it are tried on their own.
   */
  private async settle(session: Session, items: Waiting[]): Promise<void> {
    const now = Date.now();
    let group: Settling[] = [];
    let state = session.state;
    const flush = async () => {
      const done = group;
      group = [];
      if (done.length === 0) return;
      try {
        await this.store(session, done, now);
        for (const s of done) s.waiting.resolve();
      } catch (err) {
        for (const s of done) s.waiting.reject(err);
      }
      state = session.state;
    };
    for (const waiting of items) {
      if (!waiting.message) {
        await flush();
        await this.port.release(session.node.pipeline_id).then(waiting.resolve, waiting.reject);
        continue;
      }
      const { topic, bytes } = waiting.message;
      let payload: UPayload | null = null;
      try {
        payload = decodePayload(bytes);
      } catch {
        this.port.log.warn(MSG.undecodable(session.node.edge_node, topicText(topic)));
      }
      let got = payload && receive(state, topic, payload, now);
      if (got && group.length > 0 && readingsOf(group) + got.readings.length > READINGS_PER_CALL) {
        await flush();
        got = receive(state, topic, payload!, now);
      }
      if (got) state = got.state;
      group.push({ waiting, topic, bytes, got });
      if (got?.event) await flush();
    }
    await flush();
  }

  /** A group's readings in one call, then its birth or death; the session kept only once that is done. */
  private async store(session: Session, group: Settling[], now: number): Promise<void> {
    const { pipeline_id } = session.node;
    const messages: SparkplugMessage[] = [];
    for (const { topic, bytes, got } of group) {
      if (!got || got.readings.length === 0) continue;
      const message_id = createHash("sha256").update(`${topic.group}/${topic.type}/${topic.device ?? ""}\n`).update(bytes).digest("hex");
      messages.push({ message_id, metrics: got.readings });
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
    // Kept only once settled: a message that failed is sent again and must find the session as it was.
    for (const { topic, got } of group) {
      if (!got) continue;
      session.state = got.state;
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
