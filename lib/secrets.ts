/**
 * Secrets that users store with their configuration (a pipeline's SQL or OPC-UA password, an API
 * key), encrypted at rest (docs/security.md, "Pipeline secrets encrypted at rest"). A setting is a
 * secret when its name ends in `password`, `secret`, `token`, `api_key` or `private_key`
 * (`user_password`, `apiKey` too), at any depth of the settings. Such a value is stored as
 * `{"$sealed": "v1.<iv>.<tag>.<ciphertext>"}`: AES-256-GCM of the value's JSON, so a number stays a
 * number when opened. Reads show "***"; an update that sends "***" keeps the sealed value as it is.
 *
 * The key is SECRETS_KEY (32 bytes, base64 or hex), the same on every replica; without it (the
 * embedded default) one is made once and kept in DATA_DIR/secrets.key (mode 0600), beside the
 * embedded PostgreSQL's files (DATA_DIR/pg) whose secrets it opens.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";

const KEY_BYTES = 32;
const IV_BYTES = 12;
const VERSION = "v1";
export const SECRETS_KEY_FILE = "secrets.key";
/** What reads show for a secret; the audit trail's mark too (lib/audit.ts). */
export const MASK = "***";

/** 32 bytes as 64 hex digits or as base64 (either alphabet); null for anything else. */
export function parseSecretsKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-f]{64}$/i.test(t)) return Buffer.from(t, "hex");
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) return null;
  const key = Buffer.from(t.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  return key.length === KEY_BYTES ? key : null;
}

/** The key in DATA_DIR, made on first use; `wx` so that two processes starting together keep one key. */
function keptKey(dataDir: string): Buffer {
  const file = path.join(dataDir, SECRETS_KEY_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, `${randomBytes(KEY_BYTES).toString("base64")}\n`, { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const key = parseSecretsKey(fs.readFileSync(file, "utf8"));
  if (!key) throw new Error(`${file} does not hold a secrets key (32 bytes, base64 or hex)`);
  return key;
}

let loaded: { from: string; key: Buffer } | undefined;

/** The key of this configuration: SECRETS_KEY, else the one kept under DATA_DIR. */
/** What the key is read from: AppConfig's `secretsKey` and `dataDir` (lib/config.ts imports this module, not the other way round). */
export interface SecretsKeySource {
  secretsKey: string | undefined;
  dataDir: string;
}

export function secretsKey(cfg: SecretsKeySource): Buffer {
  const from = cfg.secretsKey ?? `file:${cfg.dataDir}`;
  if (loaded?.from !== from) loaded = { from, key: cfg.secretsKey ? parseSecretsKey(cfg.secretsKey)! : keptKey(cfg.dataDir) };
  return loaded.key;
}

const SECRET_SUFFIXES = ["password", "secret", "token", "api_key", "private_key"];

/** Whether a setting's name names a secret: it ends in one of the suffixes (camelCase read as snake_case). */
export function isSecretSetting(name: string): boolean {
  const snake = name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
  return SECRET_SUFFIXES.some((s) => snake.endsWith(s));
}

export interface Sealed {
  $sealed: string;
}

export const isSealed = (v: unknown): v is Sealed =>
  typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && typeof (v as Sealed).$sealed === "string";

export function seal(key: Buffer, value: unknown): Sealed {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(value ?? null), "utf8"), cipher.final()]);
  return { $sealed: [VERSION, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(".") };
}

/** The value sealed; throws when the key is not the one it was sealed with or the text was changed. */
export function unseal(key: Buffer, sealed: Sealed): unknown {
  const [version, iv, tag, body] = sealed.$sealed.split(".");
  if (version !== VERSION || iv === undefined || tag === undefined || body === undefined) throw new Error("not a sealed secret");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  const text = Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  return JSON.parse(text) as unknown;
}

