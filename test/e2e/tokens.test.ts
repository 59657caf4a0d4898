/**
 * API tokens over HTTP (docs/security.md): issue, list and revoke with their answers and errors,
 * who may manage whose tokens, a token signing in as its user (its current grants), a read
 * token's change refused, expiry, revocation, `last_used_at`, the token kept only as a hash,
 * refused tokens counted by the sign-in throttle, and tokens never written to the logs (the node
 * runs at debug level and its console is read).
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { Client } from "pg";
import { MAX_FAILURES_PER_ADDRESS } from "../../lib/throttle";
import { envelope as err } from "../helpers/envelope";
import { ADMIN, startTestNode, type RequestOptions, type TestNode } from "../helpers/node";

const PASSWORD = "GoodPass123";
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const TOKEN = /^ims_[A-Za-z0-9_-]{43}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestNode;
/** Every line the node wrote to the console. */
const logged: string[] = [];
/** Every token the tests saw, to look for in the logs at the end. */
const seen: string[] = [];

const site = { A: randomUUID(), B: randomUUID() };
const plant = { A1: randomUUID(), A2: randomUUID(), B1: randomUUID() };
const u = {
  siteAdminA: "tk.site.a@example.com",
  siteAdminB: "tk.site.b@example.com",
  plantAdminA1: "tk.plant.a1@example.com",
  plantAdminA1bis: "tk.plant.a1bis@example.com",
  plantAdminB1: "tk.plant.b1@example.com",
  generalA1: "tk.general.a1@example.com",
  generalA1bis: "tk.general.a1bis@example.com",
  support: "tk.support@example.com",
};
const login = (username: string) => ({ username, password: PASSWORD });

async function sql<T = Record<string, unknown>>(text: string, args: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: t.db.url });
  await c.connect();
  try {
    return (await c.query(text, args)).rows as T[];
  } finally {
    await c.end();
  }
}

const siteBody = (site_name: string) => ({
  site_name,
  location: "Here",
  timezone: "UTC",
  latitude: "18.52",
  edge_firmware: { current_version: "1.2.0", previous_version: "1.1.0" },
});
const bearer = (token: string): RequestOptions => ({ auth: null, headers: { authorization: `Bearer ${token}` } });
const tokensOf = (username: string) => `/_config/users/${encodeURIComponent(username)}/tokens`;

interface Issued {
  token_id: string;
  token: string;
}
interface Listed {
  token_id: string;
  name: string;
  scope: string;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
}

async function issue(username: string, body: Record<string, unknown>, auth: RequestOptions["auth"] = ADMIN) {
  const res = await t.http<Issued>("POST", tokensOf(username), { body, auth });
  if (res.status === 200) seen.push(res.body.token);
  return res;
}

async function issued(username: string, scope: "read" | "write", auth: RequestOptions["auth"] = ADMIN): Promise<Issued> {
  const res = await issue(username, { name: `${scope} for ${username}`, scope, expires_in_days: 30 }, auth);
  expect(res.status).toBe(200);
  return res.body;
}

beforeAll(async () => {
  const capture = (...args: unknown[]) => void logged.push(args.map(String).join(" "));
  for (const method of ["log", "info", "warn", "error", "debug"] as const) jest.spyOn(console, method).mockImplementation(capture);
  t = await startTestNode({ services: ["api", "auth", "config", "notifier", "pipelines"], env: { LOG_LEVEL: "debug" } });
  const now = Date.now();
  for (const [name, id] of Object.entries(site)) {
    await sql(`INSERT INTO config.sites (site_id, site_name, location, timezone, created_at) VALUES ($1, $2, 'here', 'UTC', $3)`, [id, `Tk ${name}`, now]);
  }
  for (const [name, id] of Object.entries(plant)) {
    await sql(`INSERT INTO config.plants (plant_id, plant_name, site_id, created_at) VALUES ($1, $2, $3, $4)`, [id, `Tk ${name}`, name.startsWith("A") ? site.A : site.B, now]);
  }
  const users: [string, string, Record<string, unknown>][] = [
    [u.siteAdminA, "site-admin", { site_id: site.A }],
    [u.siteAdminB, "site-admin", { site_id: site.B }],
    [u.plantAdminA1, "plant-admin", { plant_id: plant.A1 }],
    [u.plantAdminA1bis, "plant-admin", { plant_id: plant.A1 }],
    [u.plantAdminB1, "plant-admin", { plant_id: plant.B1 }],
    // Without the Configuration module: a user manages its own tokens whatever its modules.
    [u.generalA1, "general-user", { plant_id: plant.A1, modules: ["Alerting"] }],
    [u.generalA1bis, "general-user", { plant_id: plant.A1, modules: ["Alerting"] }],
    [u.support, "support-analyst", {}],
  ];
  for (const [username, user_type, place] of users) {
    const res = await t.http("POST", "/_config/users", {
      body: { username, user_type, mobile_number: "5550100", country_code: "+1", password: PASSWORD, ...place },
    });
    expect(res.body).toEqual({ status: "CREATED", message: "User created successfully" });
  }
});

