/**
 * Identity and abuse over HTTP (docs/security.md): failed sign-in
 * throttling per username and address, per address, and for a guess spread over addresses (with
 * the owner's email); no password hash paid by a locked-out caller; the OTP request limit and the
 * OTP's own limit of wrong tries; the Basic challenge; the headers of every answer; the console's
 * session cookie. The node trusts loopback as its proxy (TRUST_PROXY), so a test speaks for
 * several client addresses through X-Forwarded-For, as an ingress would.
 */
import { ADMIN, startTestNode, type TestNode } from "../helpers/node";
import { otpIn, startSmtp, type TestSmtp } from "../helpers/smtp";
import { envelope } from "../helpers/envelope";

const PASSWORD = "GoodPass123";
const THROTTLED = "Too many failed attempts. Try again later.";
const CHALLENGE = 'Basic realm="ims", charset="UTF-8"';
const SITES = "/_config/sites/_list";

let t: TestNode;
let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await startSmtp();
  t = await startTestNode({ env: { SMTP_URL: smtp.url, TRUST_PROXY: "127.0.0.1,::1" } });
});
afterAll(async () => {
  await t?.stop();
  await smtp?.stop();
});

async function newUser(username: string, user_type = "support-analyst") {
  const res = await t.http("POST", "/_config/users", {
    body: { username, mobile_number: "5550100", country_code: "+1", user_type, password: PASSWORD },
  });
  expect(res.status).toBe(200);
}

/** A Basic request from the client `from` (through the trusted proxy). */
const asFrom = (from: string, username: string, password: string, path = SITES) =>
  t.http("GET", path, { auth: { username, password }, headers: { "x-forwarded-for": from } });

/** How many times auth's `authenticate` ran (Moleculer's own request counter): each run may pay an argon2 hash. */
function authenticateCalls(): number {
  const metric = t.node.broker.metrics.getMetric("moleculer.request.total") as unknown as {
    snapshot(): { labels: Record<string, string>; value: number }[];
  };
  return metric
    .snapshot()
    .filter((s) => s.labels.action === "auth.authenticate")
    .reduce((n, s) => n + s.value, 0);
}

function expectThrottled(res: { status: number; body: unknown; headers: Headers }) {
  expect(res).toMatchObject({ status: 429, body: envelope(429, THROTTLED) });
  const wait = Number(res.headers.get("retry-after"));
  expect(wait).toBeGreaterThan(0);
  expect(wait).toBeLessThanOrEqual(15 * 60);
}

