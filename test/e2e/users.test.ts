/**
 * Users over HTTP, ops 38-42: every success shape, message and user-type rule of the spec and
 * the contract, the cross-tenant rule, and the credential cache being dropped on each change.
 * Sites and plants are put straight into the config schema of the test database.
 */
import { randomUUID } from "node:crypto";
import { Client } from "pg";
import { ADMIN, startTestNode, type TestNode } from "../helpers/node";
import { passwordIn, startSmtp, type TestSmtp } from "../helpers/smtp";
import { envelope } from "../helpers/envelope";

const PASSWORD = "GoodPass123";
const WEAK = "Weak password: Password must be at least 9 characters long and include a mix of uppercase, lowercase, and numbers.";

let t: TestNode;
let smtp: TestSmtp;

const site = { A: { id: randomUUID(), name: "Alpha Works" }, B: { id: randomUUID(), name: "Bravo Refinery" } };
const plant = {
  A1: { id: randomUUID(), name: "Alpha Plant One", site: site.A },
  A2: { id: randomUUID(), name: "Alpha Plant Two", site: site.A },
  B1: { id: randomUUID(), name: "Bravo Plant One", site: site.B },
};

const login = (username: string, password = PASSWORD) => ({ username, password });
const u = {
  siteAdminA: "site.admin.a@example.com",
  siteAdminB: "site.admin.b@example.com",
  plantAdminA1: "plant.admin.a1@example.com",
  plantAdminA2: "plant.admin.a2@example.com",
  plantAdminB1: "plant.admin.b1@example.com",
  generalA1: "general.a1@example.com",
  generalNoConfig: "general.noconfig@example.com",
  support: "support@example.com",
};

function body(username: string, user_type: string, extra: Record<string, unknown> = {}) {
  return { username, mobile_number: "5550100", country_code: "+1", user_type, password: PASSWORD, ...extra };
}

const err = envelope;

async function sql(text: string, args: unknown[] = []) {
  const c = new Client({ connectionString: t.db.url });
  await c.connect();
  try {
    return (await c.query(text, args)).rows;
  } finally {
    await c.end();
  }
}

async function create(b: Record<string, unknown>, auth = ADMIN) {
  return t.http("POST", "/_config/users", { body: b, auth });
}

beforeAll(async () => {
  smtp = await startSmtp();
  t = await startTestNode({ env: { SMTP_URL: smtp.url } });
  for (const s of Object.values(site)) {
    await sql(`INSERT INTO config.sites (site_id, site_name, location, timezone, created_at) VALUES ($1, $2, 'here', 'UTC', $3)`, [
      s.id,
      s.name,
      Date.now(),
    ]);
  }
  for (const p of Object.values(plant)) {
    await sql(`INSERT INTO config.plants (plant_id, plant_name, site_id, created_at) VALUES ($1, $2, $3, $4)`, [p.id, p.name, p.site.id, Date.now()]);
  }
  const made = [
    await create(body(u.siteAdminA, "site-admin", { site_id: site.A.id })),
    await create(body(u.siteAdminB, "site-admin", { site_id: site.B.id, plant_id: "*" })),
    await create(body(u.plantAdminA1, "plant-admin", { plant_id: plant.A1.id })),
    await create(body(u.plantAdminA2, "plant-admin", { plant_id: plant.A2.id, site_id: site.A.id })),
    await create(body(u.plantAdminB1, "plant-admin", { plant_id: plant.B1.id })),
    await create(body(u.generalA1, "general-user", { plant_id: plant.A1.id, modules: ["Configuration", "Alerting"] })),
    await create(body(u.generalNoConfig, "general-user", { plant_id: plant.A1.id, modules: { Alerting: true, Configuration: false } })),
    await create(body(u.support, "support-analyst")),
  ];
  for (const res of made) expect(res.body).toEqual({ status: "CREATED", message: "User created successfully" });
});

afterAll(async () => {
  await t?.stop();
  await smtp?.stop();
});