afterAll(async () => {
  await t?.stop();
  jest.restoreAllMocks();
});

describe("issue, list, revoke", () => {
  it("issues a token shown once, lists it without the token, signs in with it and records its use", async () => {
    const before = Date.now();
    const res = await issue(ADMIN.username, { name: "historian export", scope: "read", expires_in_days: 90 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["token", "token_id"]);
    expect(res.body.token_id).toMatch(UUID);
    expect(res.body.token).toMatch(TOKEN);

    const list = await t.http<Listed[]>("GET", tokensOf(ADMIN.username));
    expect(list.status).toBe(200);
    const item = list.body.find((x) => x.token_id === res.body.token_id)!;
    expect(item).toEqual({
      token_id: res.body.token_id,
      name: "historian export",
      scope: "read",
      created_at: expect.stringMatching(ISO),
      expires_at: expect.stringMatching(ISO),
      last_used_at: null,
    });
    expect(JSON.stringify(list.body)).not.toContain(res.body.token);
    const created = Date.parse(item.created_at);
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(item.expires_at) - created).toBe(90 * 86_400_000);

    const read = await t.http("GET", "/_config/sites/_list", bearer(res.body.token));
    expect(read.status).toBe(200);
    const used = (await t.http<Listed[]>("GET", tokensOf(ADMIN.username))).body.find((x) => x.token_id === res.body.token_id)!;
    expect(used.last_used_at).toMatch(ISO);
    expect(Date.parse(used.last_used_at!)).toBeGreaterThanOrEqual(created);
  });

  it("keeps only the token's SHA-256: no column holds the token", async () => {
    const { token, token_id } = await issued(ADMIN.username, "write");
    const rows = await sql(`SELECT * FROM auth.tokens WHERE token_id = $1`, [token_id]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(JSON.stringify(rows)).not.toContain(token.slice(4));
    expect(rows[0]!.token_hash).toBe(createHash("sha256").update(token).digest("hex"));
  });

  it("revokes with the text `Token revoked`: the token is refused at once, and gone from the list", async () => {
    const { token, token_id } = await issued(ADMIN.username, "read");
    expect((await t.http("GET", "/_config/sites/_list", bearer(token))).status).toBe(200);
    const res = await t.http("DELETE", `${tokensOf(ADMIN.username)}/${token_id}`);
    expect(res).toMatchObject({ status: 200, body: "Token revoked" });
    expect(await t.http("GET", "/_config/sites/_list", bearer(token))).toMatchObject({ status: 401, body: err(401, "Invalid credentials") });
    const list = await t.http<Listed[]>("GET", tokensOf(ADMIN.username));
    expect(list.body.map((x) => x.token_id)).not.toContain(token_id);
    // Revoked already: as unknown as any other id.
    expect(await t.http("DELETE", `${tokensOf(ADMIN.username)}/${token_id}`)).toMatchObject({
      status: 400,
      body: err(400, "Invalid input: token_id", "token_id"),
    });
  });

  it("answers bad inputs with the users routes' texts, naming the field", async () => {
    const good = { name: "n", scope: "read", expires_in_days: 1 };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ scope: "read", expires_in_days: 1 }, "Insufficient inputs", "name"],
      [{ name: "n", expires_in_days: 1 }, "Insufficient inputs", "scope"],
      [{ name: "n", scope: "read" }, "Insufficient inputs", "expires_in_days"],
      [{ ...good, name: "" }, "Invalid input: name", "name"],
      [{ ...good, name: "   " }, "Invalid input: name", "name"],
      [{ ...good, name: "x".repeat(256) }, "Invalid input: name", "name"],
      [{ ...good, name: 7 }, "Invalid input: name", "name"],
      [{ ...good, scope: "admin" }, "Invalid input: scope", "scope"],
      [{ ...good, expires_in_days: 0 }, "Invalid input: expires_in_days", "expires_in_days"],
      [{ ...good, expires_in_days: 366 }, "Invalid input: expires_in_days", "expires_in_days"],
      [{ ...good, expires_in_days: 1.5 }, "Invalid input: expires_in_days", "expires_in_days"],
      [{ ...good, expires_in_days: "30" }, "Invalid input: expires_in_days", "expires_in_days"],
      [{ ...good, role: "root" }, "Invalid input: role", "role"],
    ];
    for (const [body, message, field] of cases) {
      expect(await issue(ADMIN.username, body)).toMatchObject({ status: 400, body: err(400, message, field) });
    }
    expect(await issue(ADMIN.username, { ...good, expires_in_days: 365 })).toMatchObject({ status: 200 });
    expect(await issue("nobody@example.com", good)).toMatchObject({ status: 404, body: err(404, "User not found!") });
    expect(await t.http("GET", tokensOf("nobody@example.com"))).toMatchObject({ status: 404, body: err(404, "User not found!") });
    expect(await t.http("GET", `${tokensOf(ADMIN.username)}?limit=1`)).toMatchObject({ status: 400, body: err(400, "Excess inputs") });
    for (const id of [randomUUID(), "not-an-id"]) {
      expect(await t.http("DELETE", `${tokensOf(ADMIN.username)}/${id}`)).toMatchObject({
        status: 400,
        body: err(400, "Invalid input: token_id", "token_id"),
      });
    }
    expect(await t.http("DELETE", `${tokensOf("nobody@example.com")}/${randomUUID()}`)).toMatchObject({ status: 404, body: err(404, "User not found!") });
  });

  it("a token of one user is not another user's to revoke by id", async () => {
    const { token, token_id } = await issued(u.plantAdminA1, "read");
    expect(await t.http("DELETE", `${tokensOf(u.plantAdminA1bis)}/${token_id}`)).toMatchObject({ status: 400, body: err(400, "Invalid input: token_id") });
    expect((await t.http("GET", "/_config/sites/_list", bearer(token))).status).toBe(200);
  });
});

