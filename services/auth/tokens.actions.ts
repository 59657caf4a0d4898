/**
 * API tokens for integrations: issue, list, revoke (a user its own, an admin those of users it
 * may update), and `tokens.authenticate`, the gateway's question for `Authorization: Bearer`.
 * The rules are in tokens.ts; every query is in repo.ts.
 */
import { auditedWrite, type AuditChange } from "../../lib/audit";
import { userPlace } from "./users.actions";
import type { Context } from "moleculer";
import type { DataSource } from "typeorm";
import type { Principal } from "../../lib/access";
import type { ParamsOf, ReplyOf, RequestMeta } from "../../lib/contract";
import { DomainError, badRequest, notFound } from "../../lib/errors";
import { isId, newId } from "../../lib/ids";
import { MAX_TEXT } from "../../lib/validation";
import type { AuthActions } from "./context";
import { authEvents, type AuthContract } from "./contract";
import { MSG } from "./messages";
import { TOKEN_EXAMPLE, TOKEN_FIELDS, TOKEN_ISSUED_EXAMPLE, USER_EXAMPLE } from "./openapi";
import * as repo from "./repo";
import { principalOf, type UserRow } from "./users";
import {
  LAST_USED_EVERY_MS,
  TOKEN_MAX_DAYS,
  TOKEN_SCOPES,
  dueForTouch,
  expiresAt,
  generateToken,
  isLive,
  looksLikeToken,
  tokenHash,
  tokenRefusal,
  tokenView,
  type TokenScope,
  type TokenView,
} from "./tokens";

interface IssueParams {
  username: string;
  name: string;
  scope: TokenScope;
  expires_in_days: number;
}

const text = { type: "string", max: MAX_TEXT } as const;
const pathUser = { description: "the user whose tokens these are (username, an email address)", example: USER_EXAMPLE.username };
/** Who may manage whose tokens (tokens.ts, tokenRefusal): the users routes' own texts. */
const REFUSALS: [number, string][] = [
  [404, MSG.userNotFound],
  [403, MSG.updateForbidden],
  [403, MSG.supportAnalystCantUpdate],
  [401, MSG.plantAdminCantUpdate],
  [401, MSG.siteAdminCantUpdate],
];

/** The user whose tokens the path names, if the caller may manage them (else the users routes' refusal). */
async function ownerOfTokens(db: DataSource, caller: Principal, username: string): Promise<UserRow> {
  const target = await repo.findUser(db, username.toLowerCase());
  if (!target) throw notFound(MSG.userNotFound);
  const refusal = tokenRefusal(caller, target);
  if (refusal) throw refusal;
  return target;
}

