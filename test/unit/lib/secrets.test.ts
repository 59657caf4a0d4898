/** Secrets sealed at rest (lib/secrets.ts; docs/security.md, "Pipeline secrets encrypted at rest"): which settings are secrets, sealing, masking, "***" kept, the key kept under DATA_DIR. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import {
  destinationChanged,
  hasPlainSecret,
  isDestinationSetting,
  isSealed,
  isSecretSetting,
  maskedSecrets,
  maskSettings,
  openSettings,
  parseSecretsKey,
  seal,
  sealSettings,
  secretsKey,
  SECRETS_KEY_FILE,
  unseal,
} from "../../../lib/secrets";
import { sealPlain } from "../../../services/pipelines/settings";

const key = randomBytes(32);

describe("secret settings", () => {
  it("are those whose name ends in password, secret, token, api_key or private_key", () => {
    for (const name of ["password", "user_password", "client_secret", "token", "refresh_token", "api_key", "apiKey", "private_key", "sshPrivateKey"]) {
      expect({ name, secret: isSecretSetting(name) }).toEqual({ name, secret: true });
    }
    for (const name of ["user_name", "server_url", "mac_address", "token_url", "secret_name", "port"]) expect({ name, secret: isSecretSetting(name) }).toEqual({ name, secret: false });
  });
});

describe("sealing", () => {
  it("opens what it sealed, types kept, and nothing sealed with another key or changed", () => {
    for (const value of ["s3cret", 1234, "", { nested: true }]) expect(unseal(key, seal(key, value))).toEqual(value);
    const sealed = seal(key, "s3cret");
    expect(sealed.$sealed).not.toContain("s3cret");
    expect(seal(key, "s3cret").$sealed).not.toBe(sealed.$sealed);
    expect(() => unseal(randomBytes(32), sealed)).toThrow();
    const [v, iv, tag, body] = sealed.$sealed.split(".");
    // The body's first character changed (one in 64 bodies already starts with "A").
    const changed = `${body!.startsWith("A") ? "B" : "A"}${body!.slice(1)}`;
    expect(() => unseal(key, { $sealed: [v, iv, tag, changed].join(".") })).toThrow();
  });

  it("seals the secrets of settings at any depth, shows them as ***, and opens them for the service", () => {
    const settings = { server_url: "opc.tcp://plc:4840", user_name: "ops", user_password: "Pa55", config: { api_key: "k-1", table: "t" }, none_token: null };
    const stored = sealSettings(key, settings);
    expect(JSON.stringify(stored)).not.toMatch(/Pa55|k-1/);
    expect(isSealed(stored.user_password)).toBe(true);
    expect(stored.none_token).toBeNull();
    expect(maskSettings(stored)).toEqual({ ...settings, user_password: "***", config: { api_key: "***", table: "t" } });
    expect(openSettings(key, stored)).toEqual(settings);
  });

  it("keeps a stored secret sent back as ***, sealed as it was, and seals a new one", () => {
    const stored = sealSettings(key, { user_password: "Pa55", api_key: "k-1" });
    const next = sealSettings(key, { user_password: "***", api_key: "k-2" }, stored);
    expect(next.user_password).toEqual(stored.user_password);
    expect(openSettings(key, next)).toEqual({ user_password: "Pa55", api_key: "k-2" });
    // Nothing stored to keep: "***" is the value given.
    expect(openSettings(key, sealSettings(key, { user_password: "***" }))).toEqual({ user_password: "***" });
  });

  it("reads a secret stored in plain text before (and the migration seals only those)", () => {
    const legacy = { user_password: "Pa55", other: "x" };
    expect(hasPlainSecret(legacy)).toBe(true);
    expect(openSettings(key, legacy)).toEqual(legacy);
    expect(maskSettings(legacy)).toEqual({ user_password: "***", other: "x" });
    const migrated = sealPlain(key, { ...legacy, api_key: seal(key, "k") });
    expect(hasPlainSecret(migrated)).toBe(false);
    expect(openSettings(key, migrated)).toEqual({ ...legacy, api_key: "k" });
  });
});

describe("the key", () => {
  it("is SECRETS_KEY as 64 hex digits or base64 of 32 bytes", () => {
    expect(parseSecretsKey(key.toString("hex"))).toEqual(key);
    expect(parseSecretsKey(key.toString("base64"))).toEqual(key);
    expect(parseSecretsKey(key.toString("base64url"))).toEqual(key);
    expect(parseSecretsKey("short")).toBeNull();
    expect(parseSecretsKey(randomBytes(16).toString("base64"))).toBeNull();
  });

  it("without SECRETS_KEY: made once under DATA_DIR, mode 0600, the same at every start", () => {
    const dataDir = path.join(os.tmpdir(), `ims-secrets-${randomBytes(4).toString("hex")}`);
    try {
      const first = secretsKey({ secretsKey: undefined, dataDir });
      const file = path.join(dataDir, SECRETS_KEY_FILE);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(secretsKey({ secretsKey: key.toString("hex"), dataDir })).toEqual(key);
      expect(secretsKey({ secretsKey: undefined, dataDir })).toEqual(first);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("a secret kept as *** and where the connection goes", () => {
  const stored = { mac_address: "02:00:00:00:00:01", server_address: "10.0.0.5", port: 1433, username: "reader", password: { $sealed: "v1.a.b.c" }, config: { database: "mes", table: "t" } };

  it("names the destination and identity settings, not the gateway's own MAC or the secrets", () => {
    for (const n of ["server_address", "server_url", "port", "username", "user_name", "database", "host", "endpointUrl", "client_id", "ip_address"]) expect({ n, d: isDestinationSetting(n) }).toEqual({ n, d: true });
    for (const n of ["mac_address", "sampling_rate", "table", "time_field", "password", "user_password", "report", "api_key"]) expect({ n, d: isDestinationSetting(n) }).toEqual({ n, d: false });
  });

  it("tells a changed, added or removed destination at any depth from other changes", () => {
    expect(destinationChanged(stored, { ...stored, password: "***", config: { ...stored.config, table: "u" } })).toBe(false);
    expect(destinationChanged(stored, { ...stored, mac_address: "02:00:00:00:00:02" })).toBe(false);
    for (const after of [{ ...stored, port: 1434 }, { ...stored, username: "sa" }, { ...stored, config: { ...stored.config, database: "master" } }, { ...stored, host: "x" }, { ...stored, server_address: undefined }]) {
      expect(destinationChanged(stored, after)).toBe(true);
    }
  });

  it("lists the secrets sent as *** with their place and whether one is stored there", () => {
    expect(maskedSecrets({ ...stored, password: "***", extra: { api_key: "***" } }, stored)).toEqual([
      { name: "password", path: "password", stored: true },
      { name: "api_key", path: "extra.api_key", stored: false },
    ]);
    expect(maskedSecrets({ ...stored, password: "new" }, stored)).toEqual([]);
  });
});
