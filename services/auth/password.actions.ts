/**
 * Password reset by a one-time password sent by email, without an Authorization header: ask
 * for a code, check it, set a new password with it. The code's rules are in otp.ts.
 */
import { randomBytes } from "node:crypto";
import type { Context } from "moleculer";
import type { DataSource, EntityManager } from "typeorm";
import { REDACTED, stageAudit, type AuditChange } from "../../lib/audit";
import { DomainError, badRequest, conflict, internal, isDatabaseUnavailable, notFound } from "../../lib/errors";
import { THROTTLED_MESSAGE, throttledError } from "../../lib/throttle";
import { MAX_TEXT, type InputMessages } from "../../lib/validation";
import { notifierClient } from "../notifier/contract";
import type { AuthActions } from "./context";
import { EMAIL, MSG } from "./messages";
import { RESET_FIELDS } from "./openapi";
import { OTP_TTL_MS, looksLikeOtp, otpState, wrongTry } from "./otp";
import { generateOtp, hashOtp, hashPassword, isStrongPassword, verifyPassword } from "./passwords";
import * as repo from "./repo";
import type { UserRow } from "./users";

const text = { type: "string", max: MAX_TEXT } as const;

/** Password-reset bodies answer every input fault with the spec's one text. */
const resetMessages: InputMessages = {
  insufficient: MSG.invalidRequestBody,
  unknown: MSG.invalidRequestBody,
  invalid: MSG.invalidRequestBody,
};

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
function tryOtp(db: DataSource, username: string, otp: string, onMatch: (tx: EntityManager) => Promise<void>): Promise<OtpTry> {
  return db.transaction(async (tx): Promise<OtpTry> => {
    const row = await repo.lockOtp(tx, username);
    const state = otpState(row, Date.now());
    if (!row || state !== "live") return state === "live" ? "none" : state;
    if (looksLikeOtp(otp) && (await verifyPassword(row.otp_hash, otp))) {
      await onMatch(tx);
      return "match";
    }
    const next = wrongTry(row);
    if (next.void) await repo.deleteOtp(tx, username);
    else await repo.setOtpAttempts(tx, username, next.attempts);
    return "wrong";
  });
}

