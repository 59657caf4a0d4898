/** Internal: who the caller of an HTTP request is (credentials.ts). */
import type { Context } from "moleculer";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import type { AuthActions } from "./auth.types";
import type { AuthContract } from "./contract";
import * as credentials from "./credentials";

export const credentialsActions: AuthActions = {
  /** Who the caller of an HTTP request is; 401 `Invalid credentials` otherwise. */
  authenticate: {
    visibility: "public",
    params: { username: "string", password: "string" },
    handler(ctx: Context<ParamsOf<AuthContract, "authenticate">>): Promise<ReplyOf<AuthContract, "authenticate">> {
      return credentials.authenticate(this.system(ctx), ctx.params);
    },
  },
};
