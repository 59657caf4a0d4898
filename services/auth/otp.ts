/**
 * Password reset by a one-time password sent by email (6 digits, valid 10 minutes,
 * stored hashed, single use, at most 5 wrong tries before it is void): what a check of a stored
 * OTP comes to, and the three operations over the port, asked without signing in.
 */
import { randomBytes } from "node:crypto";
import type { EntityManager } from "typeorm";
import { REDACTED, type AuditChange } from "../../lib/audit";
import { DomainError, conflict, badRequest, internal, isDatabaseUnavailable, notFound } from "../../lib/errors";
import { throttledError } from "../../lib/throttle";
import { forgetCredentials } from "./credential-cache";
import { EMAIL, MSG } from "./messages";
import type { OtpRow } from "./otps.repo";
import * as otps from "./otps.repo";
import { generateOtp, hashOtp, hashPassword, isStrongPassword, verifyPassword } from "./passwords";
import type { AuthPort } from "./port";
import * as tokens from "./tokens.repo";
import * as users from "./users.repo";
import type { UserRow } from "./users.repo";

export const OTP_TTL_MS = 10 * 60_000;
export const OTP_MAX_WRONG_TRIES = 5;

/**
 * - `none`: no live OTP (never requested, already used, or void after too many wrong tries);
 * - `expired`: requested, but more than 10 minutes ago;
 * - `live`: worth comparing the code with.
 */
export type OtpState = "none" | "expired" | "live";

export function otpState(row: OtpRow | undefined, now: number): OtpState {
  if (!row || row.attempts >= OTP_MAX_WRONG_TRIES) return "none";
  return Number(row.expires_at) <= now ? "expired" : "live";
}

/** A wrong code counts; the one that reaches the limit voids the OTP. */
export function wrongTry(row: OtpRow): { attempts: number; void: boolean } {
  const attempts = row.attempts + 1;
  return { attempts, void: attempts >= OTP_MAX_WRONG_TRIES };
}

/** Only the shape of an OTP is worth a slow hash comparison. */
export const looksLikeOtp = (otp: string): boolean => /^[0-9]{6}$/.test(otp);

type OtpTry = "none" | "expired" | "wrong" | "match";

/** A reset is asked and made without signing in: the entry's actor is the user it is for. */
const resetChange = (action: AuditChange["action"], user: UserRow, changes: AuditChange["changes"]): AuditChange => ({
  action,
  entity_type: "user",
  entity_id: user.username,
  site_id: user.site_id,
  plant_id: user.plant_id === "*" ? null : user.plant_id,
  changes,
  actor: { username: user.username, user_type: user.user_type },
});

/**
 * One try of a code against the user's OTP, under a row lock so parallel guesses are all
 * counted. The try is committed before the caller answers, whatever the answer is.
 */
function tryOtp(port: AuthPort, username: string, otp: string, onMatch: (tx: EntityManager) => Promise<void>): Promise<OtpTry> {
  return port.db.transaction(async (tx): Promise<OtpTry> => {
    const row = await otps.lockOtp(tx, username);
    const state = otpState(row, Date.now());
    if (!row || state !== "live") return state === "live" ? "none" : state;
    if (looksLikeOtp(otp) && (await verifyPassword(row.otp_hash, otp))) {
      await onMatch(tx);
      return "match";
    }
    const next = wrongTry(row);
    if (next.void) await otps.deleteOtp(tx, username);
    else await otps.setOtpAttempts(tx, username, next.attempts);
    return "wrong";
  });
}

/** Op 43: emails a new code, which replaces any code sent before. */
export async function requestOtp(port: AuthPort, p: { email: string }): Promise<string> {
  const username = p.email.toLowerCase();
  // At most 3 codes per email per 15 minutes (docs/security.md), counted before anything is looked up or sent.
  const verdict = await port.otpLimit.take(username).catch((err: unknown) => {
    port.logger.warn(`OTP request limit not applied: its store failed (${String(err)})`);
    return { allowed: true } as const;
  });
  if (!verdict.allowed) throw throttledError(verdict.retryAfterS);
  const user = await users.findUser(port.db, username);
  if (!user) throw conflict(MSG.userDoesNotExist);
  const otp = generateOtp();
  const now = Date.now();
  try {
    const otpHash = await hashOtp(otp);
    // The email is sent before the commit, so an OTP that could not be sent never becomes live.
    await port.db.transaction(async (tx) => {
      await otps.saveOtp(tx, username, otpHash, now + OTP_TTL_MS);
      await port.stageAudit(tx, resetChange("otp_request", user, { otp: [null, REDACTED] }));
      await port.sendEmail({
        to: username,
        subject: EMAIL.otpSubject,
        text: EMAIL.otpText(otp, OTP_TTL_MS / 60_000),
        idempotency_key: `auth:otp:${username}:${now}:${randomBytes(4).toString("hex")}`,
        sensitive: true,
      });
    });
  } catch (err) {
    // The database away: 503 (lib/errors.ts), which the user may retry; not a failed generation.
    if (isDatabaseUnavailable(err)) throw err;
    port.logger.error("OTP generation failed", err);
    throw internal(MSG.otpGenerateFailed);
  }
  return MSG.otpSent;
}

/** Op 44. 401 `Invalid OTP`: a live OTP that the code does not match; 404 `Invalid OTP`: no live OTP at all. */
export async function validateOtp(port: AuthPort, p: { email: string; otp: string }): Promise<string> {
  const username = p.email.toLowerCase();
  if (!(await users.findUser(port.db, username))) throw conflict(MSG.userDoesNotExist);
  const outcome = await tryOtp(port, username, p.otp, (tx) => otps.markOtpVerified(tx, username));
  if (outcome === "none") throw notFound(MSG.invalidOtp);
  if (outcome === "expired") throw conflict(MSG.otpExpired);
  if (outcome === "wrong") throw new DomainError(401, MSG.invalidOtp);
  return MSG.otpVerified;
}

/** Op 45. The OTP is used up by the change; a wrong code counts as a wrong try and, as the spec lists no 401 here, answers 404. */
export async function resetPassword(port: AuthPort, p: { email: string; otp: string; new_password: string }): Promise<string> {
  const username = p.email.toLowerCase();
  if (!isStrongPassword(p.new_password)) throw badRequest(MSG.weakPassword);
  const user = await users.findUser(port.db, username);
  if (!user) throw conflict(MSG.userDoesNotExist);
  const passwordHash = await hashPassword(p.new_password);
  let outcome: OtpTry;
  try {
    outcome = await tryOtp(port, username, p.otp, async (tx) => {
      await users.setPasswordHash(tx, username, passwordHash);
      await otps.deleteOtp(tx, username);
      // Whoever knew the old password may have issued tokens with it: a reset revokes them all (docs/security.md).
      const revoked = await tokens.deleteTokensOf(tx, username);
      const changes = { password: [REDACTED, REDACTED] as [unknown, unknown], ...(revoked > 0 ? { revoked_tokens: [revoked, 0] as [unknown, unknown] } : {}) };
      await port.stageAudit(tx, resetChange("password_reset", user, changes));
    });
  } catch (err) {
    if (isDatabaseUnavailable(err)) throw err;
    port.logger.error("password update failed", err);
    throw internal(MSG.passwordUpdateFailed);
  }
  if (outcome === "none" || outcome === "wrong") throw notFound(MSG.requestNewOtp);
  if (outcome === "expired") throw conflict(MSG.otpExpired);
  await forgetCredentials(port, username);
  return MSG.passwordUpdated;
}