export const tokensActions: AuthActions = {
  "tokens.issue": {
    http: {
      routes: ["POST /_config/users/:username/tokens"],
      group: "tokens",
      summary: "Issue an API token",
      description:
        "A token for an integration, sent as `Authorization: Bearer <token>` instead of Basic credentials: it acts as its user " +
        "(with the user's type, place and modules as they are when it is used); a read token may only make GET requests. " +
        "The token is answered this once and only its hash is kept. A user issues its own tokens, an admin those of users it may update; " +
        "a token cannot issue tokens. What a token an admin issued for another user does is audited with `via_token_of` naming the admin.",
      refusesTokens: true,
      fields: { username: pathUser, ...TOKEN_FIELDS },
      answer: { schema: "$TokenIssued", example: TOKEN_ISSUED_EXAMPLE },
      errors: [
        ...REFUSALS,
        [400, MSG.invalidInput("name")],
        [400, MSG.invalidInput("scope")],
        [400, MSG.invalidInput("expires_in_days")],
        [403, MSG.unauthorizedOperation],
      ],
    },
    params: {
      username: text,
      // Some visible character: a blank name says nothing in the list.
      name: { ...text, min: 1, pattern: /\S/ },
      scope: { type: "enum", values: [...TOKEN_SCOPES] },
      expires_in_days: { type: "number", integer: true, min: 1, max: TOKEN_MAX_DAYS },
    },
    async handler(ctx: Context<IssueParams, RequestMeta>): Promise<{ token_id: string; token: string }> {
      // A token that issued tokens could outlive its own expiry and revocation.
      if (ctx.meta.token) throw new DomainError(403, MSG.unauthorizedOperation);
      const target = await ownerOfTokens(this.db, ctx.meta.user, ctx.params.username);
      const token = generateToken();
      const created_at = Date.now();
      const token_id = newId();
      const expires_at = expiresAt(created_at, ctx.params.expires_in_days);
      // The entry names the token, never its secret or hash.
      const issued: AuditChange = {
        action: "token_issue",
        entity_type: "token",
        entity_id: token_id,
        ...userPlace(target),
        changes: { username: [null, target.username], name: [null, ctx.params.name], scope: [null, ctx.params.scope], expires_at: [null, new Date(expires_at).toISOString()] },
      };
      const inserted = await auditedWrite(this.db, this.streams, ctx, (ok: boolean) => (ok ? issued : null), (db) =>
        repo.insertToken(db, {
          token_id,
          username: target.username,
          name: ctx.params.name,
          scope: ctx.params.scope,
          token_hash: tokenHash(token),
          created_at,
          expires_at,
          issued_by: ctx.meta.user.username,
        }),
      );
      if (!inserted) throw notFound(MSG.userNotFound);
      return { token_id, token };
    },
  },

  "tokens.list": {
    http: {
      routes: ["GET /_config/users/:username/tokens"],
      group: "tokens",
      summary: "List a user's API tokens",
      description: "Oldest first, expired ones included until they are revoked; the tokens themselves are never shown again.",
      fields: { username: pathUser },
      answer: { schema: "$Token[]", example: [TOKEN_EXAMPLE] },
      errors: [...REFUSALS, [400, MSG.excessInputs]],
    },
    params: { username: text, $$messages: { unknown: MSG.excessInputs } },
    async handler(ctx: Context<{ username: string }, RequestMeta>): Promise<TokenView[]> {
      const target = await ownerOfTokens(this.db, ctx.meta.user, ctx.params.username);
      return (await repo.listTokens(this.db, target.username)).map(tokenView);
    },
  },

  "tokens.revoke": {
    http: {
      routes: ["DELETE /_config/users/:username/tokens/:token_id"],
      group: "tokens",
      summary: "Revoke an API token",
      description: "The token is refused at once, on every gateway replica. A token cannot revoke tokens (its own included): sign in as a person.",
      refusesTokens: true,
      fields: { username: pathUser, token_id: { description: "the token's id, from the list or the issue", example: TOKEN_EXAMPLE.token_id } },
      answer: { text: MSG.tokenRevoked },
      errors: [...REFUSALS, [400, MSG.invalidInput("token_id")], [403, MSG.unauthorizedOperation]],
    },
    params: { username: text, token_id: text },
    async handler(ctx: Context<{ username: string; token_id: string }, RequestMeta>): Promise<string> {
      // The gateway refuses it already (refusesTokens); a call from another service carrying the meta is refused alike.
      if (ctx.meta.token) throw new DomainError(403, MSG.unauthorizedOperation);
      const target = await ownerOfTokens(this.db, ctx.meta.user, ctx.params.username);
      const token_id = ctx.params.token_id.toLowerCase();
      // An id of another user's token answers as an unknown one.
      const revokedEntry: AuditChange = { action: "token_revoke", entity_type: "token", entity_id: token_id, ...userPlace(target), changes: { username: [target.username, null] } };
      const revoked =
        isId(token_id) && (await auditedWrite(this.db, this.streams, ctx, (ok: boolean) => (ok ? revokedEntry : null), (db) => repo.deleteToken(db, target.username, token_id)));
      if (!revoked) throw badRequest(MSG.invalidInput("token_id"), "token_id");
      // Before answering: the caller's next request finds no gateway replica still trusting the token.
      await authEvents.broadcast(this.broker, "auth.credentials.changed", { username: target.username, token_id });
      return MSG.tokenRevoked;
    },
  },

  /** Internal, for the gateway: whom a bearer token signs in; 401 `Invalid credentials` for any token that does not. */
  "tokens.authenticate": {
    visibility: "public",
    params: { token: "string" },
    async handler(ctx: Context<ParamsOf<AuthContract, "tokens.authenticate">>): Promise<ReplyOf<AuthContract, "tokens.authenticate">> {
      const { token } = ctx.params;
      // Unknown, revoked and expired answer alike, as a wrong password does.
      if (!looksLikeToken(token)) throw new DomainError(401, MSG.invalidCredentials);
      const found = await repo.findTokenSignIn(this.db, tokenHash(token));
      const now = Date.now();
      if (!found || !isLive(found, now)) throw new DomainError(401, MSG.invalidCredentials);
      if (dueForTouch(found, now)) await repo.touchToken(this.db, found.token_id, now, LAST_USED_EVERY_MS);
      return { principal: principalOf(found), token_id: found.token_id, scope: found.scope, expires_at: Number(found.expires_at), issued_by: found.issued_by };
    },
  },
};