describe("failed sign-in throttling", () => {
  it("answers 429 to a username from an address after 5 failures, right password or not, without asking auth", async () => {
    await newUser("lock.one@example.com");
    // Signed in a moment ago from this address: the gateway holds this caller verified.
    expect((await asFrom("203.0.113.1", "lock.one@example.com", PASSWORD)).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const res = await asFrom("203.0.113.1", "lock.one@example.com", "WrongPass999");
      expect(res).toMatchObject({ status: 401, body: envelope(401, "Invalid credentials") });
    }
    const before = authenticateCalls();
    expectThrottled(await asFrom("203.0.113.1", "lock.one@example.com", "WrongPass999"));
    expectThrottled(await asFrom("203.0.113.1", "lock.one@example.com", PASSWORD));
    expectThrottled(await asFrom("203.0.113.1", "LOCK.ONE@example.com", PASSWORD));
    // Refused before auth was asked: no password hash paid, cached verification or not.
    expect(authenticateCalls()).toBe(before);
    // The owner from elsewhere, and other users from this address, are not concerned.
    expect((await asFrom("203.0.113.2", "lock.one@example.com", PASSWORD)).status).toBe(200);
    expect((await asFrom("203.0.113.1", ADMIN.username, ADMIN.password)).status).toBe(200);
  });

  it("counts a console sign-in as it counts Basic: same username, same address", async () => {
    await newUser("lock.session@example.com");
    const signIn = (password: string) =>
      t.http("POST", "/_auth/session", { auth: null, body: { username: "lock.session@example.com", password }, headers: { "x-forwarded-for": "203.0.113.7" } });
    for (let i = 0; i < 5; i++) expect((await signIn("WrongPass999")).status).toBe(401);
    expectThrottled(await signIn(PASSWORD));
    // Basic from the same address is the same username from the same address.
    expectThrottled(await asFrom("203.0.113.7", "lock.session@example.com", PASSWORD));
  });

  it("answers 429 to an address after 100 failures, whatever the usernames", async () => {
    for (let i = 0; i < 100; i++) {
      expect((await asFrom("203.0.113.50", `nobody.${i}@example.com`, "WrongPass999")).status).toBe(401);
    }
    expectThrottled(await asFrom("203.0.113.50", ADMIN.username, ADMIN.password));
    expect((await asFrom("203.0.113.51", ADMIN.username, ADMIN.password)).status).toBe(200);
  });

  it("slows a guess spread over many addresses, tells the owner once, and leaves the owner's own address open", async () => {
    const victim = "spread.victim@example.com";
    await newUser(victim);
    expect((await asFrom("192.0.2.200", victim, PASSWORD)).status).toBe(200);
    for (let i = 1; i <= 20; i++) expect((await asFrom(`198.51.100.${i}`, victim, "WrongPass999")).status).toBe(401);
    // Even the right password, from an address the user never signed in from.
    expectThrottled(await asFrom("198.51.100.99", victim, PASSWORD));
    expect((await asFrom("192.0.2.200", victim, PASSWORD)).status).toBe(200);
    const [mail] = await smtp.waitFor(1, { to: victim });
    expect(mail!.text).toContain("Subject: Sign-in to your account paused");
    expect(mail!.text).toContain("198.51.100.20");
    expect(mail!.text).not.toContain("WrongPass999");
    // Another lock of the same user within the window: no second email.
    for (let i = 0; i < 5; i++) await asFrom("198.51.100.30", victim, "WrongPass999");
    await new Promise((r) => setTimeout(r, 1000));
    expect(smtp.received.filter((m) => m.to.includes(victim))).toHaveLength(1);
  });

  it("sends no email for a username nobody has", async () => {
    for (let i = 1; i <= 20; i++) await asFrom(`198.51.100.${100 + i}`, "ghost@example.com", "WrongPass999");
    await new Promise((r) => setTimeout(r, 1000));
    expect(smtp.received.filter((m) => m.to.includes("ghost@example.com"))).toHaveLength(0);
  });
});

describe("OTP limits", () => {
  const generate = (email: string) => t.http("POST", "/_config/users/password/generate_otp", { body: { email }, auth: null });

  it("sends at most 3 codes per email in 15 minutes, then 429 with Retry-After", async () => {
    await newUser("otp.limit@example.com");
    for (let i = 0; i < 3; i++) expect(await generate("otp.limit@example.com")).toMatchObject({ status: 200 });
    expectThrottled(await generate("OTP.Limit@example.com"));
    await smtp.waitFor(3, { to: "otp.limit@example.com" });
    await new Promise((r) => setTimeout(r, 500));
    expect(smtp.received.filter((m) => m.to.includes("otp.limit@example.com"))).toHaveLength(3);
    await newUser("otp.other@example.com");
    expect(await generate("otp.other@example.com")).toMatchObject({ status: 200 });
  });

  it("voids an OTP after 5 wrong tries", async () => {
    await newUser("otp.void@example.com");
    expect((await generate("otp.void@example.com")).status).toBe(200);
    const [mail] = await smtp.waitFor(1, { to: "otp.void@example.com" });
    const otp = otpIn(mail!);
    const wrong = String((Number(otp) + 1) % 1_000_000).padStart(6, "0");
    const validate = (code: string) => t.http("POST", "/_config/users/password/validate_otp", { body: { email: "otp.void@example.com", otp: code }, auth: null });
    for (let i = 0; i < 5; i++) expect(await validate(wrong)).toMatchObject({ status: 401, body: envelope(401, "Invalid OTP") });
    expect(await validate(otp)).toMatchObject({ status: 404, body: envelope(404, "Invalid OTP") });
  });
});

