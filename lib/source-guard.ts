/**
 * Addresses that users give (op 57's SQL server, the SQL and OPC-UA collectors' sources) must not
 * turn the service against itself (docs/security.md, "Addresses users give"): they never reach the service's own database
 * (the host and port of DATABASE_URL, whatever the database name), cache (REDIS_URL) or bus
 * (TRANSPORTER), and loopback, link-local and unspecified addresses, this machine's own interface
 * addresses (any port) and the cloud metadata services only where SOURCE_ALLOW names them. SOURCE_ALLOW
 * never opens the service's own endpoints. An IPv4 address carried in an IPv6 one (IPv4-compatible,
 * SIIT, NAT64, 6to4, Teredo) is checked as that IPv4 address too.
 *
 * The host name is resolved once and every address it resolves to is checked; the caller then
 * connects to the address answered (`address`), not to the name again, so a name that resolves
 * differently a moment later (DNS rebinding) cannot slip past the check.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import os from "node:os";

export type SourceVerdict = { allowed: true; address: string } | { allowed: false; reason: string };

/** An address in 16 bytes (IPv4 as IPv4-mapped IPv6), so that every spelling of one address compares equal. */
type Bytes = Uint8Array;

/** `::ffff:a.b.c.d`, `::ffff:7f00:1`, `[::1]`: one address, one text. IPv4 as dotted, IPv6 expanded in lower-case hex. */
export function canonicalAddress(text: string): string | null {
  const bytes = addressBytes(text);
  return bytes && bytesText(bytes);
}

function addressBytes(raw: string): Bytes | null {
  const text = raw.trim().replace(/^\[(.*)\]$/, "$1").replace(/%.*$/, "");
  const family = isIP(text);
  if (family === 4) return Uint8Array.from([...new Array<number>(10).fill(0), 0xff, 0xff, ...text.split(".").map(Number)]);
  if (family !== 6) return null;
  let body = text.toLowerCase();
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(body);
  if (dotted) {
    tail.push(...dotted[1]!.split(".").map(Number));
    body = body.slice(0, -dotted[1]!.length) + "0:0";
  }
  const [head = "", rest] = body.split("::");
  const left = head ? head.split(":") : [];
  const right = rest === undefined ? [] : rest ? rest.split(":") : [];
  const groups = [...left, ...new Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  const out = new Uint8Array(16);
  groups.slice(0, 8).forEach((g, i) => {
    const n = parseInt(g || "0", 16);
    out[2 * i] = n >> 8;
    out[2 * i + 1] = n & 0xff;
  });
  if (tail.length === 4) out.set(tail, 12);
  return out;
}

const isMapped = (b: Bytes): boolean => b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

function bytesText(b: Bytes): string {
  if (isMapped(b)) return [...b.slice(12)].join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i]! << 8) | b[i + 1]!).toString(16));
  return groups.join(":");
}

/** A network: an address and how many leading bits of it count. */
interface Network {
  bytes: Bytes;
  bits: number;
}

/** `10.0.0.0/8` (IPv4 prefixes count within the mapped form's last 32 bits), `fe80::/10`; null when it is no CIDR. */
export function parseCidr(text: string): Network | null {
  const [address = "", prefix, ...more] = text.trim().split("/");
  if (prefix === undefined || more.length || !/^\d+$/.test(prefix)) return null;
  const family = isIP(address);
  const bits = Number(prefix);
  const bytes = addressBytes(address);
  if (!bytes || bits > (family === 4 ? 32 : 128)) return null;
  return { bytes, bits: family === 4 ? 96 + bits : bits };
}

function inNetwork(b: Bytes, n: Network): boolean {
  for (let bit = 0; bit < n.bits; bit++) {
    const mask = 0x80 >> bit % 8;
    if ((b[bit >> 3]! & mask) !== (n.bytes[bit >> 3]! & mask)) return false;
  }
  return true;
}

/**
 * Loopback, link-local and unspecified networks: the machine itself and its cloud's metadata
 * service; and the cloud metadata services outside link-local (AWS's IPv6 one, Alibaba's, Google's
 * IPv6 one, Azure's WireServer).
 */
const SPECIAL: { network: Network; kind: string }[] = [
  ["127.0.0.0/8", "loopback"],
  ["::1/128", "loopback"],
  ["169.254.0.0/16", "link-local"],
  ["fe80::/10", "link-local"],
  // 0.0.0.0/8 is "this network": Linux connects 0.x.x.x to the machine itself.
  ["0.0.0.0/8", "unspecified"],
  ["::/128", "unspecified"],
  ["fd00:ec2::254/128", "cloud metadata"],
  ["100.100.100.200/32", "cloud metadata"],
  ["fd20:ce::254/128", "cloud metadata"],
  ["168.63.129.16/32", "cloud metadata"],
].map(([cidr, kind]) => ({ network: parseCidr(cidr!)!, kind: kind! }));