describe("a token signs in as its user", () => {
  it("a read token may only GET: its POST and DELETE answer 403 Unauthorized operation and change nothing", async () => {
    const { token } = await issued(ADMIN.username, "read");
    const post = await t.http("POST", "/_config/sites", { ...bearer(token), body: siteBody("Read Only Works") });
    expect(post).toMatchObject({ status: 403, body: err(403, "Unauthorized operation") });
    expect(await t.http("DELETE", `/_config/sites/${site.A}`, bearer(token))).toMatchObject({ status: 403, body: err(403, "Unauthorized operation") });
    const sites = await t.http<{ site_name: string }[]>("GET", "/_config/sites/_list", bearer(token));
    expect(sites.status).toBe(200);
    expect(sites.body.map((s) => s.site_name)).not.toContain("Read Only Works");
  });

  it("a write token does what its user may", async () => {
    const { token } = await issued(ADMIN.username, "write");
    const post = await t.http<{ id: string }>("POST", "/_config/sites", { ...bearer(token), body: siteBody("Token Works") });
    expect(post).toMatchObject({ status: 200, body: { id: expect.stringMatching(UUID) } });
  });

  it("acts with its user's current type and modules, and is refused once its user is gone", async () => {
    const { token } = await issued(u.generalA1bis, "write");
    // A general-user with Alerting only: refused by module, so the token was accepted.
    expect(await t.http("GET", "/_config/sites/_list", bearer(token))).toMatchObject({ status: 401, body: err(401, "You do not have access to this module") });
    const grant = await t.http("PUT", `/_config/users/${u.generalA1bis}`, {
      body: { username: u.generalA1bis, user_type: "general-user", plant_id: plant.A1, mobile_number: "1", country_code: "+1", password: null, modules: ["Alerting", "Configuration"] },
    });
    expect(grant.status).toBe(200);
    expect((await t.http("GET", "/_config/sites/_list", bearer(token))).status).toBe(200);
    // Still a general-user: a write token does not lift its type's limits.
    expect(await t.http("POST", "/_config/sites", { ...bearer(token), body: siteBody("Nope") })).toMatchObject({ status: 403 });
    expect((await t.http("DELETE", `/_config/users/${u.generalA1bis}`)).status).toBe(200);
    expect(await t.http("GET", "/_config/sites/_list", bearer(token))).toMatchObject({ status: 401, body: err(401, "Invalid credentials") });
    expect(await sql(`SELECT token_id FROM auth.tokens WHERE username = $1`, [u.generalA1bis])).toEqual([]);
  });

  it("refuses an unknown, malformed, expired or revoked token with 401 Invalid credentials, as a wrong password", async () => {
    const expired = `ims_${randomBytes(32).toString("base64url")}`;
    seen.push(expired);
    await sql(`INSERT INTO auth.tokens (token_id, username, name, scope, token_hash, created_at, expires_at) VALUES ($1, $2, 'old', 'write', $3, $4, $5)`, [
      randomUUID(),
      ADMIN.username,
      createHash("sha256").update(expired).digest("hex"),
      Date.now() - 2 * 86_400_000,
      Date.now() - 1000,
    ]);
    const unknown = `ims_${randomBytes(32).toString("base64url")}`;
    for (const token of [expired, unknown, "ims_short", "x".repeat(5000)]) {
      expect(await t.http("GET", "/_config/sites/_list", bearer(token))).toMatchObject({ status: 401, body: err(401, "Invalid credentials") });
    }
    // The expired token is still listed (the list shows why an integration stopped), until revoked.
    const list = await t.http<Listed[]>("GET", tokensOf(ADMIN.username));
    expect(list.body.some((x) => x.name === "old" && Date.parse(x.expires_at) < Date.now())).toBe(true);
  });

  it("a token that expires while cached in the gateway is refused at its expiry", async () => {
    const { token, token_id } = await issued(ADMIN.username, "read");
    await sql(`UPDATE auth.tokens SET expires_at = $2 WHERE token_id = $1`, [token_id, Date.now() + 1500]);
    expect((await t.http("GET", "/_config/sites/_list", bearer(token))).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1600));
    expect(await t.http("GET", "/_config/sites/_list", bearer(token))).toMatchObject({ status: 401, body: err(401, "Invalid credentials") });
  });

  it("a bearer on the ingestion routes stays the pipeline's key", async () => {
    const { token } = await issued(ADMIN.username, "write");
    expect(await t.http("GET", `/_ingest/pipelines/${randomUUID()}`, bearer(token))).toMatchObject({ status: 401, body: err(401, "Invalid ingest key") });
  });

  it("writes last_used_at at most once a minute per token", async () => {
    const { token, token_id } = await issued(ADMIN.username, "read");
    const lastUsed = async () => (await sql<{ last_used_at: string | null }>(`SELECT last_used_at FROM auth.tokens WHERE token_id = $1`, [token_id]))[0]!.last_used_at;
    // Straight to auth, past the gateway's cache: every call is a verification.
    const verify = () => t.node.broker.call("auth.tokens.authenticate", { token });
    await verify();
    const first = await lastUsed();
    expect(first).not.toBeNull();
    await new Promise((r) => setTimeout(r, 20));
    await verify();
    expect(await lastUsed()).toBe(first);
    await sql(`UPDATE auth.tokens SET last_used_at = last_used_at - 61000 WHERE token_id = $1`, [token_id]);
    await verify();
    expect(Number(await lastUsed())).toBeGreaterThan(Number(first));
  });
});

