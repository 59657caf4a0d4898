/**
 * The password-reset OTP (contract: 6 digits, valid 10 minutes, stored hashed, single use, at
 * most 5 wrong tries before it is void). Pure: what a check of a stored OTP comes to.
 */
export const OTP_TTL_MS = 10 * 60_000;
export const OTP_MAX_WRONG_TRIES = 5;

/** A row of auth.otps; one live OTP per user, replaced by the next one requested. */
export interface OtpRow {
  username: string;
  otp_hash: string;
  expires_at: string;
  attempts: number;
  verified: boolean;
}

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
