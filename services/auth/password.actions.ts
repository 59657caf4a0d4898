/**
 * Password reset by a one-time password sent by email, without an Authorization header: ask
 * for a code, check it, set a new password with it (otp.ts).
 */
import type { Context } from "moleculer";
import { THROTTLED_MESSAGE } from "../../lib/throttle";
import { MAX_TEXT, type InputMessages } from "../../lib/validation";
import type { AuthActions } from "./auth.types";
import { MSG } from "./messages";
import { RESET_FIELDS } from "./openapi";
import * as otp from "./otp";
import { OTP_TTL_MS } from "./otp";

const text = { type: "string", max: MAX_TEXT } as const;

/** Password-reset bodies answer every input fault with the spec's one text. */
const resetMessages: InputMessages = {
  insufficient: MSG.invalidRequestBody,
  unknown: MSG.invalidRequestBody,
  invalid: MSG.invalidRequestBody,
};

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
    handler(ctx: Context<{ email: string }>) {
      return otp.requestOtp(this.system(ctx), ctx.params);
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
    handler(ctx: Context<{ email: string; otp: string }>) {
      return otp.validateOtp(this.system(ctx), ctx.params);
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
    handler(ctx: Context<{ email: string; otp: string; new_password: string }>) {
      return otp.resetPassword(this.system(ctx), ctx.params);
    },
  },
};
