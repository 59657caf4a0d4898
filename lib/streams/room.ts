/**
 * Whether a stream has room for more (STREAM_MAX_BYTES, docs/architecture.md), as last looked up:
 * ingestion asks on every request and never waits for the look, which runs in the background at
 * most once per `ttlMs` per stream. A stream not looked at yet, or whose look failed, has room:
 * the bound guards the disk, and a NATS node dying must not hold ingestion for the seconds a
 * JetStream request then takes. The lag lets a stream pass its bound by a second's messages.
 */
export class RoomCache {
  private readonly rooms = new Map<string, { at: number; room: boolean; looking: boolean }>();

  constructor(
    private readonly look: (stream: string) => Promise<boolean>,
    private readonly ttlMs = 1000,
  ) {}

  has(stream: string): boolean {
    let entry = this.rooms.get(stream);
    if (!entry) this.rooms.set(stream, (entry = { at: 0, room: true, looking: false }));
    const seen = entry;
    if (!seen.looking && Date.now() - seen.at >= this.ttlMs) {
      seen.looking = true;
      this.look(stream)
        .then(
          (room) => void (seen.room = room),
          () => void (seen.room = true),
        )
        .finally(() => {
          seen.at = Date.now();
          seen.looking = false;
        });
    }
    return seen.room;
  }
}
