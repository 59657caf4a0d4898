/** The bus's and the cache's credentials: read once (lib/config.ts), split from their URLs for the clients, masked in logs. */
import { redactUrl, splitNatsUrls } from "../../../lib/bus-credentials";
import { readConfig } from "../../../lib/config";
import { natsServerList } from "../../../lib/streams/jetstream";
import { brokerOptions } from "../../../moleculer.config";

const NODES = "nats://nats-1:4222,nats://nats-2:4222,nats://nats-3:4222";

describe("splitNatsUrls", () => {
  it("takes the servers apart from the credentials every URL carries", () => {
    const urls = ["nats-1", "nats-2", "nats-3"].map((n) => `nats://api:s3cret@${n}:4222`).join(",");
    expect(splitNatsUrls(urls)).toEqual({ servers: NODES.split(","), auth: { user: "api", pass: "s3cret" } });
  });

  it("applies one URL's credentials to all, percent-decoded, and keeps a password of digits out of the port", () => {
    expect(splitNatsUrls("nats://api:123%40x@a:4222, nats://b:4223")).toEqual({ servers: ["nats://a:4222", "nats://b:4223"], auth: { user: "api", pass: "123@x" } });
    expect(natsServerList("nats://api:4321@a:4222")).toEqual(["nats://a:4222"]);
  });

  it("has no credentials for URLs without any, and keeps a bare host:port", () => {
    expect(splitNatsUrls(`${NODES},127.0.0.1:4222`)).toEqual({ servers: [...NODES.split(","), "127.0.0.1:4222"] });
  });

  it("refuses URLs that carry different credentials, or a user without a password", () => {
    expect(() => splitNatsUrls("nats://api:a@x:4222,nats://auth:b@y:4222")).toThrow("different credentials");
    expect(() => splitNatsUrls("nats://token@x:4222")).toThrow("needs both a user and a password");
  });
});

describe("redactUrl", () => {
  it("masks every password of a URL list and nothing else", () => {
    expect(redactUrl("nats://api:s3cret@a:4222,nats://b:4222")).toBe("nats://api:***@a:4222,nats://b:4222");
    expect(redactUrl("redis://:s3cret@redis:6379")).toBe("redis://:***@redis:6379");
    expect(redactUrl("redis://redis:6379/2")).toBe("redis://redis:6379/2");
    expect(redactUrl("postgres://ims:pw@db:5432/ims")).toBe("postgres://ims:***@db:5432/ims");
  });
});

describe("readConfig of the bus's credentials", () => {
  it("needs none: the embedded default has no TRANSPORTER and no REDIS_URL", () => {
    const cfg = readConfig({});
    expect(cfg.natsAuth).toBeUndefined();
    expect(brokerOptions(cfg).transporter).toBeNull();
  });

  it("takes NATS_USER and NATS_PASSWORD, or the pair in TRANSPORTER's URLs, and gives them to the transporter apart from the servers", () => {
    const pair = readConfig({ TRANSPORTER: NODES, NATS_USER: "api", NATS_PASSWORD: "s3cret" });
    const inUrls = readConfig({ TRANSPORTER: NODES.replace(/nats:\/\//g, "nats://api:s3cret@") });
    for (const cfg of [pair, inUrls]) {
      expect(cfg.natsAuth).toEqual({ user: "api", pass: "s3cret" });
      expect((brokerOptions(cfg).transporter as { options: unknown }).options).toMatchObject({ servers: NODES.split(","), user: "api", pass: "s3cret" });
    }
  });

  it("refuses half a pair, and a pair that contradicts the URLs", () => {
    expect(() => readConfig({ TRANSPORTER: NODES, NATS_USER: "api" })).toThrow("NATS_USER and NATS_PASSWORD go together");
    expect(() => readConfig({ TRANSPORTER: "nats://api:a@x:4222", NATS_USER: "api", NATS_PASSWORD: "b" })).toThrow("credentials other than NATS_USER/NATS_PASSWORD");
  });

  it("hands REDIS_URL to the cacher as the URL itself (ioredis reads host and password only from a string)", () => {
    const cacher = brokerOptions(readConfig({ REDIS_URL: "redis://:s3cret@redis:6379" })).cacher as { options: { redis: unknown } };
    expect(cacher.options.redis).toBe("redis://:s3cret@redis:6379");
  });
});
