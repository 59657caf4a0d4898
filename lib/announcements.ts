/**
 * A copy that one service keeps of another's entries, from the owner's events, is made whole by
 * the owner announcing every entry again (docs/architecture.md, "Events"): config's copy of the
 * pipelines' places, the notifier's copy of the users' contacts. The owner sends them in parts of
 * ordered keys, each read after its `at`: when it starts, whenever a node of the copying service
 * joins that it has not announced to, after its own transporter reconnects (events sent while it
 * was cut off are lost), and every ANNOUNCE_EVERY_MS. The copier takes each part as the truth of
 * its key range as of `at`, with a margin for the senders' clocks (`removeUnlisted`).
 */
import type { ServiceBroker } from "moleculer";

/**
 * Every entry is told again this often anyway: it bounds how long a copy stays wrong after an
 * event lost with a dying node, or after an entry removed while the copier was away within
 * CLOCK_MARGIN_MS of its last change.
 */
export const ANNOUNCE_EVERY_MS = 5 * 60_000;

/**
 * A part's entries are as of its `at`; a copied entry older than that by more than this, and not
 * listed, was removed. The margin covers the senders' clocks differing; a newer one may be an
 * entry made after the part was read.
 */
export const CLOCK_MARGIN_MS = 60_000;

/** The bounds of one part: every entry whose key is after `after` and up to `through` (null: no bound), as of `at` (epoch ms). */
export interface AnnouncedRange {
  at: number;
  after: string | null;
  through: string | null;
}

/** Every entry, in parts of `size` ordered by key, each read after its `at`; `read` answers up to `limit` entries after `after`. */
export async function announceInParts<T>(
  size: number,
  read: (after: string | null, limit: number) => Promise<T[]>,
  keyOf: (entry: T) => string,
  send: (range: AnnouncedRange, entries: T[]) => Promise<void>,
): Promise<void> {
  let after: string | null = null;
  for (;;) {
    const at = Date.now();
    const entries = await read(after, size);
    const through = entries.length < size ? null : keyOf(entries[entries.length - 1]!);
    await send({ at, after, through }, entries);
    if (through === null) return;
    after = through;
  }
}

/** The nodes (node and instance ids) of each copying service a broker has announced to, by what it announces. */
const announcedTo = new WeakMap<ServiceBroker, Map<string, Set<string>>>();

export interface Announcer {
  /** The service that keeps the copy. */
  to: string;
  /** What is announced (the event's name): one broker may announce several things. */
  what: string;
  logger: { warn(...args: unknown[]): void };
  /** Sends every entry (`announceInParts`). */
  announce(): Promise<void>;
}

/**
 * On start and whenever the services on the bus change: announces when a node of `a.to` is there
 * that this broker has not announced to (`again`: to every such node, as after a reconnection or
 * on the periodic run).
 */
export async function announceToNodes(broker: ServiceBroker, a: Announcer, again = false): Promise<void> {
  const nodes = new Set(
    broker.registry
      .getServiceList({ onlyAvailable: true })
      .filter((s) => s.name === a.to)
      // A process started again may keep its node id: its instance id is new.
      .map((s) => `${String(s.nodeID)}/${broker.registry.nodes.get(String(s.nodeID))?.instanceID ?? ""}`),
  );
  let byWhat = announcedTo.get(broker);
  if (!byWhat) announcedTo.set(broker, (byWhat = new Map()));
  const known = again ? new Set<string>() : (byWhat.get(a.what) ?? new Set<string>());
  byWhat.set(a.what, nodes);
  if (![...nodes].some((node) => !known.has(node))) return;
  try {
    await a.announce();
  } catch (err) {
    // Told again when the next node joins or on the next periodic run; the events of each write keep the copy current meanwhile.
    byWhat.delete(a.what);
    a.logger.warn(`${a.what} not sent to ${a.to}:`, err);
  }
}

/** A part's bounds as received: checked, since another version may have sent it. */
export function isAnnouncedRange(r: AnnouncedRange, isKey: (key: string) => boolean): boolean {
  const bound = (key: unknown) => key === null || (typeof key === "string" && isKey(key));
  return Number.isSafeInteger(r.at) && bound(r.after) && bound(r.through);
}

/** What `removeUnlisted` runs its statement on: the database or a transaction. */
export interface Queryable {
  query(sql: string, args?: unknown[]): Promise<unknown>;
}

/** A copy's table: its key column and the key's type, and the `at` (bigint) and `deleted` (boolean) columns every copy has. */
export interface CopyTable {
  table: string;
  key: string;
  type: "uuid" | "text";
}

/**
 * After a part's entries are applied: the entries of its range it does not list, last changed
 * before it by more than CLOCK_MARGIN_MS, are gone (marked deleted ones too: nothing that old can
 * arrive after them). Text keys compare byte by byte (`COLLATE "C"`), as the owner orders them.
 */
export async function removeUnlisted(db: Queryable, copy: CopyTable, range: AnnouncedRange, keys: string[]): Promise<void> {
  const key = copy.type === "text" ? `${copy.key} COLLATE "C"` : copy.key;
  await db.query(
    `DELETE FROM ${copy.table}
      WHERE ($1::${copy.type} IS NULL OR ${key} > $1::${copy.type}) AND ($2::${copy.type} IS NULL OR ${key} <= $2::${copy.type})
        AND (deleted OR ${copy.key} <> ALL($3::${copy.type}[])) AND at < $4::bigint`,
    [range.after, range.through, keys, range.at - CLOCK_MARGIN_MS],
  );
}
