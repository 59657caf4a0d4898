/**
 * The notifier's copy of the users' contacts (docs/architecture.md, "Events"): kept from auth's
 * `auth.user.created|updated|removed` and `auth.users.announced`, read by an alert's notices
 * (alert-notifications.ts), so that the notifier calls no service for them and notices go out
 * while auth is away. Events may arrive in any order and more than once: the newer record of a
 * name, then the later time, wins (contacts.repo.ts).
 */
import { isAnnouncedRange } from "../../lib/announcements";
import { USER_TYPES } from "../../lib/access";
import type { UserChanged, UserContact, UserRemoved, UsersAnnounced } from "../auth/contract";
import * as repo from "./contacts.repo";
import type { ContactRow } from "./contacts.repo";
import { MSG } from "./messages";
import type { NotifierPort } from "./port";

/** Thrown while the copy has never been whole and does not know the name: the notice is handed over again later (the alerts stream redelivers it). */
export class ContactsNotYetKnown extends Error {
  constructor(username: string) {
    super(MSG.contactsNotYetKnown(username));
    this.name = "ContactsNotYetKnown";
  }
}

const isText = (v: unknown, max = 320): v is string => typeof v === "string" && v.length <= max;
const isName = (v: unknown): v is string => isText(v) && v !== "";
const isPlace = (v: unknown): v is string | null => v === null || isText(v, 64);
const isTime = (v: unknown): v is number => Number.isSafeInteger(v);
const isUserType = (v: unknown): boolean => (USER_TYPES as readonly unknown[]).includes(v);

/** Another version of auth may have sent it: a contact that is not one is left out. */
const isContact = (c: UserContact): boolean =>
  isName(c.username) && isUserType(c.user_type) && isPlace(c.site_id) && isPlace(c.plant_id) && isText(c.mobile_number, 64) && isText(c.country_code, 16) && isTime(c.created_at);

const kept = (c: UserContact, at: number): ContactRow => ({
  username: c.username.toLowerCase(),
  user_type: c.user_type,
  site_id: c.site_id,
  plant_id: c.plant_id,
  mobile_number: c.mobile_number,
  country_code: c.country_code,
  created_at: c.created_at,
  at,
});

/** `auth.user.created|updated`. */
export async function userChanged(port: NotifierPort, e: UserChanged): Promise<void> {
  // An event from an auth that sends no contact or time (an older version) is left to the announcements.
  if (!isContact(e) || !isTime(e.at)) return;
  await repo.changed(port.db, kept(e, e.at));
}

/** `auth.user.removed`. */
export async function userRemoved(port: NotifierPort, e: UserRemoved): Promise<void> {
  if (!isName(e.username) || !isUserType(e.user_type) || !isTime(e.created_at) || !isTime(e.at)) return;
  await repo.removed(port.db, { username: e.username.toLowerCase(), user_type: e.user_type, created_at: e.created_at, at: e.at });
}

/** `auth.users.announced`: one part of the list of every user. */
export async function usersAnnounced(port: NotifierPort, a: UsersAnnounced): Promise<void> {
  if (!isAnnouncedRange(a, isName) || !Array.isArray(a.users)) return;
  await repo.announced(
    port.db,
    { at: a.at, after: a.after, through: a.through },
    a.users.filter(isContact).map((c) => kept(c, a.at)),
  );
}

/**
 * A user's contact, or null for a user the copy knows to be unknown: removed, or never told once
 * a whole announcement has arrived. Before that, a name it does not know may be a user not yet
 * told: ContactsNotYetKnown, so that no notice is failed wrongly.
 */
export async function contactOf(port: NotifierPort, username: string): Promise<UserContact | null> {
  const found = await repo.find(port.db, username.toLowerCase());
  if (found) return found.deleted ? null : found;
  if (await repo.complete(port.db)) return null;
  throw new ContactsNotYetKnown(username);
}
