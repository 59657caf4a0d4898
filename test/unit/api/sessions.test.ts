/** The console's sessions (services/api/sessions.ts) over a real memory cacher: the cookie, resuming, ending, a user's sessions dropped at once. */
import type { IncomingMessage } from "node:http";
import { ServiceBroker } from "moleculer";
import type { Principal } from "../../../lib/access";
import { SharedCache } from "../../../lib/cache";
import { clearedSessionCookie, sessionCookie, sessionIdOf, SessionStore } from "../../../services/api/sessions";

const ann: Principal = { username: "ann@example.com", user_type: "site-admin", site_id: "s1", plant_id: "*", modules: ["Configuration"] };

let broker: ServiceBroker;
let store: SessionStore;
beforeEach(async () => {
  broker = new ServiceBroker({ logger: false, cacher: "Memory" });
  await broker.start();
  store = new SessionStore(new SharedCache(broker), 3600);
});
afterEach(() => broker.stop());

const withCookie = (cookie: string) => ({ headers: { cookie } }) as unknown as IncomingMessage;

describe("the session cookie", () => {
  it("is HttpOnly, SameSite=Strict, for the whole site, Secure only when asked", () => {
    expect(sessionCookie("abc", false)).toBe("ims_session=abc; Path=/; HttpOnly; SameSite=Strict");
    expect(sessionCookie("abc", true)).toBe("ims_session=abc; Path=/; HttpOnly; SameSite=Strict; Secure");
    expect(clearedSessionCookie(false)).toContain("Max-Age=0");
  });

  it("is read among others, and only in the shape the gateway makes", () => {
    const id = "A".repeat(43);
    expect(sessionIdOf(withCookie(`theme=dark; ims_session=${id}; x=1`))).toBe(id);
    expect(sessionIdOf(withCookie("ims_session=short"))).toBeUndefined();
    expect(sessionIdOf(withCookie(`other_ims_session=${id}`))).toBeUndefined();
    expect(sessionIdOf({ headers: {} } as IncomingMessage)).toBeUndefined();
  });
});

describe("SessionStore", () => {
  it("resumes a session by its id, which the cacher never holds in clear", async () => {
    const id = await store.create(ann, await store.epoch(ann.username));
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await store.resume(id)).toEqual(ann);
    const keys = [...(broker.cacher as unknown as { cache: Map<string, unknown> }).cache.keys()];
    expect(keys.some((k) => k.startsWith("api.session:"))).toBe(true);
    expect(keys.join(" ")).not.toContain(id);
    expect(await store.resume("B".repeat(43))).toBeUndefined();
  });

  it("ends one session, or every session of a user at once", async () => {
    const first = await store.create(ann, await store.epoch(ann.username));
    const second = await store.create(ann, await store.epoch(ann.username));
    const bob = await store.create({ ...ann, username: "bob@example.com" }, null);
    await store.end(first);
    expect(await store.resume(first)).toBeUndefined();
    expect(await store.resume(second)).toEqual(ann);
    await store.endAllOf("Ann@Example.com");
    expect(await store.resume(second)).toBeUndefined();
    expect(await store.resume(bob)).toBeDefined();
    // A session made after the change lives.
    const fresh = await store.create(ann, await store.epoch(ann.username));
    expect(await store.resume(fresh)).toEqual(ann);
  });

  it("ends a sign-in that raced a change: its epoch was read before the password was checked", async () => {
    const epoch = await store.epoch(ann.username);
    // ... the password is checked (the old one) while the user's password changes ...
    await store.endAllOf(ann.username);
    const id = await store.create(ann, epoch);
    expect(await store.resume(id)).toBeUndefined();
  });
});
