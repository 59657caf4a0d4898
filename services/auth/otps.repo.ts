/** The SQL of password-reset OTPs (auth.otps). */
import type { EntityManager } from "typeorm";
import type { Queryable } from "./port";

/** A row of auth.otps; one live OTP per user, replaced by the next one requested. */
export interface OtpRow {
  username: string;
  otp_hash: string;
  expires_at: string;
  attempts: number;
  verified: boolean;
}

/** A new OTP replaces the previous one and its count of wrong tries. */
export async function saveOtp(db: Queryable, username: string, otpHash: string, expiresAt: number): Promise<void> {
  await db.query(
    `INSERT INTO otps (username, otp_hash, expires_at, attempts, verified) VALUES ($1, $2, $3, 0, false)
     ON CONFLICT (username) DO UPDATE SET otp_hash = EXCLUDED.otp_hash, expires_at = EXCLUDED.expires_at, attempts = 0, verified = false`,
    [username, otpHash, expiresAt],
  );
}

/** The user's OTP, its row locked until the transaction `tx` ends. */
export async function lockOtp(tx: EntityManager, username: string): Promise<OtpRow | undefined> {
  const rows: OtpRow[] = await tx.query(`SELECT * FROM otps WHERE username = $1 FOR UPDATE`, [username]);
  return rows[0];
}

export async function markOtpVerified(db: Queryable, username: string): Promise<void> {
  await db.query(`UPDATE otps SET verified = true WHERE username = $1`, [username]);
}

export async function setOtpAttempts(db: Queryable, username: string, attempts: number): Promise<void> {
  await db.query(`UPDATE otps SET attempts = $2 WHERE username = $1`, [username, attempts]);
}

export async function deleteOtp(db: Queryable, username: string): Promise<void> {
  await db.query(`DELETE FROM otps WHERE username = $1`, [username]);
}

