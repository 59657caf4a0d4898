/** The client of a request: the socket's peer, or what a TRUST_PROXY proxy says, never what anyone else says. */
import type { IncomingMessage } from "node:http";
import { clientOrigin, normalAddress, TrustedProxies } from "../../../lib/client-address";
import { readConfig } from "../../../lib/config";

const request = (peer: string, headers: Record<string, string> = {}, encrypted = false) =>
  ({ socket: { remoteAddress: peer, encrypted }, headers }) as unknown as IncomingMessage;

describe("normalAddress", () => {
  it("reads mapped IPv4, brackets and ports, and refuses what is no address", () => {
    expect(normalAddress("::ffff:10.0.0.1")).toBe("10.0.0.1");
    expect(normalAddress("[2001:DB8::1]:443")).toBe("2001:db8::1");
    expect(normalAddress(" 203.0.113.5:51234 ")).toBe("203.0.113.5");
    expect(normalAddress("unknown")).toBe("");
    expect(normalAddress(undefined)).toBe("");
  });
});

describe("clientOrigin", () => {
  const none = new TrustedProxies([]);
  const ingress = new TrustedProxies(["10.0.0.0/8", "fd00::/8"]);

  it("takes the socket's peer and ignores X-Forwarded-* when no proxy is trusted", () => {
    const req = request("::ffff:198.51.100.7", { "x-forwarded-for": "1.2.3.4", "x-forwarded-proto": "https" });
    expect(clientOrigin(req, none)).toEqual({ address: "198.51.100.7", https: false });
    expect(clientOrigin(request("198.51.100.7", {}, true), none)).toEqual({ address: "198.51.100.7", https: true });
  });

  it("ignores X-Forwarded-* from a peer that is not a trusted proxy", () => {
    expect(clientOrigin(request("198.51.100.7", { "x-forwarded-for": "1.2.3.4" }), ingress).address).toBe("198.51.100.7");
  });

  it("believes a trusted proxy, reading the chain from its right end past every trusted hop", () => {
    const req = request("10.1.2.3", { "x-forwarded-for": "6.6.6.6, 203.0.113.9, 10.9.9.9", "x-forwarded-proto": "https" });
    // 6.6.6.6 was written by the client itself: only the hop our proxies saw counts.
    expect(clientOrigin(req, ingress)).toEqual({ address: "203.0.113.9", https: true });
    expect(clientOrigin(request("fd00::5", { "x-forwarded-for": "2001:db8::9" }), ingress).address).toBe("2001:db8::9");
    // No header: the proxy itself is the client.
    expect(clientOrigin(request("10.1.2.3"), ingress)).toEqual({ address: "10.1.2.3", https: false });
    // Garbage ends the trustworthy part of the chain.
    expect(clientOrigin(request("10.1.2.3", { "x-forwarded-for": "203.0.113.9, nonsense" }), ingress).address).toBe("10.1.2.3");
  });
});

describe("TRUST_PROXY", () => {
  it("takes addresses and CIDRs, and refuses anything else", () => {
    expect(readConfig({ TRUST_PROXY: "10.0.0.0/8, 192.0.2.1,fd00::/8" }).trustProxy).toEqual(["10.0.0.0/8", "192.0.2.1", "fd00::/8"]);
    expect(readConfig({}).trustProxy).toEqual([]);
    expect(() => readConfig({ TRUST_PROXY: "ingress" })).toThrow(/TRUST_PROXY/);
    expect(() => readConfig({ TRUST_PROXY: "10.0.0.0/33" })).toThrow(/TRUST_PROXY/);
  });
});
