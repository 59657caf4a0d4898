/**
 * The notifier's operator actions (the REPL's `notifications` and `notifications-retry`) on a
 * real node, PostgreSQL and an SMTP server on loopback: the list with its filters, newest first
 * and never showing a secret; the retry through the ordinary delivery path, refused for a sent
 * or redacted notification.
 */
import { randomUUID } from "node:crypto";
import { Client } from "pg";
import { startTestNode, type TestNode } from "../helpers/node";
import { startSmtp, type TestSmtp } from "../helpers/smtp";
import type { NotificationView, RetryResult } from "../../services/notifier/contract";

let t: TestNode;
let smtp: TestSmtp;
/** The SMTP reply to every message while set: 550 refuses for good. */
let refusal: number | null = null;

beforeAll(async () => {
  smtp = await startSmtp({ refuse: () => refusal });
  t = await startTestNode({ services: ["notifier"], env: { SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await t?.stop();
  await smtp?.stop();
});

async function query<T>(sql: string, args: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: t.db.url });
  await c.connect();
  try {
    return (await c.query(sql, args)).rows as T[];
  } finally {
    await c.end();
  }
}

async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`condition not reached; last value ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const call = <T>(action: string, params: Record<string, unknown> = {}) => t.node.broker.call<T, Record<string, unknown>>(action, params);
const list = (params: Record<string, unknown> = {}) => call<NotificationView[]>("notifier.notifications.list", params);
const retry = (params: Record<string, unknown> = {}) => call<RetryResult>("notifier.notifications.retry", params);
const statusOf = async (id: string) => (await query<{ status: string }>(`SELECT status FROM notifier.notifications WHERE notification_id = $1`, [id]))[0]?.status;

/** An email that the SMTP server refuses for good: it ends `failed` after one attempt. */
async function failedEmail(to: string, sensitive = false): Promise<string> {
  refusal = 550;
  try {
    const { notification_id } = await call<{ notification_id: string }>("notifier.email.send", { to, subject: "Report", text: "secret 424242", sensitive });
    await until(() => statusOf(notification_id), (s) => s === "failed");
    return notification_id;
  } finally {
    refusal = null;
  }
}

describe("notifier.notifications.list", () => {
  const alertA = randomUUID();
  const alertB = randomUUID();
  const ids = { failed: randomUUID(), skipped: randomUUID(), queued: randomUUID(), sent: randomUUID(), sending: randomUUID() };

  beforeAll(async () => {
    const hour = Date.now() + 3600_000;
    // Rows as the notifier leaves them, written directly so that their order and states are exact;
    // none of them is due, so the notifier's sweep leaves them as they are.
    const rows: [string, string, string, string | null, boolean, string, number, string | null, number, number | null, number | null][] = [
      // id, medium, recipient, idempotency key, sensitive, status, attempts, last_error, created_at, next_attempt_at, claimed_until
      [ids.failed, "email", "a@example.com", `alert:${alertA}:a@example.com:email`, false, "failed", 5, "451 busy", 1000, null, null],
      [ids.skipped, "sms", "+15550001", `alert:${alertA}:a@example.com:sms`, false, "skipped", 1, "not configured", 2000, null, null],
      [ids.queued, "email", "otp@example.com", null, true, "queued", 1, "451 busy", 3000, hour, null],
      [ids.sent, "email", "b@example.com", `alert:${alertB}:b@example.com:email`, false, "sent", 1, null, 4000, null, null],
      [ids.sending, "whatsapp", "whatsapp:+15550002", null, false, "queued", 0, null, 5000, Date.now(), hour],
    ];
    for (const [id, medium, recipient, key, sensitive, status, attempts, error, created, next, claimed] of rows) {
      await query(
        `INSERT INTO notifier.notifications (notification_id, medium, recipient, subject, body, idempotency_key, sensitive, status, attempts, last_error, created_at, next_attempt_at, claimed_until)
         VALUES ($1, $2, $3, 'Subject', $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [id, medium, recipient, sensitive ? "Your code is 987654" : `body of ${id}`, key, sensitive, status, attempts, error, created, next, claimed],
      );
    }
  });

  const idsOf = (rows: NotificationView[]) => rows.map((r) => r.notification_id);
  const ours = (rows: NotificationView[]) => rows.filter((r) => (Object.values(ids) as string[]).includes(r.notification_id));

  it("lists the newest first, with the alert each belongs to and a status an operator reads", async () => {
    const rows = ours(await list());
    expect(idsOf(rows)).toEqual([ids.sending, ids.sent, ids.queued, ids.skipped, ids.failed]);
    expect(rows.map((r) => r.status)).toEqual(["sending", "sent", "queued", "skipped", "failed"]);
    expect(rows.map((r) => r.alert_id)).toEqual([null, alertB, null, alertA, alertA]);
    expect(rows[4]).toEqual({
      notification_id: ids.failed,
      medium: "email",
      recipient: "a@example.com",
      subject: "Subject",
      body: `body of ${ids.failed}`,
      sensitive: false,
      status: "failed",
      attempts: 5,
      last_error: "451 busy",
      alert_id: alertA,
      created_at: 1000,
      sent_at: null,
      next_attempt_at: null,
    });
  });

  it("never shows the body of a sensitive notification, even while it waits to be sent", async () => {
    const rows = await list();
    expect(rows.find((r) => r.notification_id === ids.queued)).toMatchObject({ sensitive: true, body: "[redacted]", status: "queued" });
    expect(JSON.stringify(rows)).not.toContain("987654");
  });

  it("filters by status, medium and alert, and stops at the limit", async () => {
    expect(idsOf(ours(await list({ status: "failed" })))).toEqual([ids.failed]);
    expect(idsOf(ours(await list({ status: "queued" })))).toEqual([ids.queued]);
    expect(idsOf(ours(await list({ status: "sending" })))).toEqual([ids.sending]);
    expect(idsOf(await list({ medium: "sms" }))).toEqual([ids.skipped]);
    expect(idsOf(await list({ alert_id: alertA }))).toEqual([ids.skipped, ids.failed]);
    expect(idsOf(await list({ alert_id: alertA.toUpperCase(), medium: "email" }))).toEqual([ids.failed]);
    expect(await list({ alert_id: randomUUID() })).toEqual([]);
    expect(await list({ limit: 2 })).toHaveLength(2);
  });

  it("refuses what it cannot filter by", async () => {
    await expect(list({ status: "lost" })).rejects.toMatchObject({ code: 400, message: "Invalid input: status" });
    await expect(list({ medium: "pigeon" })).rejects.toMatchObject({ code: 400 });
    await expect(list({ alert_id: "not-an-id" })).rejects.toMatchObject({ code: 400 });
    await expect(list({ limit: 0 })).rejects.toMatchObject({ code: 400 });
    await expect(list({ limit: 1001 })).rejects.toMatchObject({ code: 400 });
    await expect(list({ body: "x" })).rejects.toMatchObject({ code: 400 });
  });

  it("is an operator's action over the bus, not an HTTP route", () => {
    const actions = t.node.broker.registry.getActionList({ onlyLocal: true });
    for (const name of ["notifier.notifications.list", "notifier.notifications.retry"]) {
      const found = actions.find((a) => a.name === name) as { action?: { visibility?: string } } | undefined;
      expect(found?.action?.visibility).toBe("public");
    }
  });
});

