/**
 * The console's sessions (docs/security.md, the console session), kept in the broker's cacher
 * (Redis in a cluster, so every api replica knows them; memory in the embedded default) and named
 * by a random id that only the browser's HttpOnly cookie holds: the cacher keeps a hash of it,
 * never the id itself.
 *
 * Expiry is idle time: each use pushes it SESSION_TTL_S further (rewritten at most once a minute,
 * so a busy console does not write on every request).
 *
 * A user's sessions all end when auth broadcasts `auth.credentials.changed` (password, type,
 * place or modules changed, or the user deleted): the gateway writes a new "sign-in epoch" for
 * the user, and a session made under another epoch is ended on its next use. The epoch is read
 * before the password is checked, so a sign-in racing a password change is made under the old
 * epoch and ends too. An epoch outlives every session older than it (twice the idle time): a
 * session from before it either was used meanwhile, and ended, or idled out.
 */
import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Principal } from "../../lib/access";
import type { SharedCache } from "../../lib/cache";
import { newId } from "../../lib/ids";

export const SESSION_COOKIE = "ims_session";
/** A use this long after the last write rewrites the session with a fresh time to live (sooner for a short SESSION_TTL_S). */
const RENEW_AFTER_MS = 60_000;

interface StoredSession {
  principal: Principal;
  /** The user's sign-in epoch when the session began; null: there was none. */
  epoch: string | null;
  /** When the session was last written (epoch ms). */
  touched: number;
}

const sessionKey = (id: string): string => `api.session:${createHash("sha256").update(id).digest("base64url")}`;
const epochKey = (username: string): string => `api.session-epoch:${username.toLowerCase()}`;

/** The session id of the request's cookie, if it carries one of the right shape. */
export function sessionIdOf(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const at = part.indexOf("=");
    if (at < 0 || part.slice(0, at).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(at + 1).trim();
    if (/^[A-Za-z0-9_-]{43}$/.test(value)) return value;
  }
  return undefined;
}

/** The cookie that carries a session: out of scripts' reach, never sent by another site's page, only over TLS when the request came so. */
export function sessionCookie(id: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

/** The cookie that makes the browser forget its session. */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

export class SessionStore {
  private readonly renewAfterMs: number;

  constructor(
    private readonly shared: SharedCache,
    private readonly ttlS: number,
    private readonly now: () => number = Date.now,
  ) {
    this.renewAfterMs = Math.min(RENEW_AFTER_MS, ttlS * 250);
  }

  /** The user's sign-in epoch: read before the password is checked, given to `create`. */
  async epoch(username: string): Promise<string | null> {
    return (await this.shared.get<string>(epochKey(username))) ?? null;
  }

  /** A new session of the principal; its id, for the cookie. */
  async create(principal: Principal, epoch: string | null): Promise<string> {
    const id = randomBytes(32).toString("base64url");
    const session: StoredSession = { principal, epoch, touched: this.now() };
    await this.shared.set(sessionKey(id), session, this.ttlS);
    return id;
  }

  /** The principal of a live session, its idle time renewed; undefined when there is none (expired, ended, or its user changed). */
  async resume(id: string): Promise<Principal | undefined> {
    const key = sessionKey(id);
    const session = await this.shared.get<StoredSession>(key);
    if (!session) return undefined;
    const epoch = await this.epoch(session.principal.username);
    if (epoch !== null && epoch !== session.epoch) {
      await this.shared.del(key);
      return undefined;
    }
    const now = this.now();
    if (now - session.touched >= this.renewAfterMs) await this.shared.set(key, { ...session, touched: now }, this.ttlS);
    return session.principal;
  }

  async end(id: string): Promise<void> {
    await this.shared.del(sessionKey(id));
  }

  /** Ends every session of the user, on every replica (they read the epoch from the shared cacher). */
  async endAllOf(username: string): Promise<void> {
    await this.shared.set(epochKey(username), newId(), 2 * this.ttlS);
  }
}
