/**
 * Password reset over HTTP, ops 43-45, with the OTP delivered by a real SMTP server on loopback:
 * the code that arrives is the one that validates; every message and status of the spec; the
 * OTP's expiry, single use and limit of wrong tries; cached credentials dropped on a change.
 */
import { Client } from "pg";
import { ADMIN, startTestNode, type TestNode } from "../helpers/node";
import { otpIn, startSmtp, type TestSmtp } from "../helpers/smtp";
import { envelope } from "../helpers/envelope";

const PASSWORD = "GoodPass123";
const WEAK = "Weak password: Password must be at least 9 characters long and include a mix of uppercase, lowercase, and numbers.";
const err = envelope;

let t: TestNode;
let smtp: TestSmtp;

async function sql(text: string, args: unknown[] = []) {
  const c = new Client({ connectionString: t.db.url });
  await c.connect();
  try {
    return (await c.query(text, args)).rows;
  } finally {
    await c.end();
  }
}

async function newUser(username: string) {
  const res = await t.http("POST", "/_config/users", {
    body: { username, mobile_number: "5550100", country_code: "+1", user_type: "support-analyst", password: PASSWORD },
  });
  expect(res.body).toEqual({ status: "CREATED", message: "User created successfully" });
}

const generate = (email: string) => t.http("POST", "/_config/users/password/generate_otp", { body: { email }, auth: null });
const validate = (email: string, otp: string, path = "/_config/users/password/validate_otp") =>
  t.http("POST", path, { body: { email, otp }, auth: null });
const change = (email: string, otp: string, new_password: string) =>
  t.http("PUT", "/_config/users/password", { body: { email, otp, new_password }, auth: null });

/** Asks for an OTP and reads it from the email that arrives. */
async function otpFor(email: string): Promise<string> {
  const to = email.toLowerCase();
  const before = smtp.received.filter((m) => m.to.includes(to)).length;
  const res = await generate(email);
  expect(res).toMatchObject({ status: 200, body: "An OTP has been sent to your email address" });
  const mails = await smtp.waitFor(before + 1, { to });
  return otpIn(mails[mails.length - 1]);
}

const wrong = (otp: string) => String((Number(otp) + 1) % 1_000_000).padStart(6, "0");