describe("who manages whose tokens", () => {
  it("a write token cannot set a password (its user's sign-in would outlive the token's revocation)", async () => {
    const user = { username: u.siteAdminA, password: PASSWORD };
    const { token } = await issued(user.username, "write", user);
    const body = { username: user.username, user_type: "site-admin", site_id: site.A, mobile_number: "5550100", country_code: "+1", password: "Another#Pass2026" };
    const res = await t.http("PUT", `/_config/users/${encodeURIComponent(user.username)}`, { ...bearer(token), body });
    expect(res).toMatchObject({ status: 403, body: err(403, "Unauthorized operation") });
    // The password is the one it was: it still signs in.
    expect((await t.http("GET", "/_config/sites/_list", { auth: user })).status).toBe(200);
  });

  // A token revokes no token either (docs/security.md, "What an API token may not do"): issuing and revoking are a person's doing.
  it("a token cannot issue tokens (it could outlive its own expiry) nor revoke them, but lists them", async () => {
    const write = await issued(ADMIN.username, "write");
    expect(await issue(ADMIN.username, { name: "anon", scope: "write", expires_in_days: 1 }, null)).toMatchObject({ status: 401, body: err(401, "Invalid credentials") });
    const res = await t.http("POST", tokensOf(ADMIN.username), { ...bearer(write.token), body: { name: "child", scope: "write", expires_in_days: 365 } });
    expect(res).toMatchObject({ status: 403, body: err(403, "Unauthorized operation") });
    expect((await t.http("GET", tokensOf(ADMIN.username), bearer(write.token))).status).toBe(200);
    expect(await t.http("DELETE", `${tokensOf(ADMIN.username)}/${write.token_id}`, bearer(write.token))).toMatchObject({ status: 403, body: err(403, "Unauthorized operation") });
    expect(await t.http("DELETE", `${tokensOf(ADMIN.username)}/${write.token_id}`)).toMatchObject({ status: 200, body: "Token revoked" });
  });

  it("every user manages its own, whatever its type or modules", async () => {
    for (const username of [u.generalA1, u.support, u.plantAdminA1, u.siteAdminA]) {
      const { token, token_id } = await issued(username, "read", login(username));
      const list = await t.http<Listed[]>("GET", tokensOf(username), { auth: login(username) });
      expect(list.body.map((x) => x.token_id)).toContain(token_id);
      // Signed in with its own token, the user lists its own tokens too.
      expect((await t.http("GET", tokensOf(username), bearer(token))).status).toBe(200);
      expect(await t.http("DELETE", `${tokensOf(username)}/${token_id}`, { auth: login(username) })).toMatchObject({ status: 200, body: "Token revoked" });
    }
  });

  it("an admin manages the tokens of users it may update, with the users routes' refusals", async () => {
    const fine: [string, string][] = [
      [u.siteAdminA, u.plantAdminA1],
      [u.siteAdminA, u.generalA1],
      [u.plantAdminA1, u.generalA1],
      [ADMIN.username, u.siteAdminB],
      [ADMIN.username, u.support],
    ];
    for (const [caller, target] of fine) {
      const auth = caller === ADMIN.username ? ADMIN : login(caller);
      const { token_id } = await issued(target, "read", auth);
      const list = await t.http<Listed[]>("GET", tokensOf(target), { auth });
      expect(list.body.map((x) => x.token_id)).toContain(token_id);
      expect((await t.http("DELETE", `${tokensOf(target)}/${token_id}`, { auth })).body).toBe("Token revoked");
    }

    const body = { name: "x", scope: "read", expires_in_days: 1 };
    const refused: [string, string, number, string][] = [
      // Out of the caller's scope: as if the user did not exist.
      [u.siteAdminA, u.plantAdminB1, 404, "User not found!"],
      [u.siteAdminA, u.siteAdminB, 404, "User not found!"],
      [u.siteAdminA, ADMIN.username, 404, "User not found!"],
      [u.plantAdminA1, u.siteAdminA, 404, "User not found!"],
      // In scope, but not the caller's to update.
      [u.plantAdminA1, u.plantAdminA1bis, 401, "Unauthorized operation! plant-admin can't update another plant-admin"],
      [u.generalA1, u.plantAdminA1, 403, "Unauthorized operation!, can't update User"],
      [u.support, u.generalA1, 403, "Unauthorized operation! Support Analyst can't update User"],
      [u.support, ADMIN.username, 403, "Unauthorized operation! Support Analyst can't update User"],
    ];
    const target = await issued(u.plantAdminA1bis, "read");
    for (const [caller, username, status, message] of refused) {
      const auth = login(caller);
      expect(await issue(username, body, auth)).toMatchObject({ status, body: err(status, message) });
      expect(await t.http("GET", tokensOf(username), { auth })).toMatchObject({ status, body: err(status, message) });
      expect(await t.http("DELETE", `${tokensOf(username)}/${target.token_id}`, { auth })).toMatchObject({ status, body: err(status, message) });
    }
    expect((await t.http("GET", "/_config/sites/_list", bearer(target.token))).status).toBe(200);
  });
});