/**
 * Why an address is refused unless SOURCE_ALLOW names it, or null: the address itself, not the
 * IPv4 addresses it may carry (`embeddedIPv4`, which the guard checks as IPv4 addresses).
 */
export function specialKind(address: string): string | null {
  const b = addressBytes(address);
  if (!b) return "not an address";
  return SPECIAL.find((s) => inNetwork(b, s.network))?.kind ?? null;
}

const v4 = (b: Bytes, ...at: number[]): string => at.map((i) => b[i]!).join(".");
const net = (cidr: string): Network => parseCidr(cidr)!;
/** IPv6 forms that carry an IPv4 address which a translator, a tunnel or the kernel on the way connects to. */
const EMBEDDING: { network: Network; at: number[][]; xor?: number }[] = [
  // IPv4-compatible `::a.b.c.d` (deprecated; :: and ::1 are refused as themselves).
  { network: net("::/96"), at: [[12, 13, 14, 15]] },
  // SIIT `::ffff:0:a.b.c.d` (RFC 2765).
  { network: net("::ffff:0:0:0/96"), at: [[12, 13, 14, 15]] },
  // NAT64's well-known prefix (RFC 6052).
  { network: net("64:ff9b::/96"), at: [[12, 13, 14, 15]] },
  // NAT64's local-use prefix (RFC 8215): a network may use it as a /48, /56, /64 or /96 (RFC 6052's
  // layouts, bits 64-71 left out): each reading is checked.
  {
    network: net("64:ff9b:1::/48"),
    at: [
      [6, 7, 9, 10],
      [7, 9, 10, 11],
      [9, 10, 11, 12],
      [12, 13, 14, 15],
    ],
  },
  // 6to4 (RFC 3056): the IPv4 address in bits 16-47.
  { network: net("2002::/16"), at: [[2, 3, 4, 5]] },
  // Teredo (RFC 4380): the server in bits 32-63, the client inverted in bits 96-127.
  { network: net("2001::/32"), at: [[4, 5, 6, 7]] },
  { network: net("2001::/32"), at: [[12, 13, 14, 15]], xor: 0xff },
];

/** The IPv4 addresses an IPv6 address carries (IPv4-compatible, SIIT, NAT64, 6to4, Teredo), dotted; none for any other address. */
export function embeddedIPv4(address: string): string[] {
  const b = addressBytes(address);
  if (!b || isMapped(b)) return [];
  const out = new Set<string>();
  for (const e of EMBEDDING) {
    if (!inNetwork(b, e.network)) continue;
    for (const at of e.at) out.add(e.xor === undefined ? v4(b, ...at) : at.map((i) => b[i]! ^ e.xor!).join("."));
  }
  return [...out];
}

/** One entry of SOURCE_ALLOW: `host`, `host:port`, `[v6]:port`, or a CIDR. */
export type AllowEntry = { kind: "network"; network: Network } | { kind: "host"; host: string; port: number | null };

/** SOURCE_ALLOW's entries; throws on one that is none of the forms (lib/config.ts checks at start). */
export function parseSourceAllow(text: string): AllowEntry[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry): AllowEntry => {
      if (entry.includes("/")) {
        const network = parseCidr(entry);
        if (!network) throw new Error(`SOURCE_ALLOW: "${entry}" is no CIDR`);
        return { kind: "network", network };
      }
      if (isIP(entry) === 6) return { kind: "host", host: entry.toLowerCase(), port: null };
      const m = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry);
      const port = m?.[2] === undefined ? null : Number(m[2]);
      if (!m || (port !== null && (port < 1 || port > 65535))) throw new Error(`SOURCE_ALLOW: "${entry}" is not host[:port] or a CIDR`);
      return { kind: "host", host: m[1]!.replace(/^\[(.*)\]$/, "$1").toLowerCase(), port };
    });
}

/** A host and port of the service itself. */
export interface Endpoint {
  host: string;
  port: number;
}

function endpointOf(url: string, defaultPort: number): Endpoint | null {
  try {
    const u = new URL(url);
    if (!u.hostname) return null;
    return { host: u.hostname.replace(/^\[(.*)\]$/, "$1"), port: u.port ? Number(u.port) : defaultPort };
  } catch {
    return null;
  }
}

const DEFAULT_PORTS: Record<string, number> = { "postgres:": 5432, "postgresql:": 5432, "redis:": 6379, "rediss:": 6380, "nats:": 4222, "tls:": 4222 };

/**
 * The service's own endpoints: its database (DATABASE_URL; the embedded default's too, which
 * the runtime writes there), its cache (REDIS_URL) and its bus (every URL of TRANSPORTER).
 */