describe("WWW-Authenticate", () => {
  it("challenges on a 401 of the API", async () => {
    const res = await t.http("GET", SITES, { auth: null });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(CHALLENGE);
    expect((await t.http("GET", SITES, { auth: { username: ADMIN.username, password: "WrongPass999" } })).headers.get("www-authenticate")).toBe(CHALLENGE);
    // Answers other than 401 do not.
    expect((await t.http("GET", SITES)).headers.get("www-authenticate")).toBeNull();
  });

  it("does not challenge the console's requests nor on /_auth/*", async () => {
    const console_ = await t.http("GET", SITES, { auth: null, headers: { "x-requested-with": "ims-console" } });
    expect(console_.status).toBe(401);
    expect(console_.headers.get("www-authenticate")).toBeNull();
    const session = await t.http("GET", "/_auth/session", { auth: null });
    expect(session).toMatchObject({ status: 401, body: envelope(401, "Invalid credentials") });
    expect(session.headers.get("www-authenticate")).toBeNull();
    const signIn = await t.http("POST", "/_auth/session", { auth: null, body: { username: ADMIN.username, password: "WrongPass999" }, headers: { "x-forwarded-for": "192.0.2.9" } });
    expect(signIn.status).toBe(401);
    expect(signIn.headers.get("www-authenticate")).toBeNull();
  });
});

