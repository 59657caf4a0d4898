/**
 * Addresses, tokens and secrets that cannot be turned against the service (docs/security.md,
 * "Addresses, tokens and secrets"), over HTTP against the machine's PostgreSQL, MariaDB, and a real
 * SMTP server on loopback: op 57 refusing the service's own database and the link-local metadata
 * address at once, a loopback MariaDB named in SOURCE_ALLOW introspected, op 57 throttled per
 * client address; the GET forms of run and schedule treated as changes; what a token may not do, a
 * reset revoking tokens, `via_token_of`; pipeline secrets sealed; the CSV export neutralised;
 * ingest keys rotated.
 *
 * The node trusts loopback as its proxy (TRUST_PROXY), so that a test speaks for a client address
 * of its choosing with X-Forwarded-For, and keeps a rotated key 3 s (INGEST_KEY_GRACE_S).
 */
import { randomBytes } from "node:crypto";
import mysql from "mysql2/promise";
import { Client } from "pg";
import { ADMIN, type RequestOptions, type TestNode, startTestNode } from "../helpers/node";
import { otpIn, startSmtp, type TestSmtp } from "../helpers/smtp";
import { makeUser } from "./alerting-fixtures";
import { createEdge, edgeBody, err, eventually, hierarchy, ingest, monitor, nextMac, type Hierarchy } from "./pipelines-fixtures";

const GRACE_S = 3;
const scratch = `ims_iso_${randomBytes(4).toString("hex")}`;
let t: TestNode;
let smtp: TestSmtp;
let pg: Client;
let h: Hierarchy;
let plantAdmin: { username: string; password: string };

const bearer = (token: string): RequestOptions => ({ auth: null, headers: { authorization: `Bearer ${token}` } });

async function token(username: string, scope: "read" | "write", auth: RequestOptions["auth"] = ADMIN): Promise<{ token_id: string; token: string }> {
  const res = await t.http<{ token_id: string; token: string }>("POST", `/_config/users/${encodeURIComponent(username)}/tokens`, {
    auth,
    body: { name: `${scope} token`, scope, expires_in_days: 30 },
  });
  expect(res.status).toBe(200);
  return res.body;
}

beforeAll(async () => {
  smtp = await startSmtp();
  t = await startTestNode({
    services: ["api", "auth", "config", "notifier", "pipelines", "notebooks"],
    env: {
      SMTP_URL: smtp.url,
      TRUST_PROXY: "127.0.0.1,::1",
      // The service's own PostgreSQL (127.0.0.1:5432) is named too: SOURCE_ALLOW cannot open it.
      SOURCE_ALLOW: "127.0.0.1:3306,127.0.0.1:5432",
      INGEST_KEY_GRACE_S: String(GRACE_S),
    },
  });
  pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  h = await hierarchy(t, "Iso");
  plantAdmin = await makeUser(t.http, { username: "iso.plant@example.com", user_type: "plant-admin", plant_id: h.plant }, "PlantPass123");
  const my = await mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root" });
  await my.query(`CREATE DATABASE ${scratch}`);
  await my.end();
}, 60_000);

afterAll(async () => {
  await pg?.end();
  await t?.stop();
  await smtp?.stop();
  const my = await mysql.createConnection({ host: "127.0.0.1", port: 3306, user: "root" });
  await my.query(`DROP DATABASE IF EXISTS ${scratch}`);
  await my.end();
});

