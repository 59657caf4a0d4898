/**
 * Passwords: argon2id hashes (slow and salted), the strength rule of the spec, and the keyed
 * fingerprint (lib/credentials.ts) under which a verified credential is cached so a request does not pay a hash.
 */
import { randomBytes, randomInt } from "node:crypto";
import argon2 from "argon2";

/** The spec's strength rule, in its words (the docs show it beside every password field). */
export const PASSWORD_RULE = "Password must be at least 9 characters long and include a mix of uppercase, lowercase, and numbers.";
export const WEAK_PASSWORD = `Weak password: ${PASSWORD_RULE}`;

export function isStrongPassword(password: string): boolean {
  return password.length >= 9 && /[a-z]/.test(password) && /[A-Z]/.test(password) && /[0-9]/.test(password);
}

export const hashPassword = (password: string): Promise<string> => argon2.hash(password, { type: argon2.argon2id });

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

/** A password that satisfies the strength rule, for users created without one. */
export function generatePassword(): string {
  const base = randomBytes(12).toString("base64url");
  return `${base}aA1`;
}

/**
 * OTPs are hashed with argon2id too, at OWASP's minimum profile (19 MiB, 2 passes) rather than
 * the passwords' heavier default: an OTP lives 10 minutes and allows 5 tries, and each try is
 * checked under a row lock, so a lighter hash keeps the lock short and still costs an offline
 * guesser about 0.1 s a code.
 */
const OTP_HASH = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const hashOtp = (otp: string): Promise<string> => argon2.hash(otp, OTP_HASH);

export function generateOtp(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, "0");
}

export { credentialFingerprint, newCredentialSecret } from "../../lib/credentials";
