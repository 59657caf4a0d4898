/**
 * Every sign-in at the gateway: HTTP Basic credentials and API tokens (each verified by auth,
 * then trusted a few seconds from the caches of principals.ts), the console's password sign-in
 * (session.actions.ts, through `guard`), the failed sign-in throttle (lib/throttle.ts) and the
 * notice its lockouts send the account's owner.
 */
import type { Context, ServiceBroker } from "moleculer";
import type { Principal } from "../../lib/access";
import { LocalCache } from "../../lib/cache";
import { config } from "../../lib/config";
import type { RequestMeta } from "../../lib/contract";
import { DomainError } from "../../lib/errors";
import { addressKey, throttledError, type Lockout, type SignInThrottle } from "../../lib/throttle";
import { authClient, type VerifiedToken } from "../auth/contract";
import { apiEvents, type SignInLocked } from "./contract";
import type { BasicCredentials } from "./http";
import type { PrincipalCache, TokenCache } from "./principals";

/** The request's context as the gateway made it: its caller's address, and the token it signed in with. */
type GatewayContext = Context<unknown, Pick<RequestMeta, "client" | "token">>;

export interface SignInOptions {
  broker: ServiceBroker;
  /** The gateway's. */
  logger: ServiceBroker["logger"];
  principals: PrincipalCache;
  tokens: TokenCache;
  /** Undefined when SIGNIN_THROTTLE=false (the benchmark's comparison). */
  throttle: SignInThrottle | undefined;
}

export class SignIn {
  /** (user, address) pairs this replica recorded as known lately, so that a verified caller is not written on every cache miss. */
  private readonly knownAddresses = new LocalCache<boolean>({ ttlMs: 10 * 60_000 });

  constructor(private readonly o: SignInOptions) {}

  private get logger(): ServiceBroker["logger"] {
    return this.o.logger;
  }

  /** A caller verified a moment ago by this very client passes at once (principals.ts); anyone else meets the throttle, then auth. */
  async basic(ctx: GatewayContext, credentials: BasicCredentials): Promise<Principal> {
    const { principals } = this.o;
    const username = credentials.username.toLowerCase();
    const verify = () => this.guard(ctx, username, () => authClient.call(ctx, "authenticate", credentials));
    if (!principals.enabled) return verify();
    const fingerprint = principals.fingerprint(username, credentials.password, ctx.meta.client);
    const cached = principals.get(username, fingerprint);
    if (cached) return cached;
    const mark = principals.mark();
    const principal = await verify();
    principals.set(username, fingerprint, principal, mark);
    return principal;
  }

  /**
   * A bearer token signs in as its user (auth answers 401 `Invalid credentials` for an unknown,
   * revoked or expired one, as for a wrong password); a `read` token may only read.
   */
  async token(ctx: GatewayContext, changes: boolean, token: string): Promise<Principal> {
    const verified = await this.verifyToken(ctx, token);
    if (verified.scope === "read" && changes) throw new DomainError(403, "Unauthorized operation");
    ctx.meta.token = {
      token_id: verified.token_id,
      scope: verified.scope,
      // An admin's token for another user: what it does is audited with the admin's name beside the user's.
      ...(verified.issued_by && verified.issued_by !== verified.principal.username ? { via_token_of: verified.issued_by } : {}),
    };
    return verified.principal;
  }

  /** Cached only until auth's broadcast drops it (revoked, or its user changed) or the token expires, whichever comes first. */
  private async verifyToken(ctx: GatewayContext, token: string): Promise<VerifiedToken> {
    const { tokens } = this.o;
    const verify = () => this.guard(ctx, null, () => authClient.call(ctx, "tokens.authenticate", { token }));
    if (!tokens.enabled) return verify();
    const fingerprint = tokens.fingerprint(token);
    const cached = tokens.get(fingerprint);
    if (cached) return cached;
    const mark = tokens.mark();
    const verified = await verify();
    tokens.set(fingerprint, verified, mark);
    return verified;
  }

  /**
   * Every sign-in (Basic, the console's session, an API token; `username` null for a token)
   * goes through here: refused with 429 while the throttle holds a lock on it, before `verify`
   * runs, so a locked-out caller costs no password hash; a 401 from `verify` counts as a
   * failure. A throttle store that does not answer (Redis away) lets the sign-in through to
   * the password check, logged: it must not lock every user out.
   */
  async guard<T>(ctx: GatewayContext, username: string | null, verify: () => Promise<T>): Promise<T> {
    const throttle = this.o.throttle;
    if (!throttle) return verify();
    const address = ctx.meta.client ?? "";
    const verdict = await throttle.check(username, address).catch((err: unknown) => {
      this.logger.warn(`sign-in throttle not applied: its store failed (${String(err)})`);
      return { allowed: true } as const;
    });
    if (!verdict.allowed) throw throttledError(verdict.retryAfterS);
    let result: T;
    try {
      result = await verify();
    } catch (err) {
      if ((err as { code?: unknown } | null)?.code === 401) await this.countFailure(throttle, username, address);
      throw err;
    }
    if (username !== null) this.rememberAddress(throttle, username, address);
    return result;
  }

  /** A lock (here or on another replica): what this replica verified lately must meet it. */
  forgetLocked(locked: SignInLocked): void {
    if (locked.address !== undefined) {
      this.o.principals.clear();
      this.o.tokens.clear();
    } else if (locked.username !== undefined) this.o.principals.forget(locked.username);
  }

  private async countFailure(throttle: SignInThrottle, username: string | null, address: string): Promise<void> {
    let lockouts: Lockout[];
    try {
      lockouts = await throttle.failed(username, address);
    } catch (err) {
      this.logger.warn(`sign-in failure not counted: the throttle's store failed (${String(err)})`);
      return;
    }
    if (lockouts.length === 0) return;
    const locked: SignInLocked = {};
    if (lockouts.includes("address")) locked.address = address;
    if (username !== null && (lockouts.includes("user-address") || lockouts.includes("user"))) locked.username = username;
    // This replica at once, before the failure is answered; the others by broadcast.
    this.forgetLocked(locked);
    apiEvents.broadcast(this.o.broker, "api.signin.locked", locked).catch((err: unknown) => this.logger.warn(`api.signin.locked not sent: ${String(err)}`));
    if (locked.username) this.notifyLockout(throttle, locked.username, address, lockouts);
  }

  /** The account's owner hears of a lock by email, once per window however many locks follow (auth sends it, if the user exists). */
  private notifyLockout(throttle: SignInThrottle, username: string, address: string, lockouts: Lockout[]): void {
    const scope = lockouts.includes("user") ? "account" : "address";
    void (async () => {
      if (!(await throttle.firstNotice(username))) return;
      await authClient.call(this.o.broker, "lockout.notify", { username, address, scope, minutes: Math.ceil(config().throttleWindowS / 60) });
    })().catch((err: unknown) => this.logger.warn(`lockout notice for ${username} not sent: ${String(err)}`));
  }

  /** A successful sign-in makes its address one the user signs in from (lib/throttle.ts); recorded once in a while, not on every miss. */
  private rememberAddress(throttle: SignInThrottle, username: string, address: string): void {
    const key = LocalCache.key(username, addressKey(address));
    if (this.knownAddresses.get(key)) return;
    this.knownAddresses.set(key, true);
    throttle.succeeded(username, address).catch((err: unknown) => this.logger.warn(`known address not recorded: ${String(err)}`));
  }
}
