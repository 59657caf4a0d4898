/** The audit log's chain (services/config/audit.ts): canonical JSON, the hash of each row, the walk of `_verify`, who reads what. */
import { auditEntry } from "../../../lib/audit";
import type { Principal } from "../../../lib/access";
import {
  auditScope,
  canonicalEntry,
  canonicalJson,
  chainHash,
  GENESIS,
  normalizeEntry,
  requireVerifier,
  startWalk,
  walkRow,
  type AuditRow,
  type ChainedEntry,
} from "../../../services/config/audit";

const user = (user_type: Principal["user_type"], site_id: string | null = null): Principal => ({ username: "u", user_type, site_id, plant_id: null, modules: [] });

/** Rows as appendEntries writes them. */
function chain(n: number): AuditRow[] {
  let prev = GENESIS;
  const rows: AuditRow[] = [];
  for (let i = 1; i <= n; i++) {
    const e: ChainedEntry = {
      ...auditEntry({ requestID: `r${i}`, meta: {} }, { action: "update", entity_type: "asset", entity_id: `a${i}`, changes: { asset_name: [`old ${i}`, `new ${i}`] } }, 1_767_000_000_000 + i),
      id: i,
    };
    const hash = chainHash(prev, e);
    rows.push({
      id: String(i),
      entry_id: e.entry_id,
      at: String(e.at),
      actor: e.actor,
      user_type: e.user_type,
      action: e.action,
      entity_type: e.entity_type,
      entity_id: e.entity_id,
      site_id: e.site_id,
      plant_id: e.plant_id,
      request_id: e.request_id,
      client: e.client,
      changes: canonicalJson(e.changes),
      via_token_of: e.via_token_of ?? null,
      prev_hash: prev,
      hash,
    });
    prev = hash;
  }
  return rows;
}

const verify = (rows: AuditRow[]) => rows.reduce(walkRow, startWalk());

describe("canonicalJson", () => {
  it("writes one text for one value: keys sorted at every depth, no spaces", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: null, y: "x" }], c: true } })).toBe('{"a":{"c":true,"d":[1,{"y":"x","z":null}]},"b":1}');
    expect(canonicalJson({ a: undefined, b: Number.NaN })).toBe('{"b":null}');
  });
});

describe("canonicalEntry", () => {
  it("writes an entry as canonicalJson does, with or without the changes' text given", () => {
    const entries: ChainedEntry[] = [
      { ...auditEntry({ requestID: "r", meta: { client: "10.0.0.1" } }, { action: "update", entity_type: "monitor", entity_id: "m1", site_id: "s", changes: { "tags[0].thresholds.warning": ["7.1", 9], b: [null, { z: 1, a: [true, "x"] }] } }), id: 7 },
      { ...auditEntry({ meta: {} }, { action: "sign_in_failure", entity_type: "user", entity_id: null, actor: { username: "who\"ever", user_type: null } }), id: 1 },
    ];
    for (const e of entries) {
      expect(canonicalEntry(e)).toBe(canonicalJson(e));
      expect(canonicalEntry(e, canonicalJson(e.changes))).toBe(canonicalJson(e));
      expect(chainHash(GENESIS, e, canonicalJson(e.changes))).toBe(chainHash(GENESIS, e));
    }
    // Not the known fields (one missing, one more): the generic way, the same text.
    const { client: _client, ...without } = entries[0]!;
    expect(canonicalEntry(without as ChainedEntry)).toBe(canonicalJson(without));
    const extra = { ...entries[0]!, note: "x" } as ChainedEntry;
    expect(canonicalEntry(extra)).toBe(canonicalJson(extra));
  });

  it("keeps the hash of an entry appended before it was written field by field", () => {
    const e: ChainedEntry = {
      id: 3,
      entry_id: "0b7e4f7c-2d7a-4c52-9d0e-6f1f2a3b4c5d",
      at: 1_767_000_000_123,
      actor: "asha.patil@example.com",
      user_type: "plant-admin",
      action: "update",
      entity_type: "monitor",
      entity_id: "1a2b",
      site_id: "5d0c",
      plant_id: null,
      request_id: "req-1",
      client: "10.20.4.17",
      changes: { "tags[0].thresholds.warning": ["7.1", "9"], password: ["***", "***"] },
    };
    // The text and hash the generic walk gave before canonicalEntry existed.
    expect(canonicalEntry(e)).toBe(
      '{"action":"update","actor":"asha.patil@example.com","at":1767000000123,"changes":{"password":["***","***"],"tags[0].thresholds.warning":["7.1","9"]},' +
        '"client":"10.20.4.17","entity_id":"1a2b","entity_type":"monitor","entry_id":"0b7e4f7c-2d7a-4c52-9d0e-6f1f2a3b4c5d","id":3,"plant_id":null,' +
        '"request_id":"req-1","site_id":"5d0c","user_type":"plant-admin"}',
    );
  });
});