beforeAll(async () => {
  smtp = await startSmtp();
  t = await startTestNode({ env: { SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await t?.stop();
  await smtp?.stop();
});

describe("op 43 generate OTP", () => {
  it("emails a 6-digit OTP, stored only as a hash, with no Authorization header", async () => {
    await newUser("reset.one@example.com");
    const otp = await otpFor("Reset.One@Example.com");
    expect(otp).toMatch(/^\d{6}$/);
    const [row] = await sql(`SELECT otp_hash, expires_at FROM auth.otps WHERE username = 'reset.one@example.com'`);
    expect(row.otp_hash).toMatch(/^\$argon2id\$/);
    expect(row.otp_hash).not.toContain(otp);
    // Valid for 10 minutes.
    expect(Number(row.expires_at) - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(Number(row.expires_at) - Date.now()).toBeLessThanOrEqual(10 * 60_000);
    // The notification keeps no copy of the code once it is sent.
    const bodies = await sql(`SELECT body, status FROM notifier.notifications WHERE recipient = 'reset.one@example.com'`);
    expect(bodies).toEqual([{ body: "[redacted]", status: "sent" }]);
  });

  it("answers 409 User Doesn't Exists for an unknown email, and sends nothing", async () => {
    const before = smtp.received.length;
    expect(await generate("nobody@example.com")).toMatchObject({ status: 409, body: err(409, "User Doesn't Exists") });
    expect(smtp.received.length).toBe(before);
  });

  it("needs an email", async () => {
    const res = await t.http("POST", "/_config/users/password/generate_otp", { body: {}, auth: null });
    expect(res).toMatchObject({ status: 400, body: err(400, "Insufficient inputs") });
  });
});

describe("op 44 validate OTP", () => {
  it("accepts the OTP that arrived by email, on both paths", async () => {
    await newUser("reset.two@example.com");
    const otp = await otpFor("reset.two@example.com");
    expect(await validate("reset.two@example.com", otp)).toMatchObject({ status: 200, body: "OTP verified successfully" });
    expect(await validate("reset.two@example.com", otp, "/_config/users/validate_otp")).toMatchObject({
      status: 200,
      body: "OTP verified successfully",
    });
  });

  it("401 Invalid OTP for a wrong code; 404 Invalid OTP when there is no live OTP", async () => {
    await newUser("reset.three@example.com");
    expect(await validate("reset.three@example.com", "123456")).toMatchObject({ status: 404, body: err(404, "Invalid OTP") });
    const otp = await otpFor("reset.three@example.com");
    expect(await validate("reset.three@example.com", wrong(otp))).toMatchObject({ status: 401, body: err(401, "Invalid OTP") });
    expect(await validate("reset.three@example.com", "abc")).toMatchObject({ status: 401, body: err(401, "Invalid OTP") });
    expect(await validate("reset.three@example.com", otp)).toMatchObject({ status: 200 });
  });

  it("voids the OTP after 5 wrong tries", async () => {
    await newUser("reset.four@example.com");
    const otp = await otpFor("reset.four@example.com");
    for (let i = 0; i < 5; i++) {
      expect(await validate("reset.four@example.com", wrong(otp))).toMatchObject({ status: 401, body: err(401, "Invalid OTP") });
    }
    expect(await validate("reset.four@example.com", otp)).toMatchObject({ status: 404, body: err(404, "Invalid OTP") });
    expect(await change("reset.four@example.com", otp, "Another1234")).toMatchObject({
      status: 404,
      body: err(404, "Please request a new one OTP"),
    });
    // A new OTP starts afresh.
    const next = await otpFor("reset.four@example.com");
    expect(await validate("reset.four@example.com", next)).toMatchObject({ status: 200 });
  });

  it("counts parallel wrong tries too", async () => {
    await newUser("reset.parallel@example.com");
    const otp = await otpFor("reset.parallel@example.com");
    const answers = await Promise.all(Array.from({ length: 8 }, () => validate("reset.parallel@example.com", wrong(otp))));
    expect(answers.filter((a) => a.status === 401)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 404)).toHaveLength(3);
    expect(await validate("reset.parallel@example.com", otp)).toMatchObject({ status: 404 });
  });

  it("409 when the OTP has expired, 409 when the user does not exist", async () => {
    await newUser("reset.five@example.com");
    const otp = await otpFor("reset.five@example.com");
    await sql(`UPDATE auth.otps SET expires_at = $1 WHERE username = 'reset.five@example.com'`, [Date.now() - 1]);
    expect(await validate("reset.five@example.com", otp)).toMatchObject({
      status: 409,
      body: err(409, "OTP has expired, please request a new one"),
    });
    expect(await validate("nobody@example.com", otp)).toMatchObject({ status: 409, body: err(409, "User Doesn't Exists") });
  });

  it("400 Invalid request body for missing, unknown or mistyped fields", async () => {
    const post = (body: unknown) => t.http("POST", "/_config/users/password/validate_otp", { body, auth: null });
    expect(await post({ email: "a@example.com" })).toMatchObject({ status: 400, body: err(400, "Invalid request body") });
    expect(await post({ email: "a@example.com", otp: 123456 })).toMatchObject({ status: 400, body: err(400, "Invalid request body") });
    expect(await post({ email: "a@example.com", otp: "123456", extra: 1 })).toMatchObject({
      status: 400,
      body: err(400, "Invalid request body"),
    });
  });
});

describe("op 45 update password", () => {
  it("changes the password with the emailed OTP, once; the old password (even cached) stops working", async () => {
    const who = "reset.six@example.com";
    await newUser(who);
    expect((await t.http("GET", "/_config/users/_list?site_id=x&plant_id=*", { auth: { username: who, password: PASSWORD } })).status).toBe(200);
    const otp = await otpFor(who);
    expect(await change(who, otp, "Changed9876")).toMatchObject({ status: 200, body: "Password updated successfully" });
    expect(await t.http("GET", "/_config/server-time", { auth: { username: who, password: PASSWORD } })).toMatchObject({
      status: 401,
      body: err(401, "Invalid credentials"),
    });
    expect((await t.http("GET", "/_config/server-time", { auth: { username: who, password: "Changed9876" } })).status).toBe(200);
    // Single use.
    expect(await change(who, otp, "Again98765")).toMatchObject({ status: 404, body: err(404, "Please request a new one OTP") });
    expect(await validate(who, otp)).toMatchObject({ status: 404, body: err(404, "Invalid OTP") });
  });

  it("refuses a weak password without using the OTP up", async () => {
    const who = "reset.seven@example.com";
    await newUser(who);
    const otp = await otpFor(who);
    expect(await change(who, otp, "weak")).toMatchObject({ status: 400, body: err(400, WEAK) });
    expect(await change(who, otp, "Strong12345")).toMatchObject({ status: 200, body: "Password updated successfully" });
  });

  it("404 Please request a new one OTP for no OTP or a wrong one; 409 when expired or the user is unknown", async () => {
    const who = "reset.eight@example.com";
    await newUser(who);
    expect(await change(who, "123456", "Strong12345")).toMatchObject({ status: 404, body: err(404, "Please request a new one OTP") });
    const otp = await otpFor(who);
    expect(await change(who, wrong(otp), "Strong12345")).toMatchObject({ status: 404, body: err(404, "Please request a new one OTP") });
    await sql(`UPDATE auth.otps SET expires_at = $1 WHERE username = $2`, [Date.now() - 1, who]);
    expect(await change(who, otp, "Strong12345")).toMatchObject({ status: 409, body: err(409, "OTP has expired, please request a new one") });
    expect(await change("nobody@example.com", otp, "Strong12345")).toMatchObject({ status: 409, body: err(409, "User Doesn't Exists") });
    // The password did not change.
    expect((await t.http("GET", "/_config/server-time", { auth: { username: who, password: PASSWORD } })).status).toBe(200);
  });

  it("400 Invalid request body for bad input", async () => {
    const put = (body: unknown) => t.http("PUT", "/_config/users/password", { body, auth: null });
    expect(await put({ email: "a@example.com", otp: "123456" })).toMatchObject({ status: 400, body: err(400, "Invalid request body") });
    expect(await put({ email: "a@example.com", otp: "123456", new_password: null })).toMatchObject({
      status: 400,
      body: err(400, "Invalid request body"),
    });
    const raw = await t.http("PUT", "/_config/users/password", {
      rawBody: '{"email": "a@example.com", ',
      headers: { "content-type": "application/json" },
      auth: null,
    });
    expect(raw).toMatchObject({ status: 400, body: err(400, "Invalid request body") });
  });

  it("works for the bootstrap admin too", async () => {
    const otp = await otpFor(ADMIN.username);
    expect(await change(ADMIN.username, otp, ADMIN.password)).toMatchObject({ status: 200, body: "Password updated successfully" });
    expect((await t.http("GET", "/_config/users/_list")).status).toBe(200);
  });
});

describe("password reset without a notifier", () => {
  let bare: TestNode;
  beforeAll(async () => {
    bare = await startTestNode({ services: ["api", "auth", "config"], env: { REQUEST_TIMEOUT_MS: "3000" } });
  });
  afterAll(async () => {
    await bare?.stop();
  });

  it("answers 500 Something went wrong. and leaves no OTP behind", async () => {
    const res = await bare.http("POST", "/_config/users/password/generate_otp", { body: { email: ADMIN.username }, auth: null });
    expect(res).toMatchObject({ status: 500, body: err(500, "Something went wrong.") });
    const c = new Client({ connectionString: bare.db.url });
    await c.connect();
    try {
      expect((await c.query(`SELECT 1 FROM auth.otps`)).rows).toEqual([]);
    } finally {
      await c.end();
    }
  });
});
