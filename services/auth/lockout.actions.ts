/** Internal, for the gateway's sign-in throttle: the account owner's notice of a lock (lockout.ts). */
import type { Context } from "moleculer";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import type { AuthActions } from "./auth.types";
import type { AuthContract } from "./contract";
import { notifyLockout } from "./lockout";

export const lockoutActions: AuthActions = {
  "lockout.notify": {
    visibility: "public",
    params: {
      username: "string",
      address: "string",
      scope: { type: "enum", values: ["address", "account"] },
      minutes: { type: "number", integer: true, positive: true },
    },
    handler(ctx: Context<ParamsOf<AuthContract, "lockout.notify">>): Promise<ReplyOf<AuthContract, "lockout.notify">> {
      return notifyLockout(this.system(ctx), ctx.params);
    },
  },
};
