/**
 * The Sparkplug edge nodes this replica handles, whichever broker their messages came through
 * (the front door or the plant's): each node's messages in the order received, one at a time,
 * each settled (stored, its birth or death applied) before the next and before it is
 * acknowledged; a session that lost track asks the node for a rebirth.
 */
import { createHash } from "node:crypto";
import type { SparkplugNode } from "../pipelines/contract";
import { MSG } from "./messages";
import type { MqttPort } from "./port";
import { decodePayload, newNodeState, rebirthCommand, receive, topicText, type NodeState, type Topic } from "./sparkplug";

/** Sends a command to a node on the broker its messages came through. */
export type Publish = (topic: string, payload: Buffer) => Promise<void>;

/** A rebirth asked is not asked again this soon, unless the node was born meanwhile. */
const REBIRTH_AGAIN_MS = 5000;
/** Rejections of a node are logged at most this often, counted in between. */
const REJECTIONS_LOG_MS = 60_000;

interface Session {
  node: SparkplugNode;
  state: NodeState;
  /** The node's last message settled: the next waits for it. */
  queue: Promise<void>;
  lastHeard: number;
  rebirthAskedAt: number;
  rejections: Map<string, number>;
  rejectionsLoggedAt: number;
}

export class SparkplugNodes {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly port: MqttPort,
    private readonly publish: Publish,
  ) {}

  /** Resolves once the message is settled; rejects when it could not be stored (then it is not acknowledged). */
  handle(node: SparkplugNode, topic: Topic, payload: Buffer): Promise<void> {
    const session = this.sessionOf(node);
    const settled = session.queue.then(() => this.settle(session, topic, payload));
    session.queue = settled.catch(() => undefined);
    return settled;
  }

  /** The node is handled elsewhere now (its lease went to another replica): its session is forgotten. */
  release(pipeline_id: string): void {
    this.sessions.delete(pipeline_id);
  }

  get size(): number {
    return this.sessions.size;
  }

  private sessionOf(node: SparkplugNode): Session {
    let session = this.sessions.get(node.pipeline_id);
    if (!session) {
      session = { node, state: newNodeState(), queue: Promise.resolve(), lastHeard: 0, rebirthAskedAt: 0, rejections: new Map(), rejectionsLoggedAt: 0 };
      this.sessions.set(node.pipeline_id, session);
    }
    return session;
  }

  private async settle(session: Session, topic: Topic, bytes: Buffer): Promise<void> {
    const now = Date.now();
    let payload;
    try {
      payload = decodePayload(bytes);
    } catch {
      this.port.log.warn(MSG.undecodable(session.node.edge_node, topicText(topic)));
      return;
    }
    const got = receive(session.state, topic, payload, now);
    const { pipeline_id } = session.node;
    if (got.readings.length > 0) {
      const message_id = createHash("sha256").update(`${topic.group}/${topic.type}/${topic.device ?? ""}\n`).update(bytes).digest("hex");
      const answer = await this.port.readings(pipeline_id, message_id, got.readings);
      this.countRejections(session, answer.rejected.map((r) => r.reason), now);
    }
    if (got.ignored > 0) this.countRejections(session, Array(got.ignored).fill("not numeric or Boolean") as string[], now);
    if (got.event === "birth") await this.port.birth(pipeline_id, now);
    if (got.event === "death") await this.port.death(pipeline_id, session.lastHeard || now);
    // Kept only once settled: a message that failed is sent again and must find the session as it was.
    session.state = got.state;
    if (got.event !== "death") session.lastHeard = now;
    if (got.event === "birth") session.rebirthAskedAt = 0;
    if (got.rebirth && now - session.rebirthAskedAt >= REBIRTH_AGAIN_MS) {
      session.rebirthAskedAt = now;
      this.port.log.info(MSG.rebirthAsked(session.node.edge_node, got.rebirth));
      const command = rebirthCommand(topic, now);
      await this.publish(command.topic, command.payload).catch(() => undefined);
    }
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
