/**
 * The notifier against a real SMTP server on loopback and a real PostgreSQL: each email is
 * recorded, delivered once, retried with back-off after a transient refusal, given up after a
 * permanent one, and written to the outbox folder when no SMTP_URL is set.
 */
import { readdir, readFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { Client } from "pg";
import { startTestNode, type TestNode } from "../helpers/node";
import { startSmtp, type TestSmtp } from "../helpers/smtp";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function query<T>(t: TestNode, sql: string, args: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: t.db.url });
  await c.connect();
  try {
    return (await c.query(sql, args)).rows as T[];
  } finally {
    await c.end();
  }
}

interface Row {
  notification_id: string;
  medium: string;
  recipient: string;
  subject: string;
  body: string;
  status: string;
  attempts: number;
  last_error: string | null;
  sent_at: string | null;
}

async function notification(t: TestNode, id: string): Promise<Row> {
  const [row] = await query<Row>(t, `SELECT * FROM notifier.notifications WHERE notification_id = $1`, [id]);
  return row;
}

async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`condition not reached; last value ${JSON.stringify(v)}`);
    await sleep(100);
  }
}

const send = (t: TestNode, params: Record<string, unknown>) =>
  t.node.broker.call<{ notification_id: string; status: string }, Record<string, unknown>>("notifier.email.send", params);

describe("notifier over SMTP", () => {
  let refusals: Map<number, number>;
  let smtp: TestSmtp;
  let t: TestNode;

  beforeAll(async () => {
    refusals = new Map();
    smtp = await startSmtp({ refuse: (n) => refusals.get(n) ?? null });
    t = await startTestNode({ services: ["notifier"], env: { SMTP_URL: smtp.url } });
  });
  afterAll(async () => {
    await t?.stop();
    await smtp?.stop();
  });

  it("records an email and delivers it once", async () => {
    const res = await send(t, { to: "ops@example.com", subject: "Hello", text: "First line\nSecond line" });
    expect(res).toEqual({ notification_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: "queued" });
    const [mail] = await smtp.waitFor(1, { to: "ops@example.com" });
    expect(mail.raw).toContain("Subject: Hello");
    expect(mail.raw).toContain("First line\nSecond line".replace("\n", "\r\n"));
    const row = await until(() => notification(t, res.notification_id), (r) => r.status === "sent");
    expect(row).toMatchObject({ medium: "email", recipient: "ops@example.com", subject: "Hello", attempts: 1, last_error: null });
    expect(Number(row.sent_at)).toBeGreaterThan(0);
    expect(row.body).toBe("First line\nSecond line");
  });

  it("retries a transient refusal with back-off and sends the email exactly once", async () => {
    const before = smtp.dataCommands();
    refusals.set(before + 1, 451);
    const res = await send(t, { to: "retry@example.com", subject: "Retry", text: "try again" });
    const row = await until(() => notification(t, res.notification_id), (r) => r.status === "sent");
    expect(row.attempts).toBe(2);
    const attempts = await query<{ attempt: number; outcome: string; error: string | null; at: string }>(
      t,
      `SELECT attempt, outcome, error, at FROM notifier.notification_attempts WHERE notification_id = $1 ORDER BY attempt`,
      [res.notification_id],
    );
    expect(attempts.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, "transient"],
      [2, "sent"],
    ]);
    expect(attempts[0].error).toMatch(/451/);
    // Back-off: the second attempt waited about a second after the first.
    expect(Number(attempts[1].at) - Number(attempts[0].at)).toBeGreaterThanOrEqual(900);
    await sleep(1500);
    expect((await smtp.waitFor(1, { to: "retry@example.com" })).length).toBe(1);
    expect(smtp.dataCommands()).toBe(before + 2);
  });

  it("gives up at once on a permanent refusal", async () => {
    const before = smtp.dataCommands();
    refusals.set(before + 1, 550);
    const res = await send(t, { to: "nobody@example.com", subject: "Bounce", text: "no such mailbox" });
    const row = await until(() => notification(t, res.notification_id), (r) => r.status !== "queued");
    expect(row.status).toBe("failed");
    expect(row.attempts).toBe(1);
    expect(row.last_error).toMatch(/550/);
    await sleep(1500);
    expect(smtp.dataCommands()).toBe(before + 1);
    expect(smtp.received.filter((m) => m.to.includes("nobody@example.com"))).toHaveLength(0);
  });

  it("treats a repeated idempotency key as the same notification", async () => {
    const params = { to: "once@example.com", subject: "Once", text: "only once", idempotency_key: "test:once" };
    const a = await send(t, params);
    const b = await send(t, params);
    expect(b.notification_id).toBe(a.notification_id);
    await until(() => notification(t, a.notification_id), (r) => r.status === "sent");
    await sleep(500);
    expect(smtp.received.filter((m) => m.to.includes("once@example.com"))).toHaveLength(1);
    const rows = await query(t, `SELECT 1 FROM notifier.notifications WHERE idempotency_key = 'test:once'`);
    expect(rows).toHaveLength(1);
  });

  it("redacts a sensitive body once it is sent", async () => {
    const res = await send(t, { to: "secret@example.com", subject: "Code", text: "code 123456", sensitive: true });
    const [mail] = await smtp.waitFor(1, { to: "secret@example.com" });
    expect(mail.raw).toContain("code 123456");
    const row = await until(() => notification(t, res.notification_id), (r) => r.status === "sent");
    expect(row.body).toBe("[redacted]");
  });

  it("refuses bad params with a 400 domain error", async () => {
    await expect(send(t, { to: "not-an-address", subject: "x", text: "y" })).rejects.toMatchObject({ code: 400, message: "Invalid input: to" });
    await expect(send(t, { to: "a@b.c", subject: "x", text: "y", cc: "z@b.c" })).rejects.toMatchObject({ code: 400 });
  });
});

