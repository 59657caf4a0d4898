/**
 * Whether a stream has room for more (STREAM_MAX_BYTES, docs/architecture.md), looked up at most once
 * per `ttlMs` per stream and shared by the callers meanwhile: ingestion asks on every request,
 * and a second's lag only lets a stream pass its bound by a second's messages. A failed look
 * counts as room: the bound guards the disk, it must not stop ingestion on a hiccup.
 */
export class RoomCache {
  private readonly rooms = new Map<string, { at: number; room: Promise<boolean> }>();

  constructor(
    private readonly look: (stream: string) => Promise<boolean>,
    private readonly ttlMs = 1000,
  ) {}

  has(stream: string): Promise<boolean> {
    const cached = this.rooms.get(stream);
    if (cached && Date.now() - cached.at < this.ttlMs) return cached.room;
    const room = this.look(stream).catch(() => true);
    this.rooms.set(stream, { at: Date.now(), room });
    return room;
  }
}
