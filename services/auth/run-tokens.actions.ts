/** Tokens of notebook runs (internal, for the notebooks service; run-tokens.ts). */
import type { Context } from "moleculer";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import type { AuthActions } from "./auth.types";
import type { AuthContract } from "./contract";
import * as runTokens from "./run-tokens";

export const runTokensActions: AuthActions = {
  "tokens.issueForRun": {
    visibility: "public",
    params: { username: "string", owner_since: { type: "number", optional: true }, ttl_s: { type: "number", integer: true, min: 1 } },
    handler(ctx: Context<ParamsOf<AuthContract, "tokens.issueForRun">>): Promise<ReplyOf<AuthContract, "tokens.issueForRun">> {
      return runTokens.issueRunToken(this.system(ctx), ctx.params);
    },
  },

  "tokens.revokeForRun": {
    visibility: "public",
    params: { token_id: "string" },
    handler(ctx: Context<ParamsOf<AuthContract, "tokens.revokeForRun">>): Promise<ReplyOf<AuthContract, "tokens.revokeForRun">> {
      return runTokens.revokeRunToken(this.system(ctx), ctx.params);
    },
  },
};