describe("notifier when the SMTP server is down at first", () => {
  let t: TestNode;
  let smtp: TestSmtp | undefined;
  let port: number;

  beforeAll(async () => {
    // A port that nothing listens on yet: the first attempt meets a refused connection.
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
    port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    t = await startTestNode({ services: ["notifier"], env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
  });
  afterAll(async () => {
    await t?.stop();
    await smtp?.stop();
  });

  it("retries a refused connection and delivers once the server is up", async () => {
    const res = await send(t, { to: "late@example.com", subject: "Late", text: "eventually" });
    await until(() => notification(t, res.notification_id), (r) => r.attempts >= 1);
    smtp = await startSmtp({ port });
    await smtp.waitFor(1, { to: "late@example.com" });
    const row = await until(() => notification(t, res.notification_id), (r) => r.status === "sent");
    expect(row.attempts).toBeGreaterThanOrEqual(2);
    expect(smtp.received).toHaveLength(1);
  });
});

describe("notifier without SMTP_URL", () => {
  let t: TestNode;
  let outbox: string;

  beforeAll(async () => {
    t = await startTestNode({ services: ["notifier"] });
    outbox = t.node.config.outboxDir;
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("writes each email as a file in OUTBOX_DIR", async () => {
    const res = await send(t, { to: "local@example.com", subject: "Local", text: "Your one-time password (OTP) is: 654321" });
    const row = await until(() => notification(t, res.notification_id), (r) => r.status === "sent");
    expect(row.attempts).toBe(1);
    const files = (await readdir(outbox)).filter((f) => f.includes(res.notification_id));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/\.eml$/);
    const eml = await readFile(path.join(outbox, files[0]), "utf8");
    expect(eml).toContain("To: local@example.com");
    expect(eml).toContain("Subject: Local");
    expect(eml).toContain("Your one-time password (OTP) is: 654321");
  });
});
