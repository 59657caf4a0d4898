/**
 * The console's sign-in (docs/security.md, the console session): `POST /_auth/session` checks a
 * password as Basic does (throttled alike) and answers with a session cookie; `GET` tells who is
 * signed in; `DELETE` signs out. Owned by the gateway, not by auth: a session is how the gateway
 * knows a browser (as Basic and tokens are for other callers), it is read on every request the
 * console makes, before any service is called, and it lives in the cacher beside the gateway's
 * other state; auth is asked for the password check only, as for Basic.
 */
import type { ActionSchema, Context, Service, ServiceSettingSchema } from "moleculer";
import type { ModuleName, Principal, UserType } from "../../lib/access";
import { DomainError } from "../../lib/errors";
import { arr, obj, str } from "../../lib/openapi-schema";
import { THROTTLED_MESSAGE } from "../../lib/throttle";
import { authClient } from "../auth/contract";
import { clearedSessionCookie, sessionCookie, type SessionStore } from "./sessions";

/** What the gateway puts in the meta of a session route. */
export interface SessionMeta {
  user?: Principal | null;
  /** The caller's address. */
  client?: string;
  /** The request came over TLS (or through a trusted proxy that says so): the cookie is `Secure`. */
  https?: boolean;
  /** The session id of the request's cookie; only on the session routes. */
  sessionId?: string;
  $responseHeaders?: Record<string, string>;
}

/** What the session actions need of the gateway. */
export interface SessionHost {
  sessions: SessionStore;
  signIn<T>(ctx: Context<unknown, SessionMeta>, username: string | null, verify: () => Promise<T>): Promise<T>;
}

/** The gateway as the handlers see it (its settings as api.service.ts types them). */
type SessionThis = Service<ServiceSettingSchema & { port: number } & Record<string, unknown>> & SessionHost;

/** The answer of sign-in and of "who is signed in". */
export interface SessionView {
  username: string;
  user_type: UserType;
  modules: ModuleName[];
}

export const SESSION_SCHEMAS = {
  Session: obj({ username: str, user_type: str, modules: arr(str) }, ["username", "user_type", "modules"]),
};

export const MSG = {
  invalidCredentials: "Invalid credentials",
  throttled: THROTTLED_MESSAGE,
  signedOut: "Signed out successfully", // ours
  unauthorizedOperation: "Unauthorized operation",
} as const;

const view = (p: Principal): SessionView => ({ username: p.username, user_type: p.user_type, modules: p.modules });
const EXAMPLE: SessionView = { username: "admin@localhost", user_type: "saas-admin", modules: ["Configuration", "Alerting"] };

export const sessionActions: Record<string, ActionSchema<SessionThis>> = {
  "session.create": {
    http: {
      routes: ["POST /_auth/session"],
      group: "session",
      summary: "Sign in to the console: start a session",
      description:
        "Checks the password as HTTP Basic does (and is throttled alike), then sets the session cookie `ims_session` " +
        "(HttpOnly, SameSite=Strict, Secure over https), which every route accepts instead of Basic until SESSION_TTL_S " +
        "(8 h by default) pass without a request. A change made with the cookie must carry `X-Requested-With: ims-console`.",
      fields: {
        username: { description: "the user's email address", example: "admin@localhost" },
        password: { description: "the user's password", example: "AdminPass123" },
      },
      answer: { schema: "$Session", example: EXAMPLE },
      errors: [
        [401, MSG.invalidCredentials],
        [403, MSG.unauthorizedOperation],
        [429, MSG.throttled],
      ],
    },
    params: { username: "string", password: "string" },
    async handler(ctx: Context<{ username: string; password: string }, SessionMeta>): Promise<SessionView> {
      const previous = ctx.meta.sessionId;
      // The id is for this gateway only: it does not travel with the call to auth.
      delete ctx.meta.sessionId;
      const username = ctx.params.username.toLowerCase();
      // Before the password check: a sign-in that races a password change is made under the old epoch, and ends.
      const epoch = await this.sessions.epoch(username);
      const { username: name, password } = ctx.params;
      const principal = await this.signIn(ctx, username, () => authClient.call(ctx, "authenticate", { username: name, password }));
      if (previous) await this.sessions.end(previous);
      const id = await this.sessions.create(principal, epoch);
      ctx.meta.$responseHeaders = { ...ctx.meta.$responseHeaders, "Set-Cookie": sessionCookie(id, ctx.meta.https === true) };
      return view(principal);
    },
  },

  "session.get": {
    http: {
      routes: ["GET /_auth/session"],
      group: "session",
      summary: "Who is signed in to the console",
      description: "Reads the session cookie; 401 when there is no live session.",
      answer: { schema: "$Session", example: EXAMPLE },
      errors: [[401, MSG.invalidCredentials]],
    },
    params: {},
    handler(ctx: Context<unknown, SessionMeta>): SessionView {
      if (!ctx.meta.user) throw new DomainError(401, MSG.invalidCredentials);
      return view(ctx.meta.user);
    },
  },

  "session.remove": {
    http: {
      routes: ["DELETE /_auth/session"],
      group: "session",
      summary: "Sign out of the console",
      description: "Ends the session of the cookie and clears the cookie; 401 when there is no live session. Needs `X-Requested-With: ims-console`.",
      answer: { text: MSG.signedOut },
      errors: [
        [401, MSG.invalidCredentials],
        [403, MSG.unauthorizedOperation],
      ],
    },
    params: {},
    async handler(ctx: Context<unknown, SessionMeta>): Promise<string> {
      // As GET: nobody is signed in with this cookie (none, expired, or already ended).
      if (!ctx.meta.user || !ctx.meta.sessionId) throw new DomainError(401, MSG.invalidCredentials);
      await this.sessions.end(ctx.meta.sessionId);
      ctx.meta.$responseHeaders = { ...ctx.meta.$responseHeaders, "Set-Cookie": clearedSessionCookie(ctx.meta.https === true) };
      return MSG.signedOut;
    },
  },
};