export const passwordActions: AuthActions = {
  "password.generateOtp": {
    http: {
      op: 43,
      routes: ["POST /_config/users/password/generate_otp"],
      group: "password",
      summary: "Email a one-time password for a password reset",
      description: `The code is valid ${OTP_TTL_MS / 60_000} minutes and replaces any code sent before. Not with an API token (403).`,
      refusesTokens: true,
      fields: { email: RESET_FIELDS.email },
      answer: { text: MSG.otpSent },
      errors: [[409, MSG.userDoesNotExist], [403, MSG.unauthorizedOperation], [429, THROTTLED_MESSAGE], [500, MSG.otpGenerateFailed]],
    },
    params: { email: text },
    async handler(ctx: Context<{ email: string }>) {
      const username = ctx.params.email.toLowerCase();
      // At most 3 codes per email per 15 minutes (docs/security.md), counted before anything is looked up or sent.
      const verdict = await this.otpLimit.take(username).catch((err: unknown) => {
        this.logger.warn(`OTP request limit not applied: its store failed (${String(err)})`);
        return { allowed: true } as const;
      });
      if (!verdict.allowed) throw throttledError(verdict.retryAfterS);
      const user = await repo.findUser(this.db, username);
      if (!user) throw conflict(MSG.userDoesNotExist);
      const otp = generateOtp();
      const now = Date.now();
      try {
        const otpHash = await hashOtp(otp);
        // The email is sent before the commit, so an OTP that could not be sent never becomes live.
        await this.db.transaction(async (tx) => {
          await repo.saveOtp(tx, username, otpHash, now + OTP_TTL_MS);
          await stageAudit(this.streams, tx, ctx, resetChange("otp_request", user, { otp: [null, REDACTED] }));
          await notifierClient.call(ctx, "email.send", {
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
        this.logger.error("OTP generation failed", err);
        throw internal(MSG.otpGenerateFailed);
      }
      return MSG.otpSent;
    },
  },

  /** 401 `Invalid OTP`: a live OTP that the code does not match; 404 `Invalid OTP`: no live OTP at all. */
  "password.validateOtp": {
    http: {
      op: 44,
      // The second path is the one a request form of the spec uses.
      routes: ["POST /_config/users/password/validate_otp", "POST /_config/users/validate_otp"],
      group: "password",
      summary: "Check a one-time password",
      description: "A wrong code counts as a wrong try; the code stays usable for the password update.",
      fields: { email: RESET_FIELDS.email, otp: RESET_FIELDS.otp },
      answer: { text: MSG.otpVerified },
      errors: [
        [400, MSG.invalidRequestBody],
        [401, MSG.invalidOtp],
        [404, MSG.invalidOtp],
        [409, MSG.otpExpired],
        [409, MSG.userDoesNotExist],
      ],
    },
    params: { email: text, otp: text, $$messages: resetMessages },
    async handler(ctx: Context<{ email: string; otp: string }>) {
      const username = ctx.params.email.toLowerCase();
      if (!(await repo.findUser(this.db, username))) throw conflict(MSG.userDoesNotExist);
      const outcome = await tryOtp(this.db, username, ctx.params.otp, (tx) => repo.markOtpVerified(tx, username));
      if (outcome === "none") throw notFound(MSG.invalidOtp);
      if (outcome === "expired") throw conflict(MSG.otpExpired);
      if (outcome === "wrong") throw new DomainError(401, MSG.invalidOtp);
      return MSG.otpVerified;
    },
  },

  /** The OTP is used up by the change; a wrong code counts as a wrong try and, as the spec lists no 401 here, answers 404. */
  "password.update": {
    http: {
      op: 45,
      routes: ["PUT /_config/users/password"],
      group: "password",
      summary: "Set a new password with a one-time password",
      description: "The code is used up by the change, and every API token of the user is revoked. Not with an API token (403).",
      refusesTokens: true,
      fields: RESET_FIELDS,
      answer: { text: MSG.passwordUpdated },
      errors: [
        [400, MSG.invalidRequestBody],
        [400, MSG.weakPassword],
        [404, MSG.requestNewOtp],
        [409, MSG.otpExpired],
        [409, MSG.userDoesNotExist],
        [403, MSG.unauthorizedOperation],
        [500, MSG.passwordUpdateFailed],
      ],
    },
    params: { email: text, otp: text, new_password: text, $$messages: resetMessages },
    async handler(ctx: Context<{ email: string; otp: string; new_password: string }>) {
      const username = ctx.params.email.toLowerCase();
      if (!isStrongPassword(ctx.params.new_password)) throw badRequest(MSG.weakPassword);
      const user = await repo.findUser(this.db, username);
      if (!user) throw conflict(MSG.userDoesNotExist);
      const passwordHash = await hashPassword(ctx.params.new_password);
      let outcome: OtpTry;
      try {
        outcome = await tryOtp(this.db, username, ctx.params.otp, async (tx) => {
          await repo.setPasswordHash(tx, username, passwordHash);
          await repo.deleteOtp(tx, username);
          // Whoever knew the old password may have issued tokens with it: a reset revokes them all (docs/security.md).
          const revoked = await repo.deleteTokensOf(tx, username);
          const changes = { password: [REDACTED, REDACTED] as [unknown, unknown], ...(revoked > 0 ? { revoked_tokens: [revoked, 0] as [unknown, unknown] } : {}) };
          await stageAudit(this.streams, tx, ctx, resetChange("password_reset", user, changes));
        });
      } catch (err) {
        if (isDatabaseUnavailable(err)) throw err;
        this.logger.error("password update failed", err);
        throw internal(MSG.passwordUpdateFailed);
      }
      if (outcome === "none" || outcome === "wrong") throw notFound(MSG.requestNewOtp);
      if (outcome === "expired") throw conflict(MSG.otpExpired);
      await this.forgetCredentials(username);
      return MSG.passwordUpdated;
    },
  },
};