describe("op 38 create user", () => {
  it("creates a user who can then sign in, with the CREATED shape", async () => {
    const res = await create(body("New.Person@Example.com", "general-user", { plant_id: plant.A2.id }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "CREATED", message: "User created successfully" });
    // Usernames are emails, compared case-insensitively.
    // A general-user created without modules has none: the module refusal (not "Invalid credentials")
    // shows the credentials were accepted; even its own record is behind the Configuration module.
    const signIn = await t.http("GET", "/_config/server-time", { auth: login("NEW.PERSON@example.com") });
    expect(signIn).toMatchObject({ status: 401, body: err(401, "You do not have access to this module") });
    const me = await t.http("GET", "/_config/users/new.person@example.com", { auth: login("new.person@example.com") });
    expect(me).toMatchObject({ status: 401, body: err(401, "Unauthorized access") });
    const listed = await t.http<{ username: string; modules: string[] }[]>("GET", "/_config/users/_list");
    expect(listed.body.find((i) => i.username === "new.person@example.com")?.modules).toEqual([]);
  });

  it("refuses a duplicate, whatever its case, with 409 User already exists", async () => {
    const res = await create(body(u.plantAdminA1.toUpperCase(), "plant-admin", { plant_id: plant.A1.id }));
    expect(res.status).toBe(409);
    expect(res.body).toEqual(err(409, "User already exists"));
  });

  it("refuses a weak password with the spec's text", async () => {
    for (const password of ["Short1a", "alllowercase123", "ALLUPPER123", "NoDigitsHere"]) {
      const res = await create(body("weak@example.com", "general-user", { plant_id: plant.A1.id, password }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual(err(400, WEAK));
    }
  });

  it("answers missing, unknown and mistyped inputs with 400", async () => {
    const { mobile_number: _m, ...noMobile } = body("x1@example.com", "general-user", { plant_id: plant.A1.id });
    expect((await create(noMobile)).body).toEqual(err(400, "Insufficient inputs"));
    expect((await create(body("x2@example.com", "general-user", { plant_id: plant.A1.id, role: "x" }))).body).toEqual(
      err(400, "Invalid input: role"),
    );
    expect((await create(body("x3@example.com", "operator", { plant_id: plant.A1.id }))).body).toEqual(err(400, "Invalid input: user_type"));
    expect((await create(body("not-an-email", "general-user", { plant_id: plant.A1.id }))).body).toEqual(err(400, "Invalid input: username"));
    expect((await create(body("x4@example.com", "general-user", { plant_id: plant.A1.id, modules: ["Payroll"] }))).body).toEqual(
      err(400, "Invalid input: modules[0]"),
    );
    expect((await create(body("x5@example.com", "general-user", { plant_id: plant.A1.id, mobile_number: 5550100 }))).body).toEqual(
      err(400, "Invalid input: mobile_number"),
    );
    expect((await create(body("x6@example.com", "general-user", { plant_id: plant.A1.id, mobile_number: "9".repeat(100_000) }))).status).toBe(400);
    const none = await sql(`SELECT username FROM auth.users WHERE username LIKE 'x_@example.com'`);
    expect(none).toEqual([]);
  });

  it("needs site_id for a site-admin and plant_id for a plant user, and checks they exist", async () => {
    expect((await create(body("sa@example.com", "site-admin"))).body).toEqual(err(400, "Insufficient inputs"));
    expect((await create(body("pa@example.com", "plant-admin"))).body).toEqual(err(400, "Insufficient inputs"));
    const ghost = randomUUID();
    expect((await create(body("sa@example.com", "site-admin", { site_id: ghost }))).body).toEqual(err(400, `Invalid Site ID: ${ghost}`));
    expect((await create(body("pa@example.com", "plant-admin", { plant_id: "nope" }))).body).toEqual(err(400, "Invalid Plant ID: nope"));
    // A plant's site is the user's site: a site that says otherwise is refused.
    expect((await create(body("pa@example.com", "plant-admin", { plant_id: plant.A1.id, site_id: site.B.id }))).body).toEqual(
      err(400, `Invalid Site ID: ${site.B.id}`),
    );
  });

  it("site-admin: 401 for another site-admin, 403 for the all-sites types, plants of other sites do not exist", async () => {
    const as = login(u.siteAdminA);
    expect(await create(body("sa2@example.com", "site-admin", { site_id: site.A.id }), as)).toMatchObject({
      status: 401,
      body: err(401, "Unauthorized operation! site-admin can't create another site-admin"),
    });
    expect(await create(body("sup2@example.com", "support-analyst"), as)).toMatchObject({
      status: 403,
      body: err(403, "Unauthorized operation!, can't create user"),
    });
    expect(await create(body("boss@example.com", "saas-admin"), as)).toMatchObject({ status: 403 });
    const cross = await create(body("cross@example.com", "plant-admin", { plant_id: plant.B1.id }), as);
    expect(cross.status).toBe(400);
    expect(cross.body).toEqual(err(400, `Invalid Plant ID: ${plant.B1.id}`));
    expect(JSON.stringify(cross.body)).not.toContain(plant.B1.name);
    expect((await create(body("pa.a2@example.com", "plant-admin", { plant_id: plant.A2.id }), as)).body).toEqual({
      status: "CREATED",
      message: "User created successfully",
    });
  });

  it("plant-admin: 401 for another plant-admin, 403 above it, only general-users of its own plant", async () => {
    const as = login(u.plantAdminA1);
    expect(await create(body("pa3@example.com", "plant-admin", { plant_id: plant.A1.id }), as)).toMatchObject({
      status: 401,
      body: err(401, "Unauthorized operation! plant-admin can't create another plant-admin"),
    });
    expect(await create(body("sa3@example.com", "site-admin", { site_id: site.A.id }), as)).toMatchObject({
      status: 403,
      body: err(403, "Unauthorized operation!, can't create user"),
    });
    expect((await create(body("g.a2@example.com", "general-user", { plant_id: plant.A2.id }), as)).body).toEqual(
      err(400, `Invalid Plant ID: ${plant.A2.id}`),
    );
    expect((await create(body("g.a1@example.com", "general-user", { plant_id: plant.A1.id }), as)).body).toEqual({
      status: "CREATED",
      message: "User created successfully",
    });
  });

  it("support-analyst and general-user may not create users", async () => {
    expect(await create(body("s1@example.com", "general-user", { plant_id: plant.A1.id }), login(u.support))).toMatchObject({
      status: 403,
      body: err(403, "Unauthorized operation! Support Analyst can't create User"),
    });
    expect(await create(body("s2@example.com", "general-user", { plant_id: plant.A1.id }), login(u.generalA1))).toMatchObject({
      status: 403,
      body: err(403, "Unauthorized operation!, can't create user"),
    });
    // Without the Configuration module the gateway refuses first (spec: users' 401 text).
    expect(await create(body("s3@example.com", "general-user", { plant_id: plant.A1.id }), login(u.generalNoConfig))).toMatchObject({
      status: 401,
      body: err(401, "Unauthorized access"),
    });
  });

  it("without a password, generates one and emails it; it signs in", async () => {
    const { password: _p, ...noPassword } = body("mailed@example.com", "general-user", { plant_id: plant.A1.id, modules: ["Configuration"] });
    const res = await create(noPassword);
    expect(res.body).toEqual({ status: "CREATED", message: "User created successfully" });
    const [mail] = await smtp.waitFor(1, { to: "mailed@example.com" });
    const password = passwordIn(mail);
    expect(password.length).toBeGreaterThanOrEqual(9);
    const me = await t.http("GET", "/_config/server-time", { auth: login("mailed@example.com", password) });
    expect(me.status).toBe(200);
    // The password is a secret: the notification's stored body does not keep it once sent.
    const stored = await sql(`SELECT body FROM notifier.notifications WHERE recipient = 'mailed@example.com'`);
    expect(JSON.stringify(stored)).not.toContain(password);
  });
});

describe("op 41 fetch user", () => {
  it("answers the spec's shape, with no password hash in it", async () => {
    expect((await t.http("GET", "/_config/server-time", { auth: login(u.plantAdminA1) })).status).toBe(200); // sets last_login_time
    const res = await t.http("GET", `/_config/users/${u.plantAdminA1}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      hash: "",
      reserved: false,
      hidden: false,
      backend_roles: ["plant-admin"],
      attributes: {
        site_id: site.A.id,
        plant_id: plant.A1.id,
        user_type: "plant-admin",
        created_at: expect.stringMatching(/^\d{13}$/),
        country_code: "+1",
        mobile_number: "5550100",
        last_login_time: expect.stringMatching(/^\d{13}$/),
        site_name: site.A.name,
        plant_name: plant.A1.name,
      },
      platform_security_roles: [],
      static: false,
    });
    expect(JSON.stringify(res.body)).not.toContain("argon2");
    // The same user by a percent-encoded path, as a client that encodes the @ would send it.
    const encoded = await t.http("GET", `/_config/users/${encodeURIComponent(u.plantAdminA1)}`);
    expect(encoded.body).toEqual(res.body);
  });

  it("shows a site-admin with plant_id * and no plant name, and the bootstrap admin as reserved", async () => {
    const sa = await t.http<{ attributes: Record<string, unknown> }>("GET", `/_config/users/${u.siteAdminB}`);
    expect(sa.body.attributes).toMatchObject({ site_id: site.B.id, plant_id: "*", site_name: site.B.name, plant_name: null });
    const admin = await t.http<{ reserved: boolean; attributes: Record<string, unknown> }>("GET", `/_config/users/${ADMIN.username}`);
    expect(admin.body.reserved).toBe(true);
    expect(admin.body.attributes).toMatchObject({ user_type: "saas-admin", site_id: "*", plant_id: "*" });
  });

  it("answers 404 User not found! for a missing user and for one outside the caller's scope", async () => {
    expect(await t.http("GET", "/_config/users/ghost@example.com")).toMatchObject({ status: 404, body: err(404, "User not found!") });
    const cross = await t.http("GET", `/_config/users/${u.plantAdminB1}`, { auth: login(u.siteAdminA) });
    expect(cross).toMatchObject({ status: 404, body: err(404, "User not found!") });
    expect(await t.http("GET", `/_config/users/${u.plantAdminA2}`, { auth: login(u.plantAdminA1) })).toMatchObject({ status: 404 });
    expect(await t.http("GET", `/_config/users/${u.siteAdminA}`, { auth: login(u.plantAdminA1) })).toMatchObject({ status: 404 });
    expect((await t.http("GET", `/_config/users/${u.generalA1}`, { auth: login(u.plantAdminA1) })).status).toBe(200);
  });
});

describe("op 42 list users", () => {
  interface Item {
    username: string;
    site_id: string;
    plant_id: string;
    site_name: string | null;
    plant_name: string | null;
    [k: string]: unknown;
  }

  it("lists every user for a SaaS admin, items in the spec's shape", async () => {
    const res = await t.http<Item[]>("GET", "/_config/users/_list");
    expect(res.status).toBe(200);
    const names = res.body.map((i) => i.username);
    expect(names).toEqual(expect.arrayContaining([ADMIN.username, ...Object.values(u)]));
    expect(res.headers.get("x-total-count")).toBe(String(res.body.length));
    const general = res.body.find((i) => i.username === u.generalNoConfig);
    expect(general).toEqual({
      username: u.generalNoConfig,
      mobile_number: "5550100",
      country_code: "+1",
      user_type: "general-user",
      site_id: site.A.id,
      plant_id: plant.A1.id,
      site_name: site.A.name,
      plant_name: plant.A1.name,
      created_at: expect.stringMatching(/^\d{13}$/),
      last_login_time: expect.anything(),
      permissions: null,
      modules: ["Alerting"],
    });
    expect(res.body.find((i) => i.username === u.siteAdminA)).toMatchObject({ plant_id: "*", plant_name: null, site_name: site.A.name });
  });

  it("makes every other type give site_id and plant_id", async () => {
    for (const who of [u.siteAdminA, u.plantAdminA1, u.support]) {
      const res = await t.http("GET", `/_config/users/_list?site_id=${site.A.id}`, { auth: login(who) });
      expect(res).toMatchObject({ status: 400, body: err(400, "Insufficient inputs") });
    }
  });

  it("limits a site-admin to its own site", async () => {
    const res = await t.http<Item[]>("GET", `/_config/users/_list?site_id=${site.A.id}&plant_id=*`, { auth: login(u.siteAdminA) });
    expect(res.status).toBe(200);
    expect(res.body.every((i) => i.site_id === site.A.id)).toBe(true);
    expect(res.body.map((i) => i.username)).toEqual(expect.arrayContaining([u.siteAdminA, u.plantAdminA1, u.plantAdminA2, u.generalA1]));
    const other = await t.http<Item[]>("GET", `/_config/users/_list?site_id=${site.B.id}&plant_id=*`, { auth: login(u.siteAdminA) });
    expect(other.body).toEqual([]);
    expect(JSON.stringify(other.body)).not.toContain(site.B.name);
    const plantOnly = await t.http<Item[]>("GET", `/_config/users/_list?site_id=${site.A.id}&plant_id=${plant.A2.id}`, {
      auth: login(u.siteAdminA),
    });
    expect(plantOnly.body.length).toBeGreaterThan(0);
    expect(plantOnly.body.every((i) => i.plant_id === plant.A2.id)).toBe(true);
  });

  it("reads * as every site and every plant, within the caller's own scope", async () => {
    // A support analyst must name both, and reaches every site: `*` is how it asks for all of them.
    const all = await t.http<Item[]>("GET", "/_config/users/_list?site_id=*&plant_id=*", { auth: login(u.support) });
    expect(all.status).toBe(200);
    const sites = new Set(all.body.map((i) => i.site_id));
    expect(sites.has(site.A.id) && sites.has(site.B.id)).toBe(true);
    // A site-admin asking for every site still sees only its own.
    const mine = await t.http<Item[]>("GET", "/_config/users/_list?site_id=*&plant_id=*", { auth: login(u.siteAdminA) });
    expect(mine.body.length).toBeGreaterThan(0);
    expect(mine.body.every((i) => i.site_id === site.A.id)).toBe(true);
  });

  it("limits a plant-admin to its own plant, whatever it asks for", async () => {
    const res = await t.http<Item[]>("GET", `/_config/users/_list?site_id=${site.A.id}&plant_id=*`, { auth: login(u.plantAdminA1) });
    expect(res.status).toBe(200);
    expect(res.body.length).toBeGreaterThan(0);
    expect(res.body.every((i) => i.plant_id === plant.A1.id)).toBe(true);
    expect(res.body.map((i) => i.username)).not.toContain(u.siteAdminA);
  });

  it("pages with limit and offset and counts in X-Total-Count; refuses unknown query keys", async () => {
    const all = await t.http<Item[]>("GET", "/_config/users/_list");
    const page = await t.http<Item[]>("GET", "/_config/users/_list?limit=2&offset=1");
    expect(page.body).toEqual(all.body.slice(1, 3));
    expect(page.headers.get("x-total-count")).toBe(String(all.body.length));
    expect(await t.http("GET", "/_config/users/_list?limit=0")).toMatchObject({ status: 400 });
    expect(await t.http("GET", "/_config/users/_list?color=red")).toMatchObject({ status: 400, body: err(400, "Excess inputs") });
  });
});

describe("op 40 update user", () => {
  const update = (username: string, b: Record<string, unknown>, auth = ADMIN) => t.http("PUT", `/_config/users/${username}`, { body: b, auth });

  it("updates with the OK shape; a null password keeps the old one", async () => {
    const res = await update(u.plantAdminA2, body(u.plantAdminA2, "plant-admin", { password: null, mobile_number: "5550199" }));
    expect(res).toMatchObject({ status: 200, body: { status: "OK", message: "User updated successfully" } });
    const me = await t.http<{ attributes: { mobile_number: string; plant_id: string } }>("GET", `/_config/users/${u.plantAdminA2}`, {
      auth: login(u.plantAdminA2),
    });
    expect(me.status).toBe(200);
    expect(me.body.attributes).toMatchObject({ mobile_number: "5550199", plant_id: plant.A2.id });
  });

  it("needs the username in the body too (all five fields are required), and does not rename by it", async () => {
    const { username: _dropped, ...noName } = body(u.plantAdminA2, "plant-admin", { password: null });
    expect(await update(u.plantAdminA2, noName)).toMatchObject({ status: 400, body: err(400, "Insufficient inputs") });
    // The path names whom to update; another username in the body renames nobody.
    const other = await update(u.plantAdminA2, body("someone.else@example.com", "plant-admin", { password: null, mobile_number: "5550177" }));
    expect(other).toMatchObject({ status: 200, body: { status: "OK", message: "User updated successfully" } });
    const me = await t.http<{ attributes: { mobile_number: string } }>("GET", `/_config/users/${u.plantAdminA2}`);
    expect(me.body.attributes.mobile_number).toBe("5550177");
    expect((await t.http("GET", "/_config/users/someone.else@example.com")).status).toBe(404);
  });

  it("a new password replaces the old one at once, cached credentials included", async () => {
    const who = "rotate@example.com";
    await create(body(who, "general-user", { plant_id: plant.A1.id, modules: ["Configuration"] }));
    expect((await t.http("GET", `/_config/users/${who}`, { auth: login(who) })).status).toBe(200); // now cached
    const res = await update(who, body(who, "general-user", { password: "NewPass4567" }));
    expect(res.body).toEqual({ status: "OK", message: "User updated successfully" });
    expect(await t.http("GET", `/_config/users/${who}`, { auth: login(who) })).toMatchObject({
      status: 401,
      body: err(401, "Invalid credentials"),
    });
    expect((await t.http("GET", `/_config/users/${who}`, { auth: login(who, "NewPass4567") })).status).toBe(200);
  });

  it("keeps modules in the order they were written, in either form (the spec's example order included)", async () => {
    const who = "module.order@example.com";
    const spec = ["Condition Monitoring", "Alerting", "Configuration"];
    await create(body(who, "general-user", { plant_id: plant.A1.id, modules: spec }));
    const modulesOf = async () =>
      (await t.http<{ username: string; modules: string[] }[]>("GET", "/_config/users/_list")).body.find((i) => i.username === who)?.modules;
    expect(await modulesOf()).toEqual(spec);
    await update(who, body(who, "general-user", { password: null, modules: { Notebooks: true, Alerting: false, "Energy Monitoring": 1 } }));
    expect(await modulesOf()).toEqual(["Notebooks", "Energy Monitoring"]);
    await update(who, body(who, "general-user", { password: null, modules: ["Alerting", "Alerting", "Configuration"] }));
    expect(await modulesOf()).toEqual(["Alerting", "Configuration"]);
  });

  it("a change of modules or type applies at once", async () => {
    const who = "modules@example.com";
    await create(body(who, "general-user", { plant_id: plant.A1.id, modules: ["Configuration"] }));
    const list = `/_config/users/_list?site_id=${site.A.id}&plant_id=${plant.A1.id}`;
    expect((await t.http("GET", list, { auth: login(who) })).status).toBe(200);
    await update(who, body(who, "general-user", { password: null, modules: { Alerting: 1 } }));
    expect(await t.http("GET", list, { auth: login(who) })).toMatchObject({ status: 401, body: err(401, "Unauthorized access") });
    await update(who, body(who, "plant-admin", { password: null }));
    expect((await t.http("GET", list, { auth: login(who) })).status).toBe(200);
  });

  it("moves a user to another plant, its site following", async () => {
    const who = "mover@example.com";
    await create(body(who, "general-user", { plant_id: plant.A1.id }));
    await update(who, body(who, "general-user", { password: null, plant_id: plant.B1.id }));
    const res = await t.http<{ attributes: Record<string, unknown> }>("GET", `/_config/users/${who}`);
    expect(res.body.attributes).toMatchObject({ site_id: site.B.id, plant_id: plant.B1.id, site_name: site.B.name, plant_name: plant.B1.name });
  });

  it("needs every required field, password included (null is fine)", async () => {
    const { password: _p, ...noPassword } = body(u.generalA1, "general-user");
    expect(await update(u.generalA1, noPassword)).toMatchObject({ status: 400, body: err(400, "Insufficient inputs") });
    expect(await update(u.generalA1, body(u.generalA1, "general-user", { password: "weak" }))).toMatchObject({
      status: 400,
      body: err(400, WEAK),
    });
  });

  it("answers 404 User not found for a missing user and one outside the caller's scope", async () => {
    expect(await update("ghost@example.com", body("ghost@example.com", "general-user"))).toMatchObject({
      status: 404,
      body: err(404, "User not found"),
    });
    expect(await update(u.plantAdminB1, body(u.plantAdminB1, "plant-admin", { password: null }), login(u.siteAdminA))).toMatchObject({
      status: 404,
      body: err(404, "User not found"),
    });
  });

  it("refuses by user type with the spec's statuses", async () => {
    expect(await update(u.generalA1, body(u.generalA1, "general-user", { password: null }), login(u.support))).toMatchObject({
      status: 403,
      body: err(403, "Unauthorized operation! Support Analyst can't update User"),
    });
    const siteAdminAlike = await t.http("POST", "/_config/users", {
      body: body("sa.other@example.com", "site-admin", { site_id: site.A.id }),
    });
    expect(siteAdminAlike.status).toBe(200);
    expect(
      await update("sa.other@example.com", body("sa.other@example.com", "site-admin", { password: null }), login(u.siteAdminA)),
    ).toMatchObject({ status: 401, body: err(401, "Unauthorized operation! site-admin can't update another site-admin") });
    expect(
      await update(u.generalA1, body(u.generalA1, "site-admin", { password: null, site_id: site.A.id }), login(u.siteAdminA)),
    ).toMatchObject({ status: 401, body: err(401, "Unauthorized operation! site-admin can't update another site-admin") });
    const pa = "pa.peer@example.com";
    await create(body(pa, "plant-admin", { plant_id: plant.A1.id }));
    expect(await update(pa, body(pa, "plant-admin", { password: null }), login(u.plantAdminA1))).toMatchObject({
      status: 401,
      body: err(401, "Unauthorized operation! plant-admin can't update another plant-admin"),
    });
    expect(await update(u.generalA1, body(u.generalA1, "plant-admin", { password: null }), login(u.plantAdminA1))).toMatchObject({
      status: 401,
      body: err(401, "Unauthorized operation! plant-admin can't update another plant-admin"),
    });
    expect(await update(u.generalA1, body(u.generalA1, "support-analyst", { password: null }), login(u.siteAdminA))).toMatchObject({
      status: 403,
      body: err(403, "Unauthorized operation!, can't update User"),
    });
    expect(await update(u.generalA1, body(u.generalA1, "general-user", { password: null, plant_id: plant.A2.id }), login(u.plantAdminA1))).toMatchObject({
      status: 400,
      body: err(400, `Invalid Plant ID: ${plant.A2.id}`),
    });
  });

  it("refuses a general-user's update even of its own record (it writes alert notes and notebooks only)", async () => {
    const me = login(u.generalA1);
    expect(await update(u.generalA1, body(u.generalA1, "general-user", { password: null, plant_id: plant.A1.id, mobile_number: "5550112" }), me)).toMatchObject({
      status: 403,
      body: err(403, "Unauthorized operation!, can't update User"),
    });
    const after = await t.http<{ mobile_number: string }>("GET", `/_config/users/${u.generalA1}`);
    expect(after.body.mobile_number).not.toBe("5550112");
  });

  it("lets an admin change its own contact details but not its own type or place", async () => {
    const me = login(u.plantAdminA1);
    expect(await update(u.plantAdminA1, body(u.plantAdminA1, "plant-admin", { password: null, mobile_number: "5550111" }), me)).toMatchObject({
      status: 200,
      body: { status: "OK", message: "User updated successfully" },
    });
    expect(await update(u.plantAdminA1, body(u.plantAdminA1, "site-admin", { password: null, site_id: site.A.id }), me)).toMatchObject({
      status: 403,
      body: err(403, "Unauthorized operation!, can't update User"),
    });
    expect(await update(ADMIN.username, body(ADMIN.username, "general-user", { password: null, plant_id: plant.A1.id }))).toMatchObject({
      status: 403,
      body: err(403, "Unauthorized operation!, can't update User"),
    });
  });
});

describe("op 39 delete user", () => {
  const remove = (username: string, auth = ADMIN) => t.http("DELETE", `/_config/users/${username}`, { auth });

  it("deletes with the OK shape; the deleted user's cached credentials stop working", async () => {
    const who = "leaver@example.com";
    await create(body(who, "plant-admin", { plant_id: plant.A1.id }));
    expect((await t.http("GET", `/_config/users/${who}`, { auth: login(who) })).status).toBe(200);
    const res = await remove(who, login(u.siteAdminA));
    expect(res).toMatchObject({ status: 200, body: { status: "OK", message: "User deleted successfully" } });
    expect(await t.http("GET", `/_config/users/${who}`, { auth: login(who) })).toMatchObject({
      status: 401,
      body: err(401, "Invalid credentials"),
    });
    expect(await remove(who)).toMatchObject({ status: 404, body: err(404, "User not found!") });
  });

  it("refuses to delete yourself or the bootstrap admin with 400", async () => {
    expect(await remove(ADMIN.username)).toMatchObject({ status: 400, body: err(400, "Invalid Operation, can't delete user") });
    expect(await remove(u.siteAdminA, login(u.siteAdminA))).toMatchObject({
      status: 400,
      body: err(400, "Invalid Operation, can't delete user"),
    });
    const boss = "boss@example.com";
    await create(body(boss, "saas-admin"));
    expect(await remove(ADMIN.username, login(boss))).toMatchObject({ status: 400, body: err(400, "Invalid Operation, can't delete user") });
  });

  it("refuses by user type with 403, and answers 404 outside the caller's scope", async () => {
    const forbidden = err(403, "Unauthorized operation!, can't delete user");
    expect(await remove(u.generalA1, login(u.support))).toMatchObject({ status: 403, body: forbidden });
    expect(await remove(u.plantAdminA2, login(u.generalA1))).toMatchObject({ status: 404 });
    const peer = "peer.delete@example.com";
    await create(body(peer, "plant-admin", { plant_id: plant.A1.id }));
    expect(await remove(peer, login(u.plantAdminA1))).toMatchObject({ status: 403, body: forbidden });
    expect(await remove("sa.other@example.com", login(u.siteAdminA))).toMatchObject({ status: 403, body: forbidden });
    expect(await remove(u.plantAdminB1, login(u.siteAdminA))).toMatchObject({ status: 404, body: err(404, "User not found!") });
    const g = "deletable@example.com";
    await create(body(g, "general-user", { plant_id: plant.A1.id }));
    expect(await remove(g, login(u.plantAdminA1))).toMatchObject({ status: 200, body: { status: "OK", message: "User deleted successfully" } });
  });
});
