/**
 * What the notifier keeps a copy of (docs/architecture.md, "Events"): every user's contact, so
 * that alert notices go out while auth is away. Each write tells it as it happens
 * (`auth.user.created|updated|removed`, users.ts); every contact is told again
 * (`auth.users.announced`) when this replica starts, whenever a notifier node joins, after a
 * reconnection and every ANNOUNCE_EVERY_MS (lib/announcements.ts), so a copy that missed events
 * while the notifier was away, or that starts empty, is made whole.
 */
import type { ServiceBroker } from "moleculer";
import { announceInParts, announceToNodes } from "../../lib/announcements";
import type { AuthPort } from "./port";
import { userContact } from "./users";
import { contactsAfter } from "./users.repo";

/** Users per `announced` event: about 200 bytes each, well under NATS's 1 MB payload. */
const ANNOUNCED_PART = 1000;

/** Every user's contact, in parts of ordered names, each read after its `at`. */
export function announceContacts(port: AuthPort): Promise<void> {
  return announceInParts(
    ANNOUNCED_PART,
    async (after, limit) => (await contactsAfter(port.db, after, limit)).map(userContact),
    (u) => u.username,
    (range, users) => port.usersAnnounced({ ...range, users }),
  );
}

/**
 * On start and whenever the services on the bus change: every contact, when a notifier node is
 * there that this replica has not announced to (`again`: to every notifier node, after a
 * reconnection and on the periodic run).
 */
export function announceToNotifier(port: AuthPort, broker: ServiceBroker, again = false): Promise<void> {
  return announceToNodes(broker, { to: "notifier", what: "auth.users.announced", logger: port.logger, announce: () => announceContacts(port) }, again);
}