describe("notifier.notifications.retry", () => {
  it("queues a failed notification again with its attempts afresh and delivers it, keeping the history", async () => {
    const id = await failedEmail("retry-one@example.com");
    const res = await retry({ notification_ids: [id] });
    expect(res.retried).toBe(1);
    expect(res.notifications).toEqual([expect.objectContaining({ notification_id: id, status: "sent", attempts: 1, last_error: null })]);
    const mails = await smtp.waitFor(1, { to: "retry-one@example.com" });
    expect(mails).toHaveLength(1);
    const history = await query<{ attempt: number; outcome: string }>(
      `SELECT attempt, outcome FROM notifier.notification_attempts WHERE notification_id = $1 ORDER BY attempt`,
      [id],
    );
    expect(history.map((h) => [h.attempt, h.outcome])).toEqual([
      [1, "permanent"],
      [2, "sent"],
    ]);
  });

  it("answers what became of it when the delivery fails again", async () => {
    const id = await failedEmail("still-bouncing@example.com");
    refusal = 550;
    try {
      const res = await retry({ notification_ids: [id] });
      expect(res.retried).toBe(1);
      expect(res.notifications).toEqual([expect.objectContaining({ notification_id: id, status: "failed", attempts: 1, last_error: expect.stringMatching(/550/) })]);
    } finally {
      refusal = null;
    }
  });

  it("refuses a sent notification, an unknown one and a redacted one, and queues nothing then", async () => {
    const { notification_id: sent } = await call<{ notification_id: string }>("notifier.email.send", { to: "done@example.com", subject: "Done", text: "done" });
    await until(() => statusOf(sent), (s) => s === "sent");
    const failed = await failedEmail("waiting@example.com");
    await expect(retry({ notification_ids: [failed, sent] })).rejects.toMatchObject({
      code: 409,
      message: `Notification ${sent} was sent already; a sent notification is not sent again`,
    });
    const unknown = randomUUID();
    await expect(retry({ notification_ids: [unknown] })).rejects.toMatchObject({ code: 404, message: `Notification not found: ${unknown}` });
    const secret = await failedEmail("otp-retry@example.com", true);
    await expect(retry({ notification_ids: [secret] })).rejects.toMatchObject({
      code: 409,
      message: `Notification ${secret} carried a secret that has been redacted; it cannot be sent again (ask for a new one)`,
    });
    expect(await statusOf(failed)).toBe("failed");
    expect(smtp.received.filter((m) => m.to.includes("done@example.com"))).toHaveLength(1);
    await expect(retry({ notification_ids: ["x"] })).rejects.toMatchObject({ code: 400 });
    await expect(retry({ notification_ids: [] })).rejects.toMatchObject({ code: 400 });
  });

  it("without ids, retries every failed notification but a redacted one", async () => {
    const a = await failedEmail("bulk-a@example.com");
    const b = await failedEmail("bulk-b@example.com");
    const secret = await failedEmail("bulk-otp@example.com", true);
    const res = await retry();
    expect(res.notifications.map((n) => n.notification_id)).toEqual(expect.arrayContaining([a, b]));
    expect(res.notifications.map((n) => n.notification_id)).not.toContain(secret);
    expect(res.notifications.every((n) => n.status === "sent")).toBe(true);
    expect(res.retried).toBe(res.notifications.length);
    await smtp.waitFor(1, { to: "bulk-a@example.com" });
    await smtp.waitFor(1, { to: "bulk-b@example.com" });
    expect(await statusOf(secret)).toBe("failed");
    expect(await retry()).toEqual({ retried: 0, notifications: [] });
  });
});
