/**
 * The auth service's contract: who a caller is (`authenticate`, the gateway's question), a user's
 * contact details (`users.resolve`, the notifier's), and the events it sends when users or their
 * credentials change.
 */
import type { Principal, UserType } from "../../lib/access";
import { eventSender, serviceClient } from "../../lib/contract";

/** Payload of the `auth.user.created|updated|removed` events. */
export interface UserEvent {
  username: string;
  user_type: UserType;
  site_id: string | null;
  plant_id: string | null;
}

/** `auth.users.resolve`: what another service (the notifier) may learn of a user. */
export interface UserContact extends UserEvent {
  mobile_number: string;
  country_code: string;
}

/**
 * Payload of `auth.credentials.changed`, a broadcast: a user's password, type, place or modules
 * changed, or the user is gone, so every cache of that user's verified credentials must go (auth's
 * replicas with a memory cacher, and each api replica's own).
 */
export interface CredentialsChanged {
  /** Lower case. */
  username: string;
}

export interface AuthContract {
  /** 401 `Invalid credentials` unless the password is the user's. */
  authenticate: { params: { username: string; password: string }; reply: Principal };
  /** Null for an unknown user. */
  "users.resolve": { params: { username: string }; reply: UserContact | null };
}

export const authClient = serviceClient<AuthContract>("auth");

export interface AuthEvents {
  "auth.credentials.changed": CredentialsChanged;
  "auth.user.created": UserEvent;
  "auth.user.updated": UserEvent;
  "auth.user.removed": UserEvent;
}

export const authEvents = eventSender<AuthEvents>();
