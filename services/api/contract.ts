/** The api gateway's contract: the broadcast its replicas send one another when sign-in throttling locks someone out. */
import { eventSender } from "../../lib/contract";

/**
 * Payload of `api.signin.locked`, a broadcast to every api replica: a sign-in lock began, so the
 * callers each replica verified recently (its principal cache, which a request that hits it
 * passes without asking the throttle) must be verified afresh, and meet the lock.
 */
export interface SignInLocked {
  /** Lower case; set when a username is locked (from one address, or from addresses it never used). */
  username?: string;
  /** Set when a whole address is locked: every user's cached callers go. */
  address?: string;
}

export interface ApiEvents {
  "api.signin.locked": SignInLocked;
}

export const apiEvents = eventSender<ApiEvents>();
