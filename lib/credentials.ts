/**
 * The keyed fingerprint under which a verified credential is cached (auth in Redis, the gateway
 * in its own memory): an HMAC, so a cache key never holds the password and means nothing
 * without the process's secret.
 */
import { createHmac, createSecretKey, randomBytes, type KeyObject } from "node:crypto";

/**
 * A fresh secret for one process's fingerprints. A KeyObject, made once: an HMAC over a Buffer
 * key makes Node build a key object on every call (8 times the cost of the hash itself).
 */
export const newCredentialSecret = (): KeyObject => createSecretKey(randomBytes(32));

export function credentialFingerprint(secret: KeyObject, username: string, password: string): string {
  return createHmac("sha256", secret).update(username).update("\0").update(password).digest("base64url");
}