describe("headers of every answer", () => {
  const expectBase = (headers: Headers) => {
    expect(headers.get("x-content-type-options")).toBe("nosniff");
    expect(headers.get("referrer-policy")).toBe("no-referrer");
  };

  it("API answers, errors included, are never stored by a cache", async () => {
    for (const res of [
      await t.http("GET", SITES),
      await t.http("GET", SITES, { auth: null }),
      await t.http("GET", "/_config/nothing-here"),
      await t.http("PATCH", SITES),
      await t.http("GET", "/openapi.json", { auth: null }),
    ]) {
      expectBase(res.headers);
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
  });

  it("the pages carry a strict Content-Security-Policy: hashes, no 'unsafe-inline'", async () => {
    for (const path of ["/", "/docs"]) {
      const res = await t.http<string>("GET", path, { auth: null });
      expect(res.status).toBe(200);
      expectBase(res.headers);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
    }
    const docs = (await t.http("GET", "/docs", { auth: null })).headers.get("content-security-policy");
    expect(docs).toMatch(/script-src 'sha256-/);
    expect(docs).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    // The console: its modules and styles from this origin, of inline code only its import map.
    const console = (await t.http("GET", "/", { auth: null })).headers.get("content-security-policy");
    expect(console).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+';/);
    expect(console).toContain("style-src 'self';");
  });

  it("even the gateway's answer to a request it cannot parse", async () => {
    const res = await fetch(t.baseUrl + SITES, { headers: { "x-big": "x".repeat(20_000) } });
    expect(res.status).toBe(431);
    expectBase(res.headers);
    expect(res.headers.get("cache-control")).toBe("no-store");
  });
});

describe("the console's session", () => {
  const cookieOf = (res: { headers: Headers }) => res.headers.getSetCookie().find((c) => c.startsWith("ims_session="));
  const idOf = (cookie: string | undefined) => /^ims_session=([^;]*)/.exec(cookie ?? "")?.[1] ?? "";
  const signIn = (username: string, password: string, headers: Record<string, string> = {}) =>
    t.http("POST", "/_auth/session", { auth: null, body: { username, password }, headers });
  const withCookie = (method: string, path: string, id: string, opts: { body?: unknown; console?: boolean } = {}) =>
    t.http(method, path, {
      auth: null,
      body: opts.body,
      headers: { cookie: `ims_session=${id}`, ...(opts.console ? { "x-requested-with": "ims-console" } : {}) },
    });

  it("signs in with a password, answering who, and sets an HttpOnly SameSite=Strict cookie, Secure only over https", async () => {
    const res = await signIn(ADMIN.username, ADMIN.password);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ username: ADMIN.username, user_type: "saas-admin", modules: expect.arrayContaining(["Configuration"]) });
    const cookie = cookieOf(res)!;
    expect(cookie).toMatch(/^ims_session=[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain("; HttpOnly");
    expect(cookie).toContain("; SameSite=Strict");
    expect(cookie).toContain("; Path=/");
    expect(cookie).not.toContain("Secure");
    expect(cookie).not.toMatch(/Max-Age|Expires/);
    // Behind the trusted proxy that terminated TLS.
    const https = await signIn(ADMIN.username, ADMIN.password, { "x-forwarded-proto": "https" });
    expect(cookieOf(https)).toContain("; Secure");
    // The session tells who is signed in, and every route takes it instead of Basic.
    expect(await withCookie("GET", "/_auth/session", idOf(cookie))).toMatchObject({ status: 200, body: res.body });
    expect((await withCookie("GET", SITES, idOf(cookie))).status).toBe(200);
  });

  it("refuses a change made with the cookie without X-Requested-With: ims-console", async () => {
    const id = idOf(cookieOf(await signIn(ADMIN.username, ADMIN.password)));
    const site = { site_name: "Cookie Works", location: "Pune", timezone: "Asia/Kolkata", latitude: "18.52", edge_firmware: {} };
    expect(await withCookie("POST", "/_config/sites", id, { body: site })).toMatchObject({ status: 403, body: envelope(403, "Unauthorized operation") });
    expect((await withCookie("POST", "/_config/sites", id, { body: site, console: true })).status).toBe(200);
  });

  it("refuses a change carrying a browser's Basic credentials from another site", async () => {
    const site = { site_name: "Cross Works", location: "Pune", timezone: "Asia/Kolkata", latitude: "18.52", edge_firmware: {} };
    const res = await t.http("POST", "/_config/sites", { body: site, headers: { "sec-fetch-site": "cross-site" } });
    expect(res).toMatchObject({ status: 403, body: envelope(403, "Unauthorized operation") });
  });

  it("signs out: the session ends, the cookie is cleared", async () => {
    const id = idOf(cookieOf(await signIn(ADMIN.username, ADMIN.password)));
    expect((await withCookie("DELETE", "/_auth/session", id)).status).toBe(403);
    const out = await withCookie("DELETE", "/_auth/session", id, { console: true });
    expect(out).toMatchObject({ status: 200, body: "Signed out successfully" });
    expect(cookieOf(out)).toMatch(/^ims_session=; .*Max-Age=0/);
    expect((await withCookie("GET", "/_auth/session", id)).status).toBe(401);
    expect(await withCookie("DELETE", "/_auth/session", id, { console: true })).toMatchObject({ status: 401, body: envelope(401, "Invalid credentials") });
    const api = await withCookie("GET", SITES, id);
    expect(api).toMatchObject({ status: 401, body: envelope(401, "Invalid credentials") });
    expect(api.headers.get("www-authenticate")).toBe(CHALLENGE);
  });

  it("ends when its user's password changes", async () => {
    await newUser("session.change@example.com");
    const id = idOf(cookieOf(await signIn("session.change@example.com", PASSWORD)));
    expect((await withCookie("GET", "/_auth/session", id)).status).toBe(200);
    const update = await t.http("PUT", "/_config/users/session.change@example.com", {
      body: { username: "session.change@example.com", mobile_number: "5550100", country_code: "+1", user_type: "support-analyst", password: "NewPass5678" },
    });
    expect(update.status).toBe(200);
    expect((await withCookie("GET", "/_auth/session", id)).status).toBe(401);
    expect((await withCookie("GET", SITES, id)).status).toBe(401);
    // A new sign-in with the new password makes a session that lives.
    const fresh = idOf(cookieOf(await signIn("session.change@example.com", "NewPass5678")));
    expect((await withCookie("GET", "/_auth/session", fresh)).status).toBe(200);
  });

  it("is in /openapi.json", async () => {
    const doc = (await t.http<{ paths: Record<string, Record<string, { security?: unknown[] }>> }>("GET", "/openapi.json", { auth: null })).body;
    expect(Object.keys(doc.paths["/_auth/session"] ?? {}).sort()).toEqual(["delete", "get", "post"]);
    expect(doc.paths["/_config/sites/_list"]!.get!.security).toEqual(expect.arrayContaining([{ sessionCookie: [] }, { basicAuth: [] }]));
  });
});
