/**
 * Tokens of notebook runs (internal, for the notebooks service): a `read` token of the
 * notebook's owner for one run, which the run's API door (services/notebooks/api-door.ts) sends
 * with each request of the kernel, and which the door revokes when the run ends. They sign in
 * like any read token, so a run reads with exactly its owner's rights; they are not the user's
 * integrations, so the token list does not show them, and a run's own audit entry says who ran it.
 */
import type { Context } from "moleculer";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import { newId } from "../../lib/ids";
import type { AuthActions } from "./context";
import { authEvents, type AuthContract } from "./contract";
import * as repo from "./repo";
import { generateToken, tokenHash } from "./tokens";

export const runTokensActions: AuthActions = {
  "tokens.issueForRun": {
    visibility: "public",
    params: { username: "string", owner_since: { type: "number", optional: true }, ttl_s: { type: "number", integer: true, min: 1 } },
    async handler(ctx: Context<ParamsOf<AuthContract, "tokens.issueForRun">>): Promise<ReplyOf<AuthContract, "tokens.issueForRun">> {
      const { username, owner_since, ttl_s } = ctx.params;
      const now = Date.now();
      // Tokens of runs that never ended (a replica died mid-run) go once expired.
      await repo.deleteExpiredRunTokens(this.db, now);
      const token = generateToken();
      const token_id = newId();
      const issued = await repo.insertRunToken(this.db, {
        token_id,
        username: username.toLowerCase(),
        owner_since: owner_since ?? null,
        token_hash: tokenHash(token),
        created_at: now,
        expires_at: now + ttl_s * 1000,
      });
      return issued ? { token_id, token } : null;
    },
  },

  "tokens.revokeForRun": {
    visibility: "public",
    params: { token_id: "string" },
    async handler(ctx: Context<ParamsOf<AuthContract, "tokens.revokeForRun">>): Promise<ReplyOf<AuthContract, "tokens.revokeForRun">> {
      const username = await repo.deleteRunToken(this.db, ctx.params.token_id);
      if (username === null) return false;
      // Every gateway replica stops trusting it before the run is recorded as ended.
      await authEvents.broadcast(this.broker, "auth.credentials.changed", { username, token_id: ctx.params.token_id });
      return true;
    },
  },
};