describe("op 57: addresses users give", () => {
  let client = 0;
  /** Each call from an address of its own, unless told: the throttle is per client address. */
  const connect = (body: Record<string, unknown>, query = "", from = `198.51.100.${++client}`) =>
    t.http("POST", `/_config/pipelines/sql/connect${query}`, { body, auth: null, headers: { "x-forwarded-for": from } });
  /**
   * Refusals must come well under a second (a connection attempt to a silent address takes 5 s):
   * 500 ms leaves room for a loaded two-core machine (5 to 40 ms alone, up to 300 ms beside other suites).
   */
  const AT_ONCE_MS = 500;
  beforeAll(async () => {
    // The first request through a new node pays for its first DNS lookup and route: not what is measured.
    await connect({ server_address: "127.0.0.1", port: 1, username: "x", password: "", dialect: "mysql" });
  });
  const timed = async (body: Record<string, unknown>, query = "") => {
    const started = process.hrtime.bigint();
    const res = await connect(body, query);
    return { res, ms: Number(process.hrtime.bigint() - started) / 1e6 };
  };

  it("refuses the service's own PostgreSQL at once, whatever the database and however the host is written, SOURCE_ALLOW or not", async () => {
    const own = { server_address: "127.0.0.1", port: 5432, username: "postgres", password: "" };
    for (const [body, query] of [
      [own, ""],
      [{ ...own, server_address: "localhost" }, ""],
      [{ ...own, server_address: "::ffff:127.0.0.1" }, ""],
      [{ ...own, server_address: "127.0.0.2" }, ""],
      [own, `?database=${t.db.name}`],
      [own, "?database=postgres&table=pg_user"],
    ] as const) {
      const { res, ms } = await timed(body, query);
      expect({ host: body.server_address, query, ...res }).toMatchObject({ status: 400, body: err(400, "Failed to connect to DB") });
      expect(ms).toBeLessThan(AT_ONCE_MS);
    }
  });

  it("refuses the link-local metadata address at once, without trying it (a connection would wait 5 s)", async () => {
    for (const port of [80, 3306, 5432]) {
      const { res, ms } = await timed({ server_address: "169.254.169.254", port, username: "root", password: "", dialect: "mysql" });
      expect(res).toMatchObject({ status: 400, body: err(400, "Failed to connect to DB") });
      expect(ms).toBeLessThan(AT_ONCE_MS);
    }
  });

  it("refuses loopback ports SOURCE_ALLOW does not name, and unspecified addresses", async () => {
    for (const [server_address, port] of [["127.0.0.1", 3307], ["::1", 3306], ["0.0.0.0", 3306], ["127.0.0.1", 6379], ["127.0.0.1", 4222]] as const) {
      const { res, ms } = await timed({ server_address, port, username: "root", password: "", dialect: "mysql" });
      expect({ server_address, port, ...res }).toMatchObject({ status: 400, body: err(400, "Failed to connect to DB") });
      expect(ms).toBeLessThan(AT_ONCE_MS);
    }
  });

  it("introspects a loopback MariaDB that SOURCE_ALLOW names", async () => {
    const res = await connect({ server_address: "127.0.0.1", port: 3306, username: "root", password: "" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.arrayContaining([scratch]));
  });

  it("answers the 11th call of a minute from one address 429 Too many requests with Retry-After; other addresses go on", async () => {
    const from = "203.0.113.57";
    for (let i = 0; i < 10; i++) expect((await connect({}, "", from)).body).toEqual(err(400, "Missing parameters: server_address, port, username, password"));
    const refused = await connect({ server_address: "127.0.0.1", port: 3306, username: "root", password: "" }, "", from);
    expect(refused).toMatchObject({ status: 429, body: err(429, "Too many requests") });
    const wait = Number(refused.headers.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect((await connect({}, "", "203.0.113.58")).status).toBe(400);
  });
});

describe("GETs that change something (op 64 run, op 65 schedule)", () => {
  it("a read token's GET _run and GET _schedule answer 403 Unauthorized operation; its GET of a list does not", async () => {
    const read = await token(ADMIN.username, "read");
    for (const path of ["/_notebooks/notebooks/_run", "/_notebooks/notebooks/_schedule"]) {
      expect({ path, ...(await t.http("GET", path, bearer(read.token))) }).toMatchObject({
        path,
        status: 403,
        body: err(403, "Unauthorized operation"),
      });
    }
    expect((await t.http("GET", "/_notebooks/notebooks/_all", bearer(read.token))).status).toBe(200);
    // A write token reaches the operation (which answers its own error for no notebooks named; fetch sends no body with a GET).
    const write = await token(ADMIN.username, "write");
    expect(await t.http("GET", "/_notebooks/notebooks/_run", bearer(write.token))).toMatchObject({ status: 400, body: err(400, "Notebook ID(s) are required") });
  });

  it("a console session needs X-Requested-With: ims-console on the GET forms, as on any change", async () => {
    const signIn = await t.http("POST", "/_auth/session", { auth: null, body: ADMIN, headers: { "x-requested-with": "ims-console" } });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.getSetCookie().find((c) => c.startsWith("ims_session="))!.split(";")[0]!;
    for (const path of ["/_notebooks/notebooks/_run", "/_notebooks/notebooks/_schedule"]) {
      const res = await t.http("GET", path, { auth: null, headers: { cookie } });
      expect({ path, ...res }).toMatchObject({ path, status: 403, body: err(403, "Unauthorized operation") });
      const fromConsole = await t.http("GET", path, { auth: null, headers: { cookie, "x-requested-with": "ims-console" } });
      expect(fromConsole.status).toBe(400);
    }
    // A GET that changes nothing needs no header.
    expect((await t.http("GET", "/_notebooks/notebooks/_all", { auth: null, headers: { cookie } })).status).toBe(200);
  });
});

describe("what a token may not do", () => {
  const newUserBody = (username: string, password: string | null) => ({
    username,
    user_type: "general-user",
    plant_id: h.plant,
    mobile_number: "5550100",
    country_code: "+1",
    password,
    modules: ["Alerting"],
  });

  it("a write token may not create a user, with a password or without one, change a password, or issue or revoke tokens: 403", async () => {
    const write = await token(plantAdmin.username, "write", plantAdmin);
    const forbidden = { status: 403, body: err(403, "Unauthorized operation") };
    expect(await t.http("POST", "/_config/users", { ...bearer(write.token), body: newUserBody("iso.made@example.com", "MadePass123") })).toMatchObject(forbidden);
    expect((await t.http("GET", `/_config/users/${encodeURIComponent("iso.made@example.com")}`)).status).toBe(404);
    const me = { ...newUserBody(plantAdmin.username, "Changed#Pass2026"), user_type: "plant-admin" };
    expect(await t.http("PUT", `/_config/users/${encodeURIComponent(plantAdmin.username)}`, { ...bearer(write.token), body: me })).toMatchObject(forbidden);
    const tokens = `/_config/users/${encodeURIComponent(plantAdmin.username)}/tokens`;
    expect(await t.http("POST", tokens, { ...bearer(write.token), body: { name: "child", scope: "read", expires_in_days: 1 } })).toMatchObject(forbidden);
    expect(await t.http("DELETE", `${tokens}/${write.token_id}`, bearer(write.token))).toMatchObject(forbidden);
    // The OTP-driven change refuses a token too, before it looks at the code.
    expect(await t.http("PUT", "/_config/users/password", { ...bearer(write.token), body: { email: plantAdmin.username, otp: "000000", new_password: "Changed#Pass2026" } })).toMatchObject(
      forbidden,
    );
    // Its user's password is the one it was, and the token still works.
    expect((await t.http("GET", "/_config/sites/_list", { auth: plantAdmin })).status).toBe(200);
    expect((await t.http("GET", "/_config/sites/_list", bearer(write.token))).status).toBe(200);
    // Without a password neither: the generated one would go by email to an address the token's holder may control.
    expect(await t.http("POST", "/_config/users", { ...bearer(write.token), body: newUserBody("iso.made2@example.com", null) })).toMatchObject(forbidden);
    expect((await t.http("GET", `/_config/users/${encodeURIComponent("iso.made2@example.com")}`)).status).toBe(404);
    expect((await pg.query(`SELECT count(*)::int AS n FROM auth.users WHERE username LIKE 'iso.made%'`)).rows[0].n).toBe(0);
    expect(smtp.received.filter((m) => m.to.includes("iso.made2@example.com"))).toHaveLength(0);
    // A read token is refused alike; the user itself, signed in, still creates users.
    const read = await token(plantAdmin.username, "read", plantAdmin);
    expect(await t.http("POST", "/_config/users", { ...bearer(read.token), body: newUserBody("iso.made3@example.com", null) })).toMatchObject(forbidden);
    expect(await t.http("POST", "/_config/users", { auth: plantAdmin, body: newUserBody("iso.made4@example.com", "MadePass123") })).toMatchObject({ status: 200 });
  });

  it("a password reset revokes the user's tokens: the old token answers 401", async () => {
    const user = await makeUser(t.http, { username: "iso.reset@example.com", user_type: "plant-admin", plant_id: h.plant }, "ResetPass123");
    const own = await token(user.username, "write", user);
    const byAdmin = await token(user.username, "read");
    expect((await t.http("GET", "/_config/sites/_list", bearer(own.token))).status).toBe(200);
    const before = smtp.received.filter((m) => m.to.includes(user.username)).length;
    expect((await t.http("POST", "/_config/users/password/generate_otp", { auth: null, body: { email: user.username } })).status).toBe(200);
    const mails = await smtp.waitFor(before + 1, { to: user.username });
    const otp = otpIn(mails[mails.length - 1]!);
    expect(await t.http("PUT", "/_config/users/password", { auth: null, body: { email: user.username, otp, new_password: "NewReset#123" } })).toMatchObject({
      status: 200,
      body: "Password updated successfully",
    });
    for (const old of [own, byAdmin]) expect(await t.http("GET", "/_config/sites/_list", bearer(old.token))).toMatchObject({ status: 401, body: err(401, "Invalid credentials") });
    expect((await pg.query(`SELECT count(*)::int AS n FROM auth.tokens WHERE username = $1`, [user.username])).rows[0].n).toBe(0);
    const reset = await eventually(
      () => t.http<{ action: string; changes: Record<string, unknown> }[]>("GET", `/_config/audit?entity_type=user&entity_id=${user.username}`),
      (r) => r.body.some((e) => e.action === "password_reset"),
    );
    expect(reset.body.find((e) => e.action === "password_reset")!.changes).toEqual({ password: ["***", "***"], revoked_tokens: [2, 0] });
  });

  it("an admin setting a new password revokes the user's tokens too", async () => {
    const user = await makeUser(t.http, { username: "iso.reset2@example.com", user_type: "general-user", plant_id: h.plant, modules: ["Configuration"] }, "ResetPass123");
    const own = await token(user.username, "read", user);
    const body = { ...newUserBody(user.username, "Admin#Set2026"), modules: ["Configuration"] };
    expect((await t.http("PUT", `/_config/users/${encodeURIComponent(user.username)}`, { body })).status).toBe(200);
    expect(await t.http("GET", "/_config/sites/_list", bearer(own.token))).toMatchObject({ status: 401, body: err(401, "Invalid credentials") });
  });

  it("audits what a token an admin issued for another user does with via_token_of naming the admin", async () => {
    const issuedByAdmin = await token(plantAdmin.username, "write");
    const own = await token(plantAdmin.username, "write", plantAdmin);
    const create = async (tok: string, function_name: string) => {
      const res = await t.http<{ id: string }>("POST", "/_config/functions", { ...bearer(tok), body: { function_name, plant_id: h.plant } });
      expect(res.status).toBe(200);
      return res.body.id;
    };
    const viaAdmin = await create(issuedByAdmin.token, "Iso via admin");
    const viaOwn = await create(own.token, "Iso via own");
    const entryOf = async (id: string) =>
      (
        await eventually(
          () => t.http<{ actor: string; via_token_of: string | null }[]>("GET", `/_config/audit?entity_type=function&entity_id=${id}`),
          (r) => r.status === 200 && r.body.length > 0,
        )
      ).body[0]!;
    expect(await entryOf(viaAdmin)).toMatchObject({ action: "create", actor: plantAdmin.username, via_token_of: ADMIN.username });
    const ownEntry = await entryOf(viaOwn);
    expect(ownEntry).toMatchObject({ action: "create", actor: plantAdmin.username });
    expect(ownEntry).not.toHaveProperty("via_token_of");
    expect(await t.http("GET", "/_config/audit/_verify")).toMatchObject({ status: 200, body: { ok: true } });
  });
});

describe("pipeline secrets", () => {
  const SECRET = `Opc#${randomBytes(6).toString("hex")}`;
  const THIRD = "/_config/pipelines/thirdparty";
  const settings = () => ({ mac_address: nextMac(), sampling_rate: 5, server_url: "opc.tcp://historian:4840", user_name: "opc", user_password: SECRET });
  const body = (s: Record<string, unknown>) => ({
    pipeline_name: "Iso historian",
    data_type: "Process",
    data_source: "Third-Party-Apps",
    data_source_subtype: "OPC-UA",
    plant_id: h.plant,
    function_id: h.fn,
    settings: s,
    tags: [{ tag_name: "Pressure", tag_desc: "", tag_unit: "bar", address: "ns=2;s=P1" }],
  });
  let id: string;
  let key: string;
  let mac: string;
  /** The settings the gateway reads with its own key: the secrets opened. */
  const gatewaySettings = async () => (await ingest<{ settings: Record<string, unknown> }>(t, "GET", `/_ingest/pipelines/${id}`, key)).body.settings;
  const stored = async () => String((await pg.query(`SELECT settings::text AS s FROM pipelines.pipelines WHERE pipeline_id = $1`, [id])).rows[0].s);

  beforeAll(async () => {
    const s = settings();
    mac = s.mac_address;
    const res = await t.http<{ id: string; ingest_key: string }>("POST", THIRD, { body: body(s) });
    expect(res.status).toBe(200);
    ({ id, ingest_key: key } = res.body);
  });

  it("fetch shows ***, the list and the audit trail hold nothing of it, and the database holds no plain text", async () => {
    expect((await t.http<{ settings: Record<string, unknown> }>("GET", `${THIRD}/${id}`)).body.settings).toMatchObject({ user_password: "***", user_name: "opc" });
    const list = await t.http("GET", `/_config/pipelines/_list?plant_id=${h.plant}`);
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(SECRET);
    expect(await stored()).not.toContain(SECRET);
    expect(await stored()).toContain("$sealed");
    expect(JSON.stringify((await pg.query(`SELECT changes FROM config.audit_log`)).rows)).not.toContain(SECRET);
    // The service itself opens it: the gateway's own configuration.
    expect(await gatewaySettings()).toMatchObject({ user_password: SECRET });
  });

  it("an update that sends *** keeps the stored secret; a new value replaces it", async () => {
    const put = (s: Record<string, unknown>) => t.http("PUT", `${THIRD}/${id}`, { body: body(s) });
    expect(await put({ ...settings(), mac_address: mac, user_password: "***" })).toMatchObject({ status: 200, body: "Pipeline updated successfully" });
    expect(await gatewaySettings()).toMatchObject({ user_password: SECRET });
    expect(await put({ ...settings(), mac_address: mac, user_password: "Next#Secret-1" })).toMatchObject({ status: 200 });
    expect(await gatewaySettings()).toMatchObject({ user_password: "Next#Secret-1" });
    expect(await stored()).not.toContain("Next#Secret-1");
  });

  it("reads a secret an older version stored in plain text as ***, and seals it at the next update", async () => {
    await pg.query(`UPDATE pipelines.pipelines SET settings = jsonb_set(settings, '{user_password}', '"Legacy#Plain1"') WHERE pipeline_id = $1`, [id]);
    expect((await t.http<{ settings: Record<string, unknown> }>("GET", `${THIRD}/${id}`)).body.settings).toMatchObject({ user_password: "***" });
    expect((await t.http("PUT", `${THIRD}/${id}`, { body: { ...body({ ...settings(), mac_address: mac, user_password: "***" }) } })).status).toBe(200);
    expect(await stored()).not.toContain("Legacy#Plain1");
    expect(await gatewaySettings()).toMatchObject({ user_password: "Legacy#Plain1" });
  });

  it("*** with a changed destination or identity is refused (400 Invalid input): the stored secret never goes to a host the caller chose", async () => {
    const put = (s: Record<string, unknown>, auth: RequestOptions["auth"] = plantAdmin) => t.http("PUT", `${THIRD}/${id}`, { auth, body: body(s) });
    const base = { ...settings(), mac_address: mac, user_password: "Kept#Secret-1" };
    expect((await put(base)).status).toBe(200);
    const refused = { status: 400, body: err(400, "Invalid input: settings.user_password") };
    for (const moved of [{ server_url: "opc.tcp://attacker.example:4840" }, { server_url: "opc.tcp://historian:4841" }, { user_name: "someone-else" }, { host: "198.51.100.7" }]) {
      expect({ moved, ...(await put({ ...base, ...moved, user_password: "***" })) }).toMatchObject({ moved, ...refused });
    }
    expect(await gatewaySettings()).toMatchObject({ server_url: "opc.tcp://historian:4840", user_name: "opc", user_password: "Kept#Secret-1" });
    expect(await gatewaySettings()).not.toHaveProperty("host");
    // Anything else may change beside a kept secret; a destination may change with the secret typed again.
    expect(await put({ ...base, sampling_rate: 30, user_password: "***" })).toMatchObject({ status: 200, body: "Pipeline updated successfully" });
    expect(await gatewaySettings()).toMatchObject({ sampling_rate: 30, user_password: "Kept#Secret-1" });
    expect(await put({ ...base, server_url: "opc.tcp://historian-2:4840", user_password: "Typed#Again-2" })).toMatchObject({ status: 200 });
    expect(await gatewaySettings()).toMatchObject({ server_url: "opc.tcp://historian-2:4840", user_password: "Typed#Again-2" });
  });

  it("an edge SQL gateway: a changed server_address, port, username or database refuses a kept password; its table does not", async () => {
    const EDGE = "/_config/pipelines/edge-server";
    const sqlSettings = {
      mac_address: nextMac(),
      server_address: "10.0.0.5",
      port: 1433,
      username: "reader",
      password: "Sql#Secret-1",
      config: { database: "mes", table: "output", time_field: "ts", last_collected: "none" },
    };
    const sqlBody = (s: Record<string, unknown>) => ({
      pipeline_name: "Iso SQL",
      function_id: h.fn,
      data_type: "Production",
      data_source: "Edge IOT Gateway",
      data_source_subtype: "SQL",
      settings: s,
      gateway_firmware: { current_version: "2.1.0" },
      tags: [{ tag_name: "Output", tag_desc: "", tag_unit: "pcs", column_name: "qty", monitor_id: h.meter.id }],
      function_enabled_in_registration: true,
    });
    const gw = await createEdge(t, sqlBody(sqlSettings));
    const config = async () => (await ingest<{ settings: Record<string, unknown> }>(t, "GET", `/_ingest/pipelines/${gw.id}`, gw.ingest_key)).body.settings;
    const put = (s: Record<string, unknown>) => t.http("PUT", `${EDGE}/${gw.id}`, { auth: plantAdmin, body: sqlBody(s) });
    const kept = { ...sqlSettings, password: "***" };
    for (const moved of [{ server_address: "198.51.100.7" }, { port: 1434 }, { username: "sa" }, { config: { ...sqlSettings.config, database: "master" } }]) {
      expect({ moved, ...(await put({ ...kept, ...moved })) }).toMatchObject({ moved, status: 400, body: err(400, "Invalid input: settings.password") });
    }
    expect(await config()).toMatchObject(sqlSettings);
    expect(await put({ ...kept, config: { ...sqlSettings.config, table: "output_2" } })).toMatchObject({ status: 200, body: "Gateway updated successfully" });
    expect(await config()).toMatchObject({ password: "Sql#Secret-1", config: { table: "output_2" } });
  });
});

describe("CSV export", () => {
  it("prefixes a tag name a spreadsheet would run with ' and writes negative readings as numbers", async () => {
    const m = await monitor(t, h.fn, "Iso Formula", "process-monitor", [
      { tag_id: "f", tag_name: "=1+1", tag_unit: "bar" },
      { tag_id: "g", tag_name: "@cmd", tag_unit: "bar" },
    ]);
    const gw = await createEdge(t, edgeBody(h, [m.id]));
    const ts = Date.now() - 60_000;
    const readings = [
      { monitor_id: m.id, tag_id: "f", ts, value: -2.5 },
      { monitor_id: m.id, tag_id: "g", ts, value: -40 },
    ];
    expect(await ingest(t, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, { readings })).toMatchObject({ status: 200, body: { accepted: 2 } });
    const q = `from=${encodeURIComponent(new Date(ts - 1000).toISOString())}&to=${encodeURIComponent(new Date(ts + 1000).toISOString())}`;
    const res = await t.http<string>("GET", `/_cm/monitors/${m.id}/_export?${q}`);
    expect(res.status).toBe(200);
    expect(String(res.body)).toBe(`timestamp,'=1+1,'@cmd\n${new Date(ts).toISOString()},-2.5,-40\n`);
  });
});

describe("ingest key rotation", () => {
  const beat = (id: string, key: string) => ingest(t, "POST", `/_ingest/pipelines/${id}/heartbeat`, key, { component: "gateway", ts: Date.now() });

  it("answers a new key; both keys work within INGEST_KEY_GRACE_S, then only the new one", async () => {
    const gw = await createEdge(t, edgeBody(h, []));
    expect((await beat(gw.id, gw.ingest_key)).status).toBe(200);
    const rotated = await t.http<{ ingest_key: string }>("POST", `/_config/pipelines/${gw.id}/_rotate_key`, { auth: plantAdmin });
    expect(rotated.status).toBe(200);
    expect(Object.keys(rotated.body)).toEqual(["ingest_key"]);
    expect(rotated.body.ingest_key).not.toBe(gw.ingest_key);
    expect((await beat(gw.id, gw.ingest_key)).status).toBe(200);
    expect((await beat(gw.id, rotated.body.ingest_key)).status).toBe(200);
    await new Promise((r) => setTimeout(r, GRACE_S * 1000 + 300));
    expect(await beat(gw.id, gw.ingest_key)).toMatchObject({ status: 401, body: err(401, "Invalid ingest key") });
    expect((await beat(gw.id, rotated.body.ingest_key)).status).toBe(200);
  });

  it("clears the pipeline's secrets: the new key never reads the old one; the rotating request may enter them anew", async () => {
    const OLD = `Opc#${randomBytes(6).toString("hex")}`;
    const THIRD = "/_config/pipelines/thirdparty";
    const opc = (user_password: unknown) => ({
      pipeline_name: "Iso rotated historian",
      data_type: "Process",
      data_source: "Third-Party-Apps",
      data_source_subtype: "OPC-UA",
      plant_id: h.plant,
      settings: { mac_address: "02:00:00:00:aa:01", server_url: "opc.tcp://historian:4840", user_name: "opc", user_password },
      tags: [{ tag_name: "Pressure", tag_desc: "", tag_unit: "bar", address: "ns=2;s=P1" }],
    });
    const made = await t.http<{ id: string; ingest_key: string }>("POST", THIRD, { body: opc(OLD) });
    expect(made.status).toBe(200);
    const { id } = made.body;
    const config = async (key: string) => {
      const res = await ingest<{ settings: Record<string, unknown> }>(t, "GET", `/_ingest/pipelines/${id}`, key);
      expect(res.status).toBe(200);
      return res.body;
    };
    expect((await config(made.body.ingest_key)).settings).toMatchObject({ user_password: OLD });
    const rotate = (body?: unknown) => t.http<{ ingest_key: string }>("POST", `/_config/pipelines/${id}/_rotate_key`, { auth: plantAdmin, body });

    // The site's administrators may re-point any of its gateways: their rotation keeps the secrets (reads still "***").
    const byAdmin = await t.http<{ ingest_key: string }>("POST", `/_config/pipelines/${id}/_rotate_key`);
    expect(byAdmin.status).toBe(200);
    expect((await config(byAdmin.body.ingest_key)).settings).toMatchObject({ user_password: OLD });
    expect((await t.http<{ settings: Record<string, unknown> }>("GET", `${THIRD}/${id}`)).body.settings).toMatchObject({ user_password: "***" });

    // A plant-admin that may update the pipeline rotates its key: the new key reads no secret.
    const first = await rotate();
    expect(first.status).toBe(200);
    const seen = await config(first.body.ingest_key);
    expect(JSON.stringify(seen)).not.toContain(OLD);
    expect(seen.settings).toMatchObject({ server_url: "opc.tcp://historian:4840", user_name: "opc", user_password: null });
    // Nor does the key it replaced within its grace, nor anything else: the secret is gone.
    expect(JSON.stringify(await config(byAdmin.body.ingest_key))).not.toContain(OLD);
    expect((await t.http<{ settings: Record<string, unknown> }>("GET", `${THIRD}/${id}`)).body.settings).toMatchObject({ user_password: null });
    // "***" has nothing to keep now: the secret must be typed again.
    expect(await t.http("PUT", `${THIRD}/${id}`, { auth: plantAdmin, body: opc("***") })).toMatchObject({ status: 400, body: err(400, "Invalid input: settings.user_password") });

    // The rotating request may enter the secrets anew, and only secrets the settings have.
    for (const [entered, field] of [
      [{ server_url: "opc.tcp://elsewhere:4840" }, "settings.server_url"],
      [{ api_key: "x" }, "settings.api_key"],
      [{ user_password: "***" }, "settings.user_password"],
      [{ user_password: { nested: true } }, "settings.user_password"],
    ] as const) {
      expect({ entered, ...(await rotate({ settings: entered })) }).toMatchObject({ entered, status: 400, body: err(400, `Invalid input: ${field}`) });
    }
    // A refused rotation changed nothing: the first new key still works.
    expect((await config(first.body.ingest_key)).settings).toMatchObject({ user_password: null });
    const second = await rotate({ settings: { user_password: "Typed#Again-3" } });
    expect(second.status).toBe(200);
    expect((await config(second.body.ingest_key)).settings).toMatchObject({ user_password: "Typed#Again-3" });
    const row = await pg.query(`SELECT settings::text AS s FROM pipelines.pipelines WHERE pipeline_id = $1`, [id]);
    expect(String(row.rows[0].s)).not.toContain("Typed#Again-3");

    const entries = await eventually(
      () => t.http<{ action: string; changes: Record<string, unknown> }[]>("GET", `/_config/audit?entity_type=pipeline&entity_id=${id}`),
      // Three rotations: the site admin's, and the plant-admin's two.
      (r) => r.body.filter((e) => e.action === "rotate_key").length === 3,
    );
    const changes = entries.body.filter((e) => e.action === "rotate_key").map((e) => e.changes);
    expect(changes).toContainEqual(expect.objectContaining({ ingest_key: ["***", "***"], "settings.user_password": ["***", null] }));
    expect(changes).toContainEqual(expect.objectContaining({ "settings.user_password": [null, "***"] }));
    expect(JSON.stringify(changes)).not.toContain("Typed#Again-3");
  });

  it("is scoped as updating the pipeline, audited, and documented in /openapi.json", async () => {
    const gw = await createEdge(t, edgeBody(h, []));
    const general = await makeUser(t.http, { username: "iso.general@example.com", user_type: "general-user", plant_id: h.plant, modules: ["Configuration"] });
    expect(await t.http("POST", `/_config/pipelines/${gw.id}/_rotate_key`, { auth: general })).toMatchObject({ status: 403, body: err(403, "Unauthorized operation") });
    const other = await hierarchy(t, "IsoOther");
    const stranger = await makeUser(t.http, { username: "iso.other@example.com", user_type: "plant-admin", plant_id: other.plant });
    expect(await t.http("POST", `/_config/pipelines/${gw.id}/_rotate_key`, { auth: stranger })).toMatchObject({ status: 400, body: err(400, `Invalid Pipeline ID: ${gw.id}`) });
    expect((await beat(gw.id, gw.ingest_key)).status).toBe(200);
    const read = await token(ADMIN.username, "read");
    expect((await t.http("POST", `/_config/pipelines/${gw.id}/_rotate_key`, bearer(read.token))).status).toBe(403);
    expect((await t.http("POST", `/_config/pipelines/${gw.id}/_rotate_key`)).status).toBe(200);
    const entries = await eventually(
      () => t.http<{ action: string; changes: Record<string, unknown> }[]>("GET", `/_config/audit?entity_type=pipeline&entity_id=${gw.id}`),
      (r) => r.body.some((e) => e.action === "rotate_key"),
    );
    expect(entries.body.find((e) => e.action === "rotate_key")!.changes).toMatchObject({ ingest_key: ["***", "***"] });
    const doc = (await t.http<{ paths: Record<string, { post?: { responses: Record<string, unknown> } }> }>("GET", "/openapi.json", { auth: null })).body;
    expect(doc.paths["/_config/pipelines/{pipeline_id}/_rotate_key"]?.post?.responses).toHaveProperty("200");
  });
});
