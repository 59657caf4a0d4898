/**
 * The auth service's contract: who a caller is (`authenticate`, the gateway's question), a user's
 * contact details (`users.resolve`: alerting's, notebooks'), and the events it sends when users
 * or their credentials change, and the users' contacts it announces (the notifier's copy).
 */
import type { Principal, UserType } from "../../lib/access";
import { eventSender, serviceClient } from "../../lib/contract";

/** What an API token may do: read, or read and write (within its user's own rights). */
export const TOKEN_SCOPES = ["read", "write"] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/**
 * Payload of the `auth.user.created|updated|removed` events: whom it is about. Each event carries
 * more (`UserChanged`, `UserRemoved`); a listener that needs only this reads only this.
 */
export interface UserEvent {
  username: string;
  user_type: UserType;
  site_id: string | null;
  plant_id: string | null;
  /** When the user's record was made (epoch ms), so that what belonged to it can go and a later user's of the same name stays. */
  created_at?: number;
}

/** `auth.users.resolve`, the events and the announcements: what another service (alerting, notebooks, the notifier's copy) may learn of a user. */
export interface UserContact extends UserEvent {
  mobile_number: string;
  country_code: string;
  /** When this user record was made (epoch ms): with the name, it tells a user from a later one of the same name. */
  created_at: number;
}

/**
 * `auth.user.created|updated`, once the write is committed: the user's contact as it now is (the
 * notifier's copy, docs/architecture.md "Events"), and the write's time, so that an older
 * announcement never overwrites it.
 */
export interface UserChanged extends UserContact {
  /** Epoch ms, taken after the write committed. */
  at: number;
}

/** `auth.user.removed`: the removed record (its `created_at`: a later user of the same name is another), and the time of the removal. */
export interface UserRemoved extends UserEvent {
  created_at: number;
  at: number;
}

/**
 * `auth.users.announced`: every user whose name (lower case, ordered byte by byte) is after
 * `after` and up to `through` (null: no bound), as of `at` (epoch ms, read after it). Sent in
 * parts when an auth replica starts, whenever a notifier node joins, after a reconnection and
 * every 5 minutes (lib/announcements.ts), so that the notifier's copy of the contacts is made
 * whole: a user in the range but not listed was removed.
 */
export interface UsersAnnounced {
  at: number;
  after: string | null;
  through: string | null;
  users: UserContact[];
}

/**
 * Payload of `auth.credentials.changed`, a broadcast: a user's password, type, place or modules
 * changed, or the user is gone, so every cache of that user's verified credentials must go (auth's
 * replicas with a memory cacher, and each api replica's own).
 */
export interface CredentialsChanged {
  /** Lower case. */
  username: string;
  /**
   * Set when only this API token of the user was revoked: the user's password, grants and
   * sessions stand, and only caches of that user's tokens must go.
   */
  token_id?: string;
}

/** `tokens.authenticate`: whom an API token signs in, with what scope, until when. */
export interface VerifiedToken {
  principal: Principal;
  token_id: string;
  scope: TokenScope;
  /** Epoch ms: a cache of this answer must not serve it past this instant. */
  expires_at: number;
  /** Who issued the token (its user, or an admin of that user); null when not recorded. */
  issued_by: string | null;
}

/** `auth.lockout.notify`: the gateway's throttle locked sign-ins of a user; auth tells its owner, if the user exists. */
export interface LockoutNotice {
  /** Lower case. */
  username: string;
  /** The client address whose failures made the lock. */
  address: string;
  /** `address`: that username from that address; `account`: that username from every address it never signed in from. */
  scope: "address" | "account";
  /** How long the lock lasts after the last failure. */
  minutes: number;
}

export interface AuthContract {
  /** 401 `Invalid credentials` unless the password is the user's. */
  authenticate: { params: { username: string; password: string }; reply: Principal };
  /** 401 `Invalid credentials` unless the token is live (known, not revoked, not expired). */
  "tokens.authenticate": { params: { token: string }; reply: VerifiedToken };
  /** Null for an unknown user. */
  "users.resolve": { params: { username: string }; reply: UserContact | null };
  /** A read token of a notebook's owner for one run; null when that user (that record, with `owner_since`) no longer exists. */
  "tokens.issueForRun": { params: { username: string; owner_since?: number; ttl_s: number }; reply: { token_id: string; token: string } | null };
  /** False when there was no such run token. */
  "tokens.revokeForRun": { params: { token_id: string }; reply: boolean };
  /** True when an email went out (false: no such user). */
  "lockout.notify": { params: LockoutNotice; reply: boolean };
}

export const authClient = serviceClient<AuthContract>("auth");

export interface AuthEvents {
  "auth.credentials.changed": CredentialsChanged;
  "auth.user.created": UserChanged;
  "auth.user.updated": UserChanged;
  "auth.user.removed": UserRemoved;
  "auth.users.announced": UsersAnnounced;
}

export const authEvents = eventSender<AuthEvents>();
