/**
 * The front door's limit on what a connection may make the broker hold (docs/sparkplug.md#the-front-door):
 * aedes's parser keeps a packet's bytes until its announced remaining length has arrived (up to
 * 256 MB) and has no maximum of its own. The bytes of each accepted socket are read here first,
 * fixed header by fixed header, and the connection is closed at the first packet over
 * MQTT_MAX_PACKET_BYTES, at a first packet other than CONNECT, or once more than that many bytes
 * came before its CONNECT was accepted.
 */
import type net from "node:net";

/** CONNECT's packet type (MQTT 3.1.1, 2.2.1). */
const CONNECT = 1;
/** The remaining length takes at most 4 bytes (MQTT 3.1.1, 2.2.3). */
const MAX_LENGTH_BYTES = 4;

export type Violation =
  | { kind: "too large"; bytes: number }
  | { kind: "malformed" }
  | { kind: "not CONNECT first" }
  | { kind: "too much before CONNECT accepted" };

/**
 * An MQTT byte stream read header by header, whatever the chunks cut (a header split across TCP
 * segments included): pure, so test/unit reaches it without a socket.
 */
export class PacketSizes {
  private stage: "type" | "length" | "body" = "type";
  private type = 0;
  private length = 0;
  private lengthBytes = 0;
  private bodyLeft = 0;
  private packets = 0;
  private beforeAccepted = 0;
  private accepted = false;

  constructor(private readonly maxPacketBytes: number) {}

  /** The CONNECT was accepted: from now on only each packet's size is bounded. */
  accept(): void {
    this.accepted = true;
  }

  /** The next bytes received: the first rule they break, or null. */
  feed(chunk: Uint8Array): Violation | null {
    if (!this.accepted) {
      this.beforeAccepted += chunk.length;
      if (this.beforeAccepted > this.maxPacketBytes) return { kind: "too much before CONNECT accepted" };
    }
    let i = 0;
    while (i < chunk.length) {
      if (this.stage === "body") {
        const skipped = Math.min(this.bodyLeft, chunk.length - i);
        this.bodyLeft -= skipped;
        i += skipped;
        if (this.bodyLeft === 0) this.stage = "type";
        continue;
      }
      const byte = chunk[i++]!;
      if (this.stage === "type") {
        this.type = byte >> 4;
        if (this.packets === 0 && this.type !== CONNECT) return { kind: "not CONNECT first" };
        this.stage = "length";
        this.length = 0;
        this.lengthBytes = 0;
        continue;
      }
      // The remaining length: 7 bits a byte, least significant first, the high bit saying more follow.
      this.length += (byte & 0x7f) * 128 ** this.lengthBytes;
      this.lengthBytes++;
      if (byte & 0x80) {
        if (this.lengthBytes === MAX_LENGTH_BYTES) return { kind: "malformed" };
        continue;
      }
      const bytes = 1 + this.lengthBytes + this.length;
      if (bytes > this.maxPacketBytes) return { kind: "too large", bytes };
      this.packets++;
      this.bodyLeft = this.length;
      this.stage = this.length === 0 ? "type" : "body";
    }
    return null;
  }
}

/**
 * Reads `socket`'s bytes before aedes does: each chunk the socket receives goes through `push`
 * (how a Node stream is fed), so a chunk breaking a rule is never buffered; the socket is
 * destroyed and `refused` told once. Returns what accepts the connection's CONNECT.
 */
export function guardSocket(socket: net.Socket, maxPacketBytes: number, refused: (why: Violation) => void): PacketSizes {
  const sizes = new PacketSizes(maxPacketBytes);
  const push = socket.push.bind(socket);
  let broken = false;
  socket.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
    if (broken) return false;
    if (chunk instanceof Uint8Array) {
      const violation = sizes.feed(chunk);
      if (violation) {
        broken = true;
        refused(violation);
        socket.destroy();
        return false;
      }
    }
    return push(chunk, encoding);
  };
  return sizes;
}
