/**
 * The address guard (lib/source-guard.ts; docs/security.md): spellings of one address, the refused networks, SOURCE_ALLOW, the service's
 * own endpoints, this machine's interface addresses, cloud metadata services, IPv4 carried in IPv6. Literal addresses only: no test
 * here opens a connection (the guard is given a table for DNS and a list for the machine's interfaces).
 */
import { canonicalAddress, embeddedIPv4, localAddresses, ownEndpoints, parseSourceAllow, SourceGuard, specialKind, type Lookup } from "../../../lib/source-guard";

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
/** This machine's interfaces, as the guard is told them: loopback, a LAN address, an IPv6 one. */
const interfaces = () => ["127.0.0.1", "::1", "192.0.2.44", "2001:db8:5::44", "fe80::44"];
const guard = (allow = "") => new SourceGuard({ own, allow: parseSourceAllow(allow), lookup: dns(table), localAddresses: interfaces });

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

describe("this machine's interface addresses", () => {
  it("refuses every address of this machine on every port, unless SOURCE_ALLOW names it", async () => {
    for (const host of ["192.0.2.44", "::ffff:192.0.2.44", "2001:db8:5::44", "[2001:db8:5:0::44]"]) {
      for (const port of [22, 80, 3306, 8080, 65535]) {
        expect({ host, port, ...(await guard().check(host, port)) }).toMatchObject({ host, port, allowed: false, reason: expect.stringMatching(/an address of this machine/) });
      }
    }
    expect(await guard("192.0.2.44:3306").check("192.0.2.44", 3306)).toEqual({ allowed: true, address: "192.0.2.44" });
    expect(await guard("192.0.2.44:3306").check("192.0.2.44", 3307)).toMatchObject({ allowed: false });
    expect(await guard("2001:db8:5::/64").check("2001:db8:5::44", 1433)).toMatchObject({ allowed: true });
    // Another address of the same network is not this machine's.
    expect(await guard().check("192.0.2.45", 3306)).toMatchObject({ allowed: true });
  });

  it("reads the machine's real interfaces by default: each of them is refused", async () => {
    const real = new SourceGuard({ own: [], allow: [], lookup: dns({}) });
    const addresses = localAddresses();
    expect(addresses.length).toBeGreaterThan(0);
    for (const a of addresses) expect({ a, ...(await real.check(a, 4840)) }).toMatchObject({ a, allowed: false });
  });
});

describe("cloud metadata services", () => {
  it("refuses AWS's IPv6, Alibaba's, Google's IPv6 and Azure's metadata addresses on any port, unless SOURCE_ALLOW names them", async () => {
    for (const host of ["fd00:ec2::254", "FD00:EC2:0:0:0:0:0:254", "100.100.100.200", "::ffff:100.100.100.200", "fd20:ce::254", "168.63.129.16"]) {
      expect(specialKind(host)).toBe("cloud metadata");
      for (const port of [80, 443, 3306]) {
        expect({ host, port, ...(await guard().check(host, port)) }).toMatchObject({ host, port, allowed: false, reason: expect.stringMatching(/cloud metadata/) });
      }
    }
    // Their neighbours are ordinary addresses.
    for (const a of ["fd00:ec2::253", "100.100.100.201", "fd20:ce::255"]) expect(specialKind(a)).toBeNull();
    expect(await guard("100.100.100.200:80").check("100.100.100.200", 80)).toMatchObject({ allowed: true });
    expect(await guard("[fd00:ec2::254]:80").check("fd00:ec2::254", 80)).toMatchObject({ allowed: true });
  });
});

