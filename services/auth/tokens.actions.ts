/**
 * API tokens for integrations: issue, list, revoke (a user its own, an admin those of users it
 * may update), and `tokens.authenticate`, the gateway's question for `Authorization: Bearer`.
 * The rules and operations are in tokens.ts.
 */
import type { Context } from "moleculer";
import type { ParamsOf, ReplyOf, RequestMeta } from "../../lib/contract";
import { MAX_TEXT } from "../../lib/validation";
import type { AuthActions } from "./auth.types";
import type { AuthContract } from "./contract";
import { MSG } from "./messages";
import { TOKEN_EXAMPLE, TOKEN_FIELDS, TOKEN_ISSUED_EXAMPLE, USER_EXAMPLE } from "./openapi";
import * as tokens from "./tokens";
import { TOKEN_MAX_DAYS, TOKEN_SCOPES, type IssueParams, type TokenView } from "./tokens";

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
    handler(ctx: Context<IssueParams, RequestMeta>): Promise<{ token_id: string; token: string }> {
      return tokens.issueToken(this.use(ctx), ctx.params);
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
    handler(ctx: Context<{ username: string }, RequestMeta>): Promise<TokenView[]> {
      return tokens.listTokens(this.use(ctx), ctx.params);
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
    handler(ctx: Context<{ username: string; token_id: string }, RequestMeta>): Promise<string> {
      return tokens.revokeToken(this.use(ctx), ctx.params);
    },
  },

  /** Internal, for the gateway: whom a bearer token signs in; 401 `Invalid credentials` for any token that does not. */
  "tokens.authenticate": {
    visibility: "public",
    params: { token: "string" },
    handler(ctx: Context<ParamsOf<AuthContract, "tokens.authenticate">>): Promise<ReplyOf<AuthContract, "tokens.authenticate">> {
      return tokens.authenticateToken(this.system(ctx), ctx.params);
    },
  },
};
