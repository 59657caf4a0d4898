/**
 * The front door's acknowledgements of QoS 1 publishes (docs/sparkplug.md): each PUBACK written
 * once its message is settled, in the order the messages came (MQTT 3.1.1, 4.6), while aedes
 * reads on. aedes reads a connection's next bytes only once every packet of its last read is
 * settled, and writes a QoS 1 publish's PUBACK as soon as `authorizePublish` answers: answering
 * at once and writing the PUBACK here lets a node's next messages be stored while earlier ones
 * are (docs/benchmarks.md, bench:mqtt). Past UNACKED_PER_CONNECTION messages awaiting their
 * PUBACK, a connection's next publish is answered only once one is acknowledged, so aedes stops
 * reading it.
 */
import type { Client, PublishPacket } from "aedes" with { "resolution-mode": "import" };

/** A connection's messages awaiting their PUBACK before aedes stops reading it. */
export const UNACKED_PER_CONNECTION = 64;

/** MQTT 3.1.1, 3.4: PUBACK, remaining length 2, the packet identifier. */
const puback = (messageId: number): Buffer => Buffer.from([0x40, 0x02, (messageId >> 8) & 0xff, messageId & 0xff]);

interface Line {
  /** Resolves once every message before is acknowledged, or its connection closed. */
  last: Promise<void>;
  unacked: number;
  /** Answers to aedes held back while UNACKED_PER_CONNECTION messages await their PUBACK. */
  held: (() => void)[];
  failed: boolean;
}

export class Acknowledgements {
  private readonly lines = new WeakMap<Client, Line>();

  /**
   * `done` is aedes's `authorizePublish` callback; `settled` resolves once the message is stored
   * (or rejects: no PUBACK, the connection closed, the gateway sends it again). A QoS 0 publish
   * is answered once settled, as before.
   */
  settle(client: Client, packet: PublishPacket, settled: Promise<void>, done: (err: Error | null) => void): void {
    if (packet.qos !== 1 || packet.messageId === undefined) {
      settled.then(
        () => done(null),
        (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
      );
      return;
    }
    const line = this.lineOf(client);
    const messageId = packet.messageId;
    // aedes writes no PUBACK of its own then; the message goes to no one anyway (authorizeForward).
    packet.qos = 0;
    line.unacked++;
    line.last = Promise.all([line.last, settled]).then(
      () => {
        if (!line.failed && client.conn.writable) client.conn.write(puback(messageId));
      },
      () => {
        // Not acknowledged: the connection closes, and what it still awaits is sent again.
        line.failed = true;
        client.close();
      },
    );
    void line.last.then(() => {
      line.unacked--;
      line.held.shift()?.();
    });
    if (line.unacked <= UNACKED_PER_CONNECTION) done(null);
    else line.held.push(() => done(null));
  }

  private lineOf(client: Client): Line {
    let line = this.lines.get(client);
    if (!line) {
      line = { last: Promise.resolve(), unacked: 0, held: [], failed: false };
      this.lines.set(client, line);
    }
    return line;
  }
}