/** The service's own servers, as AppConfig names them (lib/config.ts imports this module, not the other way round). */
export interface OwnServers {
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  transporter: string | undefined;
}

export function ownEndpoints(cfg: OwnServers): Endpoint[] {
  const urls = [cfg.databaseUrl, cfg.redisUrl, ...(cfg.transporter ?? "").split(/[,\s]+/)].filter((u): u is string => !!u && u.includes("://"));
  return urls.flatMap((url) => {
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0].toLowerCase() ?? "";
    const e = endpointOf(url, DEFAULT_PORTS[scheme] ?? 0);
    return e ? [e] : [];
  });
}

export type Lookup = (host: string) => Promise<string[]>;

const systemLookup: Lookup = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** This machine's own interface addresses: a server listening on all of them answers at each. */
export function localAddresses(): string[] {
  return Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address));
}

export interface SourceGuardOptions {
  own: Endpoint[];
  allow: AllowEntry[];
  lookup?: Lookup;
  /** This machine's interface addresses, read at each check (default: os.networkInterfaces()). */
  localAddresses?: () => string[];
}

export class SourceGuard {
  private readonly lookup: Lookup;
  private readonly interfaces: () => string[];

  constructor(private readonly opts: SourceGuardOptions) {
    this.lookup = opts.lookup ?? systemLookup;
    this.interfaces = opts.localAddresses ?? localAddresses;
  }

  /** Whether a connection to host:port may be made, and to which address (all it resolves to were checked). */
  async check(host: string, port: number): Promise<SourceVerdict> {
    const name = host.trim().replace(/^\[(.*)\]$/, "$1");
    if (!name) return { allowed: false, reason: "no host" };
    let resolved: string[];
    try {
      resolved = (await this.lookup(name)).map((a) => canonicalAddress(a)).filter((a): a is string => a !== null);
    } catch {
      return { allowed: false, reason: `${name} does not resolve` };
    }
    if (resolved.length === 0) return { allowed: false, reason: `${name} does not resolve` };
    const locals = this.thisMachine();
    const own = await this.ownAddresses(port, locals);
    for (const address of resolved) {
      // An IPv4 address carried in an IPv6 one (NAT64, 6to4, ...) is where a translator on the way connects: checked as itself.
      for (const candidate of [address, ...embeddedIPv4(address)]) {
        const shown = candidate === address ? candidate : `${candidate} (in ${address})`;
        if (own.addresses.has(candidate) || (own.onThisMachine && isThisMachine(candidate, locals))) return { allowed: false, reason: `${shown}:${port} is the service's own` };
        const kind = specialKind(candidate) ?? (locals.has(candidate) ? "an address of this machine" : null);
        if (kind && !this.allowed(name, candidate, port)) return { allowed: false, reason: `${shown} is ${kind} and SOURCE_ALLOW does not name it` };
      }
    }
    return { allowed: true, address: resolved[0]! };
  }

  /** This machine's interface addresses, canonical. */
  private thisMachine(): Set<string> {
    const out = new Set<string>();
    for (const a of this.interfaces()) {
      const canonical = canonicalAddress(a);
      if (canonical) out.add(canonical);
    }
    return out;
  }

  /**
   * Where the service's own endpoints on `port` answer: the addresses their hosts resolve to and,
   * when one of those is this machine (loopback, unspecified, an interface's address), every
   * address of this machine, at which a server listening on all of them answers too.
   */
  private async ownAddresses(port: number, locals: Set<string>): Promise<{ addresses: Set<string>; onThisMachine: boolean }> {
    const addresses = new Set<string>();
    for (const e of this.opts.own.filter((o) => o.port === port)) {
      for (const a of await this.lookup(e.host).catch(() => [] as string[])) {
        const canonical = canonicalAddress(a);
        if (canonical) addresses.add(canonical);
      }
    }
    return { addresses, onThisMachine: [...addresses].some((a) => isThisMachine(a, locals)) };
  }

  private allowed(name: string, address: string, port: number): boolean {
    const bytes = addressBytes(address)!;
    return this.opts.allow.some((entry) => {
      if (entry.kind === "network") return inNetwork(bytes, entry.network);
      if (entry.port !== null && entry.port !== port) return false;
      return entry.host === name.toLowerCase() || canonicalAddress(entry.host) === address;
    });
  }
}

/** Loopback, unspecified, or the address of one of this machine's interfaces. */
function isThisMachine(address: string, locals: Set<string>): boolean {
  const kind = specialKind(address);
  return kind === "loopback" || kind === "unspecified" || locals.has(address);
}

/** The guard of this process's configuration. */
export function sourceGuardOf(cfg: OwnServers & { sourceAllow: string }): SourceGuard {
  return new SourceGuard({ own: ownEndpoints(cfg), allow: parseSourceAllow(cfg.sourceAllow) });
}