describe("the walk of _verify", () => {
  it("passes an untouched chain and counts its entries", () => {
    expect(verify(chain(5))).toMatchObject({ entries: 5, firstBadId: null });
  });

  it("finds a row whose content was changed, whichever column", () => {
    for (const [column, value] of [
      ["changes", '{"asset_name":["old 3","forged"]}'],
      ["actor", "someone.else"],
      ["at", "1767000009999"],
      ["entity_id", "a99"],
      // via_token_of: a forged issuer on an entry made without one breaks the chain too.
      ["via_token_of", "someone.else"],
    ] as const) {
      const rows = chain(5);
      rows[2] = { ...rows[2]!, [column]: value };
      expect({ column, ...verify(rows) }).toMatchObject({ column, entries: 5, firstBadId: 3 });
    }
  });

  it("finds a row removed (the next one names a hash that is not its predecessor's) and a row whose hash was recomputed", () => {
    const rows = chain(5);
    expect(verify([...rows.slice(0, 2), ...rows.slice(3)]).firstBadId).toBe(4);
    const forged = chain(5);
    const changed = { ...forged[1]!, changes: '{"asset_name":["x","y"]}' };
    // Rehashing the changed row is not enough: the next row still names the old hash.
    forged[1] = { ...changed, hash: chainHash(changed.prev_hash, rowEntry(changed)) };
    expect(verify(forged).firstBadId).toBe(3);
  });

  it("takes text that is not JSON in `changes` as a change", () => {
    const rows = chain(2);
    rows[0] = { ...rows[0]!, changes: "not json" };
    expect(verify(rows).firstBadId).toBe(1);
  });
});

function rowEntry(r: AuditRow): ChainedEntry {
  return {
    id: Number(r.id),
    entry_id: r.entry_id,
    at: Number(r.at),
    actor: r.actor,
    user_type: null,
    action: "update",
    entity_type: "asset",
    entity_id: r.entity_id,
    site_id: r.site_id,
    plant_id: r.plant_id,
    request_id: r.request_id,
    client: r.client,
    changes: JSON.parse(r.changes),
  };
}

describe("normalizeEntry", () => {
  it("stores whatever a producer sent: ids in lower case, secrets redacted again, a missing entry id from the message", () => {
    const e = normalizeEntry({ at: 5, actor: "a\u0000b", user_type: "wizard", action: "update", entity_type: "asset", entity_id: "ABC", changes: { password: ["p", "q"] } }, "msg-1");
    expect(e).toMatchObject({ entry_id: "msg-1", at: 5, actor: "a\uFFFDb", user_type: null, entity_id: "abc", changes: { password: ["***", "***"] } });
    expect(normalizeEntry(null, "m2")).toMatchObject({ entry_id: "m2", action: "update", entity_type: "unknown", changes: {} });
  });
});

describe("via_token_of", () => {
  const change = { action: "update", entity_type: "asset", entity_id: "a1" } as const;

  it("names the admin whose token another user's change was made with, and only then", () => {
    const token = { token_id: "t", scope: "write" } as const;
    expect(auditEntry({ meta: { user: user("plant-admin"), token: { ...token, via_token_of: "admin@localhost" } } }, change).via_token_of).toBe("admin@localhost");
    expect(auditEntry({ meta: { user: user("plant-admin"), token } }, change)).not.toHaveProperty("via_token_of");
    // An entry whose actor is not the caller (a failed sign-in, a reset) is not the token's doing.
    expect(auditEntry({ meta: { token: { ...token, via_token_of: "admin@localhost" } } }, { ...change, actor: { username: "x", user_type: null } })).not.toHaveProperty("via_token_of");
  });

  it("is kept by the consumer and hashed with the entry; an entry without it hashes as before", () => {
    const e = normalizeEntry({ ...change, at: 5, actor: "u", via_token_of: "admin@localhost", changes: {} }, "m1");
    expect(e.via_token_of).toBe("admin@localhost");
    expect(normalizeEntry({ ...change, at: 5, actor: "u", changes: {} }, "m1")).not.toHaveProperty("via_token_of");
    const chained: ChainedEntry = { ...e, id: 1 };
    const { via_token_of: _dropped, ...without } = chained;
    expect(chainHash(GENESIS, chained)).not.toBe(chainHash(GENESIS, without));
    expect(canonicalEntry(without)).toBe(canonicalJson(without));
  });
});

describe("who reads the trail", () => {
  it("a SaaS admin every entry, a site admin its site's, anyone else is refused with 403", () => {
    expect(auditScope(user("saas-admin"))).toEqual({ site_id: null });
    expect(auditScope(user("site-admin", "S1"))).toEqual({ site_id: "s1" });
    for (const t of ["support-analyst", "plant-admin", "general-user"] as const) {
      expect(() => auditScope(user(t, "s1"))).toThrow("Unauthorized operation");
    }
    expect(() => requireVerifier(user("site-admin", "s1"))).toThrow("Unauthorized operation");
    expect(() => requireVerifier(user("saas-admin"))).not.toThrow();
  });
});
