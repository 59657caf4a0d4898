/**
 * The account owner's notice of a sign-in lock (docs/security.md): the gateway's throttle
 * decides the lock and asks once per window; auth, which owns users and their emails, sends it
 * through the notifier, only to a user that exists (a stranger's guessed names get no mail).
 */
import type { ParamsOf, ReplyOf } from "../../lib/contract";
import type { AuthContract } from "./contract";
import { EMAIL } from "./messages";
import type { AuthPort } from "./port";
import * as users from "./users.repo";

export async function notifyLockout(port: AuthPort, p: ParamsOf<AuthContract, "lockout.notify">): Promise<ReplyOf<AuthContract, "lockout.notify">> {
  const { username, address, scope, minutes } = p;
  const user = await users.findUser(port.db, username.toLowerCase());
  if (!user) return false;
  await port.sendEmail({
    to: user.username,
    subject: EMAIL.lockoutSubject,
    text: EMAIL.lockoutText(user.username, address, scope, minutes),
    // One notice per lock, however often the gateway's call is retried.
    idempotency_key: `auth:lockout:${user.username}:${scope}:${Math.floor(Date.now() / (minutes * 60_000))}`,
  });
  return true;
}
