/** The address guard (lib/source-guard.ts; docs/security.md, "Addresses users give"): spellings of one address, the refused networks, SOURCE_ALLOW, the service's own endpoints. */
import { canonicalAddress, ownEndpoints, parseSourceAllow, SourceGuard, specialKind, type Lookup } from "../../../lib/source-guard";

/** Names resolved from a table, as a DNS would answer them; an IP literal answers itself. */
const dns =
  (table: Record<string, string[]>): Lookup =>
  async (host) => {
    if (canonicalAddress(host)) return [host];
    const found = table[host];
    if (!found) throw Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" });
    return found;
  };

const own = ownEndpoints({
  databaseUrl: "postgres://ims:pw@db.internal:5432/ims",
  redisUrl: "redis://cache.internal",
  transporter: "nats://bus-1.internal:4222,nats://bus-2.internal:4223",
});
const table = {
  "db.internal": ["10.0.0.5"],
  "cache.internal": ["10.0.0.6"],
  "bus-1.internal": ["10.0.0.7"],
  "bus-2.internal": ["10.0.0.8"],
  "mes.plant.example": ["203.0.113.10"],
  "rebind.example": ["203.0.113.11", "127.0.0.1"],
  "metadata.example": ["169.254.169.254"],
  localhost: ["127.0.0.1", "::1"],
};
const guard = (allow = "") => new SourceGuard({ own, allow: parseSourceAllow(allow), lookup: dns(table) });

describe("addresses", () => {
  it("reads every spelling of one address as one", () => {
    expect(canonicalAddress("::ffff:127.0.0.1")).toBe("127.0.0.1");
    expect(canonicalAddress("::ffff:7f00:1")).toBe("127.0.0.1");
    expect(canonicalAddress("[::1]")).toBe("0:0:0:0:0:0:0:1");
    expect(canonicalAddress("0:0:0:0:0:0:0:1")).toBe("0:0:0:0:0:0:0:1");
    expect(canonicalAddress("db.internal")).toBeNull();
  });

  it("knows loopback, link-local and unspecified addresses, IPv4-mapped ones too", () => {
    for (const a of ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"]) expect(specialKind(a)).toBe("loopback");
    for (const a of ["169.254.169.254", "fe80::1", "febf::1", "::ffff:169.254.169.254"]) expect(specialKind(a)).toBe("link-local");
    for (const a of ["0.0.0.0", "::", "0.1.2.3", "::ffff:0.0.0.0"]) expect(specialKind(a)).toBe("unspecified");
    for (const a of ["10.0.0.1", "203.0.113.10", "fec0::1", "2001:db8::1"]) expect(specialKind(a)).toBeNull();
  });

  it("takes SOURCE_ALLOW entries as host, host:port, [v6]:port or CIDR, and refuses anything else", () => {
    expect(parseSourceAllow(" 127.0.0.1:3306, localhost ,10.0.0.0/8,[::1]:5432, fe80::/10")).toHaveLength(5);
    expect(parseSourceAllow("")).toEqual([]);
    for (const bad of ["10.0.0.0/33", "host:99999", "a:b:c/x", "::1/129"]) expect(() => parseSourceAllow(bad)).toThrow(/SOURCE_ALLOW/);
  });

  it("finds the service's own endpoints in DATABASE_URL, REDIS_URL and every TRANSPORTER URL, default ports included", () => {
    expect(own).toEqual([
      { host: "db.internal", port: 5432 },
      { host: "cache.internal", port: 6379 },
      { host: "bus-1.internal", port: 4222 },
      { host: "bus-2.internal", port: 4223 },
    ]);
    expect(ownEndpoints({ databaseUrl: "postgres://u@[::1]/x", redisUrl: undefined, transporter: "NATS" })).toEqual([{ host: "::1", port: 5432 }]);
  });
});

describe("SourceGuard", () => {
  it("lets an ordinary server through, to the address it checked", async () => {
    expect(await guard().check("mes.plant.example", 1433)).toEqual({ allowed: true, address: "203.0.113.10" });
  });

  it("refuses the service's own database, cache and bus however named, whatever SOURCE_ALLOW says", async () => {
    const g = guard("10.0.0.0/8,db.internal:5432");
    for (const [host, port] of [["db.internal", 5432], ["10.0.0.5", 5432], ["::ffff:10.0.0.5", 5432], ["cache.internal", 6379], ["10.0.0.8", 4223]] as const) {
      expect(await g.check(host, port)).toMatchObject({ allowed: false });
    }
    // Another port of the same host is not the service's.
    expect(await g.check("10.0.0.5", 3306)).toMatchObject({ allowed: true });
  });

  it("refuses loopback, link-local and unspecified addresses unless SOURCE_ALLOW names them, by host, host:port or CIDR", async () => {
    for (const host of ["127.0.0.1", "localhost", "::1", "[::1]", "::ffff:127.0.0.1", "169.254.169.254", "metadata.example", "0.0.0.0", "fe80::1"]) {
      expect({ host, ...(await guard().check(host, 3306)) }).toMatchObject({ host, allowed: false });
    }
    expect(await guard("127.0.0.1:3306").check("127.0.0.1", 3306)).toEqual({ allowed: true, address: "127.0.0.1" });
    expect(await guard("127.0.0.1:3306").check("127.0.0.1", 3307)).toMatchObject({ allowed: false });
    expect(await guard("localhost:3306").check("localhost", 3306)).toMatchObject({ allowed: true });
    expect(await guard("169.254.0.0/16").check("169.254.169.254", 80)).toMatchObject({ allowed: true });
  });

  it("checks every address a name resolves to: one loopback among them refuses the name", async () => {
    expect(await guard().check("rebind.example", 5432)).toMatchObject({ allowed: false });
  });

  it("never opens the service's own loopback database, even by another loopback spelling", async () => {
    const local = new SourceGuard({
      own: ownEndpoints({ databaseUrl: "postgres://postgres@127.0.0.1:5432/ims_x", redisUrl: undefined, transporter: undefined }),
      allow: parseSourceAllow("127.0.0.0/8,::1,localhost"),
      lookup: dns(table),
    });
    for (const host of ["127.0.0.1", "127.0.0.2", "localhost", "::1", "0.0.0.0"]) expect({ host, ...(await local.check(host, 5432)) }).toMatchObject({ host, allowed: false });
    expect(await local.check("127.0.0.1", 3306)).toMatchObject({ allowed: true });
  });

  it("refuses a name that does not resolve, without trying it", async () => {
    expect(await guard().check("nowhere.example", 5432)).toMatchObject({ allowed: false, reason: "nowhere.example does not resolve" });
  });
});
