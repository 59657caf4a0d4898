/** The audit trail's producing side (lib/audit.ts): secrets redacted by name, the diff of two states, an entry's who and where. */
import { auditEntry, diff, isSecretField, redact, REDACTED } from "../../../lib/audit";
import type { Principal } from "../../../lib/access";

const ADMIN: Principal = { username: "asha@example.com", user_type: "plant-admin", site_id: "s1", plant_id: "p1", modules: [] };

describe("isSecretField", () => {
  it.each(["password", "new_password", "user_password", "password_hash", "otp", "otp_hash", "token", "ingest_key", "ingestKey", "api_key", "secret", "apiKey", "authorization", "key"])(
    "%s names a secret",
    (name) => expect(isSecretField(name)).toBe(true),
  );
  it.each(["token_id", "username", "site_id", "monitor_name", "tags", "thresholds", "mobile_number", "keyboard", "passenger_count", "monkey"])(
    "%s does not",
    (name) => expect(isSecretField(name)).toBe(false),
  );
});

describe("redact", () => {
  it("replaces secrets at any depth, keeps the rest, and says whether a secret was set", () => {
    const settings = { server_url: "opc.tcp://historian:4840", user_name: "opc", user_password: "hunter2", nested: [{ password: 1234 }, { password: null }] };
    expect(redact(settings)).toEqual({
      server_url: "opc.tcp://historian:4840",
      user_name: "opc",
      user_password: REDACTED,
      nested: [{ password: REDACTED }, { password: null }],
    });
    expect(JSON.stringify(redact(settings))).not.toContain("hunter2");
  });

  it("makes text storable: no NUL, bounded length; non-finite numbers are null", () => {
    expect(redact("a\u0000b")).toBe("a\uFFFDb");
    expect((redact("x".repeat(10_000)) as string).length).toBeLessThan(4100);
    expect(redact(Number.NaN)).toBeNull();
  });
});

describe("diff", () => {
  it("lists a create's fields as [null, new] and a delete's as [old, null]", () => {
    expect(diff(null, { asset_name: "Pump", is_critical: "Yes", password_hash: "$argon2id$x" })).toEqual({
      asset_name: [null, "Pump"],
      is_critical: [null, "Yes"],
      password_hash: [null, REDACTED],
    });
    expect(diff({ asset_name: "Pump" }, null)).toEqual({ asset_name: ["Pump", null] });
  });

  it("names what changed inside objects and equally long lists by path; the unchanged is left out", () => {
    const before = { monitor_name: "Bearing", tags: [{ tag_id: "vib", thresholds: { caution: "4.5", warning: "7.1" } }], attributes: { kw: 7.5 } };
    const after = { monitor_name: "Bearing", tags: [{ tag_id: "vib", thresholds: { caution: "4.5", warning: "9" } }], attributes: { kw: 11, rpm: 1480 } };
    expect(diff(before, after)).toEqual({
      "tags[0].thresholds.warning": ["7.1", "9"],
      "attributes.kw": [7.5, 11],
      "attributes.rpm": [null, 1480],
    });
  });

  it("shows a list whose length changed whole, and a secret that changed only as ***", () => {
    expect(diff({ modules: ["Alerting"] }, { modules: ["Alerting", "Notebooks"] })).toEqual({ modules: [["Alerting"], ["Alerting", "Notebooks"]] });
    const changed = diff({ settings: { user_password: "old-secret" } }, { settings: { user_password: "new-secret" } });
    expect(changed).toEqual({ "settings.user_password": [REDACTED, REDACTED] });
    expect(diff({ password_hash: "a" }, { password_hash: "b" })).toEqual({ password_hash: [REDACTED, REDACTED] });
    expect(diff({ password_hash: "a" }, { password_hash: "a" })).toEqual({});
  });
});

describe("auditEntry", () => {
  it("takes who, the request id and the client from the request, and redacts changes given by hand", () => {
    const entry = auditEntry(
      { requestID: "req-1", meta: { user: ADMIN, client: "10.0.0.7" } },
      { action: "update", entity_type: "user", entity_id: "bob@example.com", site_id: "s1", plant_id: null, changes: { password: ["x", "y"], mobile_number: ["1", "2"] } },
      1_767_000_000_000,
    );
    expect(entry).toMatchObject({
      at: 1_767_000_000_000,
      actor: "asha@example.com",
      user_type: "plant-admin",
      action: "update",
      entity_type: "user",
      entity_id: "bob@example.com",
      site_id: "s1",
      plant_id: null,
      request_id: "req-1",
      client: "10.0.0.7",
      changes: { password: [REDACTED, REDACTED], mobile_number: ["1", "2"] },
    });
    expect(entry.entry_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("names the actor a change gives (a failed sign-in's username); a system change has none", () => {
    const failed = auditEntry({ meta: {} }, { action: "sign_in_failure", entity_type: "user", entity_id: "eve", actor: { username: "eve", user_type: null } });
    expect(failed).toMatchObject({ actor: "eve", user_type: null, request_id: null, client: null, changes: {} });
    expect(auditEntry({ meta: {} }, { action: "update", entity_type: "watcher", entity_id: "w" })).toMatchObject({ actor: null, user_type: null });
  });
});