describe("IPv4 carried in IPv6", () => {
  it("decodes IPv4-compatible, SIIT, NAT64 (well-known and local-use), 6to4 and Teredo addresses", () => {
    expect(embeddedIPv4("::127.0.0.1")).toEqual(["127.0.0.1"]);
    expect(embeddedIPv4("::7f00:1")).toEqual(["127.0.0.1"]);
    expect(embeddedIPv4("::ffff:0:169.254.169.254")).toEqual(["169.254.169.254"]);
    expect(embeddedIPv4("64:ff9b::10.0.0.5")).toEqual(["10.0.0.5"]);
    expect(embeddedIPv4("64:ff9b::a9fe:a9fe")).toEqual(["169.254.169.254"]);
    expect(embeddedIPv4("64:ff9b:1::7f00:1")).toContain("127.0.0.1");
    // RFC 6052's /48 layout: bits 48-63 and 72-87; its /56 layout: bits 56-63 and 72-95.
    expect(embeddedIPv4("64:ff9b:1:7f00:0:100::")).toContain("127.0.0.1");
    expect(embeddedIPv4("64:ff9b:1:a9:fe:a9fe::")).toContain("169.254.169.254");
    expect(embeddedIPv4("2002:7f00:1::")).toEqual(["127.0.0.1"]);
    expect(embeddedIPv4("2002:a9fe:a9fe::1")).toEqual(["169.254.169.254"]);
    // Teredo: server 192.0.2.1, client 127.0.0.1 inverted (80ff:fffe).
    expect(embeddedIPv4("2001:0:c000:201::80ff:fffe")).toEqual(["192.0.2.1", "127.0.0.1"]);
    // Not an embedding: an IPv4-mapped address is the IPv4 address itself; others carry none.
    expect(embeddedIPv4("::ffff:127.0.0.1")).toEqual([]);
    for (const a of ["2001:db8::7f00:1", "fd00::7f00:1", "64:ff9c::7f00:1", "10.0.0.1", "db.internal"]) expect(embeddedIPv4(a)).toEqual([]);
  });

  it("applies the IPv4 rules to the carried address: loopback, link-local, unspecified, metadata, this machine", async () => {
    const refused = [
      "::127.0.0.1",
      "::7f00:1",
      "::169.254.169.254",
      "::ffff:0:127.0.0.1",
      "::ffff:0:a9fe:a9fe",
      "64:ff9b::127.0.0.1",
      "64:ff9b::a9fe:a9fe",
      "64:ff9b::0.0.0.0",
      "64:ff9b::100.100.100.200",
      "64:ff9b:1::127.0.0.1",
      "64:ff9b:1:7f00:0:100::",
      "64:ff9b:1:a9:fe:a9fe::",
      "2002:7f00:1::",
      "2002:a9fe:a9fe::",
      "2002:c000:22c::1",
      "2001:0:c000:201::80ff:fffe",
      "64:ff9b::192.0.2.44",
    ];
    for (const host of refused) expect({ host, ...(await guard().check(host, 3306)) }).toMatchObject({ host, allowed: false });
    expect(await guard().check("64:ff9b::a9fe:a9fe", 80)).toEqual({ allowed: false, reason: "169.254.169.254 (in 64:ff9b:0:0:0:0:a9fe:a9fe) is link-local and SOURCE_ALLOW does not name it" });
    // An ordinary IPv4 address carried is an ordinary address.
    for (const host of ["64:ff9b::203.0.113.10", "2002:cb00:710a::1", "::ffff:0:203.0.113.10"]) expect({ host, ...(await guard().check(host, 3306)) }).toMatchObject({ host, allowed: true });
    // SOURCE_ALLOW naming the IPv4 address opens its carried forms as it opens the address.
    expect(await guard("127.0.0.1:3306").check("64:ff9b::127.0.0.1", 3306)).toMatchObject({ allowed: true });
  });

  it("never opens the service's own endpoints through a carried address, whatever SOURCE_ALLOW says", async () => {
    const g = guard("10.0.0.0/8,127.0.0.0/8,::/0");
    for (const host of ["64:ff9b::10.0.0.5", "::10.0.0.5", "::ffff:0:10.0.0.5", "2002:a00:5::"]) expect({ host, ...(await g.check(host, 5432)) }).toMatchObject({ host, allowed: false });
    const local = new SourceGuard({
      own: ownEndpoints({ databaseUrl: "postgres://postgres@127.0.0.1:5432/ims_x", redisUrl: undefined, transporter: undefined }),
      allow: parseSourceAllow("127.0.0.0/8,::/0"),
      lookup: dns(table),
      localAddresses: interfaces,
    });
    for (const host of ["64:ff9b::127.0.0.1", "::127.0.0.2", "2002:c000:22c::", "64:ff9b::192.0.2.44"]) expect({ host, ...(await local.check(host, 5432)) }).toMatchObject({ host, allowed: false });
  });
});
