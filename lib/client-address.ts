/**
 * Who is at the other end of an HTTP request: the client's address and whether it came over
 * https. The socket's peer, unless that peer is one of the proxies TRUST_PROXY names (a
 * Kubernetes ingress, a load balancer): then X-Forwarded-For and X-Forwarded-Proto, which any
 * other caller could write to pass for someone else, are believed.
 */
import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";
import type { TLSSocket } from "node:tls";

export interface ClientOrigin {
  /** IPv4 dotted, or IPv6; an IPv4-mapped IPv6 peer (`::ffff:10.0.0.1`) as IPv4. */
  address: string;
  /** The request reached us, or the trusted proxy in front of us, over TLS. */
  https: boolean;
}

/** `::ffff:10.0.0.1` as `10.0.0.1`, `[::1]` as `::1`; "" for what is no address at all. */
export function normalAddress(raw: string | undefined): string {
  if (!raw) return "";
  let address = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) address = bracketed[1]!;
  // An IPv4 address with a port, as some proxies write it.
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(":"));
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/i.exec(address);
  if (mapped) address = mapped[1]!;
  return isIP(address) ? address.toLowerCase() : "";
}

/** The proxies TRUST_PROXY names (entries checked by lib/config.ts). */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly size: number;

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [address = "", prefix] = entry.split("/");
      const type = isIP(address) === 6 ? "ipv6" : "ipv4";
      if (prefix === undefined) this.list.addAddress(address, type);
      else this.list.addSubnet(address, Number(prefix), type);
    }
    this.size = entries.length;
  }

  has(address: string): boolean {
    if (this.size === 0 || !address) return false;
    return this.list.check(address, isIP(address) === 6 ? "ipv6" : "ipv4");
  }
}

const firstHeader = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(",") : value);

/**
 * The client of a request. Behind trusted proxies, X-Forwarded-For is read from its right end
 * (the hop our own proxy added) leftwards, past every trusted proxy: the first address that is
 * not one is the client. Entries further left were written by the client and prove nothing.
 */
export function clientOrigin(req: IncomingMessage, trusted: TrustedProxies): ClientOrigin {
  const peer = normalAddress(req.socket.remoteAddress);
  const encrypted = (req.socket as Partial<TLSSocket>).encrypted === true;
  if (!trusted.has(peer)) return { address: peer, https: encrypted };
  let address = peer;
  const hops = (firstHeader(req.headers["x-forwarded-for"]) ?? "").split(",").reverse();
  for (const hop of hops) {
    const candidate = normalAddress(hop);
    // A hop that is no address is where the trustworthy part of the chain ends.
    if (!candidate) break;
    address = candidate;
    if (!trusted.has(candidate)) break;
  }
  const proto = (firstHeader(req.headers["x-forwarded-proto"]) ?? "").split(",")[0]?.trim().toLowerCase();
  return { address, https: encrypted || proto === "https" };
}
