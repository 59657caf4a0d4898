/**
 * The account owner's notice of a sign-in lock (docs/security.md): the gateway's throttle
 * decides the lock and asks once per window; auth, which owns users and their emails, sends it
 * through the notifier, only to a user that exists (a stranger's guessed names get no mail).
 */
import type { Context } from "moleculer";
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import { notifierClient } from "../notifier/contract";
import type { AuthActions } from "./context";
import type { AuthContract } from "./contract";
import { EMAIL } from "./messages";
import * as repo from "./repo";

export const lockoutActions: AuthActions = {
  "lockout.notify": {
    visibility: "public",
    params: {
      username: "string",
      address: "string",
      scope: { type: "enum", values: ["address", "account"] },
      minutes: { type: "number", integer: true, positive: true },
    },
    async handler(ctx: Context<ParamsOf<AuthContract, "lockout.notify">>): Promise<ReplyOf<AuthContract, "lockout.notify">> {
      const { username, address, scope, minutes } = ctx.params;
      const user = await repo.findUser(this.db, username.toLowerCase());
      if (!user) return false;
      await notifierClient.call(ctx, "email.send", {
        to: user.username,
        subject: EMAIL.lockoutSubject,
        text: EMAIL.lockoutText(user.username, address, scope, minutes),
        // One notice per lock, however often the gateway's call is retried.
        idempotency_key: `auth:lockout:${user.username}:${scope}:${Math.floor(Date.now() / (minutes * 60_000))}`,
      });
      return true;
    },
  },
};