describe("throttle", () => {
  // Last of the requests: it locks this test's address out of every sign-in for the window.
  it("counts a refused token as a failed sign-in of its address: then even a live token answers 429", async () => {
    const { token } = await issued(ADMIN.username, "read");
    expect((await t.http("GET", "/_config/sites/_list", bearer(token))).status).toBe(200);
    let failures = 0;
    let res = await t.http("GET", "/_config/sites/_list", bearer(`ims_${randomBytes(32).toString("base64url")}`));
    while (res.status === 401 && failures <= MAX_FAILURES_PER_ADDRESS) {
      failures++;
      res = await t.http("GET", "/_config/sites/_list", bearer(`ims_${randomBytes(32).toString("base64url")}`));
    }
    expect(failures).toBeLessThanOrEqual(MAX_FAILURES_PER_ADDRESS);
    expect(res).toMatchObject({ status: 429, body: err(429, "Too many failed attempts. Try again later.") });
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await t.http("GET", "/_config/sites/_list", bearer(token))).toMatchObject({ status: 429 });
  });
});

describe("logs", () => {
  it("never hold a token, at debug level", () => {
    expect(seen.length).toBeGreaterThan(10);
    expect(logged.length).toBeGreaterThan(0);
    const all = logged.join("\n");
    for (const token of seen) expect(all).not.toContain(token.slice(4));
  });
});