type Json = unknown;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Each secret of `value` (at any depth) through `onSecret`; everything else as it is. */
function mapSecrets(value: Json, previous: Json, onSecret: (v: unknown, previous: unknown) => unknown): Json {
  if (Array.isArray(value)) return value.map((item, i) => mapSecrets(item, Array.isArray(previous) ? previous[i] : undefined, onSecret));
  if (!isObject(value) || isSealed(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const before = isObject(previous) ? previous[k] : undefined;
    out[k] = isSecretSetting(k) && v !== null && v !== undefined ? onSecret(v, before) : mapSecrets(v, before, onSecret);
  }
  return out;
}

/**
 * The secrets of `settings` sent as "***" (keep the stored one), in order, by name, each with
 * whether `previous` holds one at that place to keep.
 */
export function maskedSecrets(settings: Record<string, unknown>, previous: Record<string, unknown>): { name: string; path: string; stored: boolean }[] {
  const out: { name: string; path: string; stored: boolean }[] = [];
  const walk = (value: Json, before: Json, at: string): void => {
    if (Array.isArray(value)) value.forEach((item, i) => walk(item, Array.isArray(before) ? before[i] : undefined, `${at}[${i}]`));
    else if (isObject(value) && !isSealed(value)) {
      for (const [k, v] of Object.entries(value)) {
        const prior = isObject(before) ? before[k] : undefined;
        const path = at ? `${at}.${k}` : k;
        if (!isSecretSetting(k)) walk(v, prior, path);
        else if (v === MASK) out.push({ name: k, path, stored: prior !== undefined && prior !== null });
      }
    }
  };
  walk(settings, previous, "");
  return out;
}

/** Last words of a setting's name that say where a connection goes or as whom (`server_address`, `server_url`, `port`, `username`, `database`). */
const DESTINATION_WORDS = new Set([
  "address",
  "addresses",
  "url",
  "urls",
  "uri",
  "host",
  "hosts",
  "hostname",
  "server",
  "servers",
  "endpoint",
  "endpoints",
  "port",
  "user",
  "username",
  "login",
  "account",
  "tenant",
  "domain",
  "database",
  "db",
  "dsn",
]);
const DESTINATION_NAMES = new Set(["user_name", "host_name", "db_name", "database_name", "client_id", "tenant_id", "account_id", "connection_string"]);

/**
 * Whether a (non-secret) setting says where a connection goes or as whom: its destination or
 * identity. `mac_address` names the gateway itself, not where it connects.
 */
export function isDestinationSetting(name: string): boolean {
  const snake = name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
  if (snake === "mac_address" || isSecretSetting(name)) return false;
  if (DESTINATION_NAMES.has(snake)) return true;
  const words = snake.split(/[^a-z0-9]+/).filter(Boolean);
  return DESTINATION_WORDS.has(words[words.length - 1] ?? "");
}

/** The destination and identity settings at any depth, by path. */
function destinations(value: Json, at: string, out: Map<string, unknown>): Map<string, unknown> {
  if (Array.isArray(value)) value.forEach((item, i) => destinations(item, `${at}[${i}]`, out));
  else if (isObject(value) && !isSealed(value)) {
    for (const [k, v] of Object.entries(value)) {
      const path = at ? `${at}.${k}` : k;
      if (isDestinationSetting(k)) out.set(path, v ?? null);
      else if (!isSecretSetting(k)) destinations(v, path, out);
    }
  }
  return out;
}

/** Whether two states of the settings differ in where a connection goes or as whom (a setting added, removed or changed). */
export function destinationChanged(before: Record<string, unknown>, after: Record<string, unknown>): boolean {
  const a = destinations(before, "", new Map());
  const b = destinations(after, "", new Map());
  return [...new Set([...a.keys(), ...b.keys()])].some((k) => !isDeepStrictEqual(a.get(k) ?? null, b.get(k) ?? null));
}

/** `settings` with each secret (at any depth) through `onSecret`. */
export const mapSecretsOf = (settings: Record<string, unknown>, onSecret: (v: unknown) => unknown): Record<string, unknown> =>
  mapSecrets(settings, undefined, (v) => onSecret(v)) as Record<string, unknown>;

/**
 * Settings as stored: every secret sealed. "***" keeps the secret of `previous` (the stored
 * settings) at the same place, sealed as it was; a secret stored in plain text by an older
 * version is sealed now.
 */
export function sealSettings(key: Buffer, settings: Record<string, unknown>, previous?: Record<string, unknown>): Record<string, unknown> {
  return mapSecrets(settings, previous, (v, before) => {
    if (v === MASK && before !== undefined && before !== null) return isSealed(before) ? before : seal(key, before);
    return seal(key, v);
  }) as Record<string, unknown>;
}

/** Settings as reads show them: every secret "***". */
export function maskSettings(settings: Record<string, unknown>): Record<string, unknown> {
  return mapSecretsOf(settings, () => MASK);
}

/** Settings as the service itself uses them (a collector connecting, a gateway's configuration): every secret opened. */
export function openSettings(key: Buffer, settings: Record<string, unknown>): Record<string, unknown> {
  return mapSecretsOf(settings, (v) => (isSealed(v) ? unseal(key, v) : v));
}

/** Whether any secret of the settings is stored in plain text (a row written before secrets were sealed). */
export function hasPlainSecret(settings: Record<string, unknown>): boolean {
  let plain = false;
  mapSecretsOf(settings, (v) => {
    if (!isSealed(v)) plain = true;
    return v;
  });
  return plain;
}
