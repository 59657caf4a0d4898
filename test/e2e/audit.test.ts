/**
 * The audit trail over HTTP (docs/security.md), on the real PostgreSQL and NATS JetStream: every
 * service that changes something stages its entry in the change's transaction on the `audit`
 * stream, and config appends it to the hash-chained log. Entries for each kind of change with
 * who, where and what; secrets redacted (no password in the table's text nor in this test's log
 * output); a site admin reads its site only, others 403; filters and paging; a row changed by
 * hand in SQL found by `_verify`.
 */
import type { AuditView } from "../../services/config/audit";
import { format } from "node:util";
import { Client } from "pg";
import { auditEntry } from "../../lib/audit";
import type { AuditAppender } from "../../services/config/audit.actions";
import { NATS_URL } from "../helpers/cluster";
import { envelope } from "../helpers/envelope";
import { ADMIN, startTestNode, type TestNode } from "../helpers/node";
import { otpIn, startSmtp, type TestSmtp } from "../helpers/smtp";
import { idFrom, makePlace, makeUser, TAGS, watcherBody, type Place } from "./alerting-fixtures";

type Entry = AuditView;
type Who = { username: string; password: string };

/** Every password, OTP and key this test sends: none may appear in the audit table or in the log. */
const SECRETS = {
  created: "Created-Pass-9081",
  updated: "Updated-Pass-7342",
  reset: "Reset-Pass-5519",
  wrong: "Wrong-Guess-6630",
  opc: "Opc-Secret-4417",
  opcNew: "Opc-Secret-Next-2288",
};
const secretsSeen: string[] = [];

let t: TestNode;
let smtp: TestSmtp;
let place: Place;
let other: Place;
let siteAdmin: Who;
const logs: string[] = [];
const restore: (() => void)[] = [];

/** This process's log output, kept to be searched: the broker's console logger and anything else written. */
function captureLogs(): void {
  for (const method of ["log", "info", "warn", "error", "debug"] as const) {
    const spy = jest.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      logs.push(format(...args));
    });
    restore.push(() => spy.mockRestore());
  }
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      logs.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
      return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write;
    restore.push(() => {
      stream.write = write;
    });
  }
}

async function sql<T = Record<string, unknown>>(text: string, args: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: t.db.url });
  await c.connect();
  try {
    return (await c.query(text, args)).rows as T[];
  } finally {
    await c.end();
  }
}

const ok = <T>(res: { status: number; body: unknown }, what: string): T => {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as T;
};

async function audit(query = "", auth?: Who): Promise<Entry[]> {
  return ok<Entry[]>(await t.http("GET", `/_config/audit${query}`, auth ? { auth } : {}), `audit ${query}`);
}

/** The entries about a record once `n` of them are in (the stream delivers them a moment after the change). */
async function entriesOf(entity_id: string, n = 1, timeoutMs = 15_000): Promise<Entry[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await audit(`?entity_id=${encodeURIComponent(entity_id)}`);
    if (found.length >= n || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const REQUEST = "9c1f6a2e-3b4d-4e5f-8a6b-7c8d9e0f1a2b";

beforeAll(async () => {
  captureLogs();
  smtp = await startSmtp();
  t = await startTestNode({
    services: ["api", "auth", "config", "notifier", "pipelines", "alerting", "notebooks"],
    // Debug: whatever a service would log of a request is in the log searched for passwords.
    env: { TRANSPORTER: NATS_URL, SMTP_URL: smtp.url, LOG_LEVEL: "debug", NOTEBOOK_PYTHON: "/nonexistent/python3" },
  });
  place = await makePlace(t.http, "a1");
  other = await makePlace(t.http, "b1");
  siteAdmin = await makeUser(t.http, { username: "site.admin@example.com", user_type: "site-admin", site_id: place.site_id }, "SiteAdmin-Pass-1");
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await smtp?.stop();
  for (const undo of restore.reverse()) undo();
});

describe("entries for each kind of change", () => {
  it("records a configuration change with who, when, where from, the request and what changed", async () => {
    const before = Date.now();
    const monitor = await t.http("GET", `/_config/monitors/${place.monitor_id}`);
    const body = monitor.body as Record<string, unknown>;
    const tags = TAGS.map((tag) => (tag.tag_id === "vib" ? { ...tag, thresholds: { ...tag.thresholds, warning: "9" } } : tag));
    const res = await t.http("PUT", `/_config/monitors/${place.monitor_id}`, {
      body: { monitor_name: body.monitor_name, monitor_type: body.monitor_type, tags, specs: body.specs, attributes: body.attributes },
      headers: { "x-request-id": REQUEST },
    });
    expect(res.status).toBe(200);
    const entries = await entriesOf(place.monitor_id, 2);
    // Newest first: the update, then the create of makePlace.
    expect(entries.map((e) => e.action)).toEqual(["update", "create"]);
    const [update] = entries;
    expect(update).toEqual({
      id: expect.any(Number),
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      actor: ADMIN.username,
      user_type: "saas-admin",
      action: "update",
      entity_type: "monitor",
      entity_id: place.monitor_id,
      site_id: place.site_id,
      plant_id: place.plant_id,
      request_id: REQUEST,
      client: "127.0.0.1",
      changes: { "tags[1].thresholds.warning": ["11", "9"] },
    });
    expect(Date.parse(update!.at)).toBeGreaterThanOrEqual(before - 1000);
  });

  it("records creates, updates and deletes of sites, plants, functions and assets", async () => {
    const asset = ok<{ id: string }>(
      await t.http("POST", "/_config/assets", { body: { asset_name: "Spare motor", function_id: place.function_id, asset_category: "Rotating", attributes: { kw: 7.5 } } }),
      "asset",
    ).id;
    ok(await t.http("PUT", `/_config/assets/${asset}`, { body: { asset_name: "Spare motor", function_id: place.function_id, asset_category: "Rotating", is_critical: "yes", attributes: { kw: 11 } } }), "update");
    ok(await t.http("DELETE", `/_config/assets/${asset}`), "delete");
    const entries = await entriesOf(asset, 3);
    expect(entries.map((e) => [e.action, e.entity_type, e.site_id, e.plant_id])).toEqual([
      ["delete", "asset", place.site_id, place.plant_id],
      ["update", "asset", place.site_id, place.plant_id],
      ["create", "asset", place.site_id, place.plant_id],
    ]);
    expect(entries[1]!.changes).toEqual({ is_critical: ["No", "Yes"], "attributes.kw": [7.5, 11] });
    expect(entries[2]!.changes).toMatchObject({ asset_name: [null, "Spare motor"], function_id: [null, place.function_id] });
    expect(entries[0]!.changes).toMatchObject({ asset_name: ["Spare motor", null] });
    for (const [id, type] of [
      [place.site_id, "site"],
      [place.plant_id, "plant"],
      [place.function_id, "function"],
      [place.asset_id, "asset"],
    ] as const) {
      expect((await entriesOf(id)).find((e) => e.entity_type === type)).toMatchObject({ action: "create", actor: ADMIN.username, site_id: place.site_id });
    }
  });

  it("records users created, updated and deleted, a failed sign-in and a password reset, every password as ***", async () => {
    const username = "audit.user@example.com";
    ok(await t.http("POST", "/_config/users", { body: { username, mobile_number: "5550100", country_code: "+1", user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id, password: SECRETS.created } }), "create");
    ok(await t.http("PUT", `/_config/users/${username}`, { body: { username, mobile_number: "5550199", country_code: "+1", user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id, password: SECRETS.updated } }), "update");
    expect((await t.http("GET", "/_config/sites/_list", { auth: { username, password: SECRETS.wrong } })).status).toBe(401);
    // The reset: a code by email, then the new password with it.
    const sent = smtp.received.length;
    expect((await t.http("POST", "/_config/users/password/generate_otp", { body: { email: username }, auth: null })).status).toBe(200);
    const otp = otpIn((await smtp.waitFor(sent + 1, { to: username })).at(-1)!);
    secretsSeen.push(otp);
    expect((await t.http("PUT", "/_config/users/password", { body: { email: username, otp, new_password: SECRETS.reset }, auth: null })).status).toBe(200);
    ok(await t.http("DELETE", `/_config/users/${username}`), "delete");

    const entries = await entriesOf(username, 6);
    expect(entries.map((e) => [e.action, e.actor, e.user_type, e.site_id, e.plant_id])).toEqual([
      ["delete", ADMIN.username, "saas-admin", place.site_id, place.plant_id],
      ["password_reset", username, "plant-admin", place.site_id, place.plant_id],
      ["otp_request", username, "plant-admin", place.site_id, place.plant_id],
      ["sign_in_failure", username, "plant-admin", place.site_id, place.plant_id],
      ["update", ADMIN.username, "saas-admin", place.site_id, place.plant_id],
      ["create", ADMIN.username, "saas-admin", place.site_id, place.plant_id],
    ]);
    const byAction = new Map(entries.map((e) => [e.action, e]));
    expect(byAction.get("create")!.changes).toMatchObject({ password_hash: [null, "***"], user_type: [null, "plant-admin"] });
    expect(byAction.get("update")!.changes).toEqual({ mobile_number: ["5550100", "5550199"], password_hash: ["***", "***"] });
    expect(byAction.get("password_reset")!.changes).toEqual({ password: ["***", "***"] });
    expect(byAction.get("otp_request")!.changes).toEqual({ otp: [null, "***"] });
    expect(byAction.get("sign_in_failure")!.changes).toEqual({});

    // A sign-in as someone who does not exist: the name tried, no place (a SaaS admin's entry only).
    expect((await t.http("GET", "/_config/sites/_list", { auth: { username: "nobody@example.com", password: SECRETS.wrong } })).status).toBe(401);
    expect(await entriesOf("nobody@example.com")).toEqual([
      expect.objectContaining({ action: "sign_in_failure", actor: "nobody@example.com", user_type: null, site_id: null, entity_type: "user" }),
    ]);
  });

  it("records pipelines created, updated, started, stopped and deleted, their settings' passwords as ***", async () => {
    const body = {
      pipeline_name: "Historian link",
      data_type: "Process",
      data_source: "Third-Party-Apps",
      data_source_subtype: "OPC-UA",
      plant_id: place.plant_id,
      function_id: place.function_id,
      settings: { mac_address: "aa:bb:cc:00:00:17", sampling_rate: 5, server_url: "opc.tcp://historian:4840", user_name: "opc", user_password: SECRETS.opc },
      tags: [{ tag_name: "Pressure", tag_desc: "Discharge", tag_unit: "bar", address: "ns=2;s=P1" }],
    };
    const created = ok<{ id: string; ingest_key: string }>(await t.http("POST", "/_config/pipelines/thirdparty", { body }), "pipeline");
    secretsSeen.push(created.ingest_key);
    ok(await t.http("PUT", `/_config/pipelines/thirdparty/${created.id}`, { body: { ...body, pipeline_name: "Historian", settings: { ...body.settings, user_password: SECRETS.opcNew } } }), "update");
    ok(await t.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [created.id], action: "start" } }), "start");
    ok(await t.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: created.id, action: "stop" } }), "stop");
    ok(await t.http("DELETE", `/_config/pipelines/thirdparty/${created.id}`), "delete");
    const entries = await entriesOf(created.id, 5);
    expect(entries.map((e) => [e.action, e.entity_type, e.site_id, e.plant_id])).toEqual([
      ["delete", "pipeline", place.site_id, place.plant_id],
      ["stop", "pipeline", place.site_id, place.plant_id],
      ["start", "pipeline", place.site_id, place.plant_id],
      ["update", "pipeline", place.site_id, place.plant_id],
      ["create", "pipeline", place.site_id, place.plant_id],
    ]);
    expect(entries[4]!.changes.settings![1]).toMatchObject({ user_name: "opc", user_password: "***" });
    expect(entries[3]!.changes).toEqual({ pipeline_name: ["Historian link", "Historian"], "settings.user_password": ["***", "***"] });
    expect(entries[2]!.changes).toEqual({ status: ["stopped", "starting"] });
  });

  it("records watchers, maintenance windows and what operators do to alerts", async () => {
    const gateway = ok<{ id: string }>(
      await t.http("POST", "/_config/pipelines/thirdparty", {
        body: {
          pipeline_name: "Watch gateway",
          data_type: "Condition",
          data_source: "Third-Party-Apps",
          data_source_subtype: "OPC-UA",
          plant_id: place.plant_id,
          function_id: place.function_id,
          settings: { mac_address: "aa:bb:cc:00:00:18", sampling_rate: 5, server_url: "opc.tcp://h:4840", user_name: "opc", user_password: SECRETS.opc },
          tags: [{ tag_name: "Temperature", tag_desc: "", tag_unit: "C", address: "ns=2;s=T1" }],
        },
      }),
      "gateway",
    ).id;
    const body = watcherBody(place, gateway, {}, { minimum_duration: "0s" });
    const watcher = idFrom((await t.http("POST", "/_alerting/watchers", { body })).body);
    ok(await t.http("PUT", `/_alerting/watchers/${watcher}`, { body: { ...body, watcher_name: "Pump watch" } }), "watcher update");
    const windowId = ok<{ id: string }>(
      await t.http("POST", `/_alerting/watchers/${watcher}/_suppress`, { body: { from: "2026-02-01T07:30:00Z", to: "2026-02-01T11:30:00Z", reason: "Overhaul" } }),
      "suppress",
    ).id;
    ok(await t.http("DELETE", `/_alerting/watchers/${watcher}/_suppress/${windowId}`), "unsuppress");

    // Two alerts, opened by the live evaluation as the readings stream would.
    const now = Date.now();
    const evaluate = (ts: number, value: number) => t.node.broker.call("alerting.evaluate", { readings: [{ monitor_id: place.monitor_id, tag_id: "temp", ts, value }] });
    await evaluate(now - 60_000, 95);
    await evaluate(now - 50_000, 20);
    await evaluate(now - 40_000, 96);
    const alerts = ok<{ _id: string }[]>(await t.http("GET", `/_alerting/alerts/_list?function_id=${place.function_id}&is_hidden=0&from=${new Date(now - 3_600_000).toISOString()}`), "alerts");
    expect(alerts.length).toBe(2);
    const [a, b] = alerts.map((x) => x._id) as [string, string];
    ok(await t.http("POST", `/_alerting/alerts/${a}/_ack`, { body: { note: "Checking the bearing" } }), "ack");
    expect(ok(await t.http("POST", "/_alerting/alerts/_ack", { body: { alert_ids: [a, b] } }), "bulk ack")).toEqual({ acknowledged: 1 });
    ok(await t.http("POST", `/_alerting/alerts/${a}/_shelve`, { body: { minutes: 60, reason: "Known sensor fault" } }), "shelve");
    ok(await t.http("POST", `/_alerting/alerts/${a}/_unshelve`), "unshelve");
    ok(await t.http("POST", `/_alerting/alerts/${a}/_assign`, { body: { username: siteAdmin.username } }), "assign");
    ok(await t.http("PUT", `/_alerting/alerts/${a}`, { body: { note: "Bearing greased" } }), "note");
    ok(await t.http("DELETE", `/_alerting/watchers/${watcher}`), "watcher delete");

    const w = await entriesOf(watcher, 3);
    expect(w.map((e) => [e.action, e.entity_type, e.site_id])).toEqual([
      ["delete", "watcher", place.site_id],
      ["update", "watcher", place.site_id],
      ["create", "watcher", place.site_id],
    ]);
    expect(w[1]!.changes).toEqual({ watcher_name: ["Bearing watch", "Pump watch"] });
    expect((await entriesOf(windowId, 2)).map((e) => [e.action, e.entity_type])).toEqual([
      ["delete", "suppression"],
      ["create", "suppression"],
    ]);
    const onA = await entriesOf(a, 5);
    expect(onA.map((e) => e.action)).toEqual(["note", "assign", "unshelve", "shelve", "acknowledge"]);
    expect(onA.every((e) => e.actor === ADMIN.username && e.plant_id === place.plant_id)).toBe(true);
    expect(onA[4]!.changes).toMatchObject({ ack_state: ["unacknowledged", "acknowledged"], detail: [null, "Checking the bearing"] });
    expect(onA[3]!.changes).toMatchObject({ detail: [null, "Known sensor fault"], shelved_until: [null, expect.stringMatching(/Z$/)] });
    expect(onA[1]!.changes).toEqual({ assignee: [null, siteAdmin.username] });
    expect(onA[0]!.changes).toEqual({ note: ["", "Bearing greased"] });
    // The bulk acknowledgement: one entry for the one alert it acknowledged.
    expect((await entriesOf(b)).map((e) => [e.action, e.changes.ack_state])).toEqual([["acknowledge", ["unacknowledged", "acknowledged"]]]);
  });

  it("records notebooks created, renamed, scheduled, unscheduled and deleted", async () => {
    const nb = ok<{ notebook_id: string }>(await t.http("POST", "/_notebooks/notebooks"), "notebook").notebook_id;
    ok(await t.http("PUT", `/_notebooks/notebooks/${nb}`, { body: { notebook_name: "Bearing vibration" } }), "rename");
    ok(await t.http("POST", "/_notebooks/notebooks/_schedule", { body: { nbk_ids: [nb], until: "2099-06-30 18:00", period: "Monday", time: "06:30" } }), "schedule");
    ok(await t.http("POST", "/_notebooks/notebooks/_unschedule", { body: { nbk_ids: [nb] } }), "unschedule");
    ok(await t.http("DELETE", "/_notebooks/notebooks", { body: { nbk_ids: [nb] } }), "delete");
    const entries = await entriesOf(nb, 5);
    expect(entries.map((e) => e.action)).toEqual(["delete", "unschedule", "schedule", "rename", "create"]);
    expect(entries[3]!.changes).toEqual({ notebook_name: ["Untitled.ipynb", "Bearing vibration.ipynb"] });
    expect(entries[2]!.changes).toEqual({ period: [null, "Monday"], time: [null, "06:30"], until: [null, "2099-06-30 18:00"] });
  });

  it("records API tokens issued and revoked, naming the token but never its secret", async () => {
    const issued = ok<{ token_id: string; token: string }>(
      await t.http("POST", `/_config/users/${encodeURIComponent(siteAdmin.username)}/tokens`, { body: { name: "historian", scope: "read", expires_in_days: 30 } }),
      "token",
    );
    secretsSeen.push(issued.token);
    ok(await t.http("DELETE", `/_config/users/${encodeURIComponent(siteAdmin.username)}/tokens/${issued.token_id}`), "revoke");
    const entries = await entriesOf(issued.token_id, 2);
    expect(entries.map((e) => [e.action, e.entity_type, e.actor, e.site_id])).toEqual([
      ["token_revoke", "token", ADMIN.username, place.site_id],
      ["token_issue", "token", ADMIN.username, place.site_id],
    ]);
    expect(entries[1]!.changes).toMatchObject({ username: [null, siteAdmin.username], name: [null, "historian"], scope: [null, "read"] });
  });
});

describe("secrets", () => {
  it("never appear in the audit table, the outboxes or this test's log output", async () => {
    const all = [...Object.values(SECRETS), ...secretsSeen];
    const table = (await sql<{ row: string }>(`SELECT a::text AS row FROM config.audit_log a`)).map((r) => r.row).join("\n");
    expect(table.length).toBeGreaterThan(1000);
    const outboxes = (
      await sql<{ row: string }>(
        `SELECT o::text AS row FROM config.stream_outbox o UNION ALL SELECT o::text FROM auth.stream_outbox o
         UNION ALL SELECT o::text FROM pipelines.stream_outbox o UNION ALL SELECT o::text FROM alerting.stream_outbox o`,
      )
    ).map((r) => r.row);
    const log = logs.join("");
    expect(log.length).toBeGreaterThan(1000);
    for (const secret of all) {
      expect({ secret, inTable: table.includes(secret), inOutbox: outboxes.some((r) => r.includes(secret)), inLog: log.includes(secret) }).toEqual({
        secret,
        inTable: false,
        inOutbox: false,
        inLog: false,
      });
    }
  });
});

describe("who reads what", () => {
  it("a site admin reads its site's entries only; others are refused with 403", async () => {
    const fn = ok<{ id: string }>(await t.http("POST", "/_config/functions", { body: { function_name: "Lubrication", plant_id: place.plant_id }, auth: siteAdmin }), "function");
    expect(await entriesOf(fn.id)).toEqual([expect.objectContaining({ action: "create", actor: siteAdmin.username, user_type: "site-admin" })]);
    const mine = await audit("?limit=1000", siteAdmin);
    expect(mine.length).toBeGreaterThan(10);
    expect(mine.every((e) => e.site_id === place.site_id)).toBe(true);
    expect(await audit(`?entity_id=${other.monitor_id}`, siteAdmin)).toEqual([]);
    expect((await audit(`?entity_id=${other.monitor_id}`)).length).toBe(1);
    const users = [
      await makeUser(t.http, { username: "plant.admin@example.com", user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id }),
      await makeUser(t.http, { username: "operator@example.com", user_type: "general-user", site_id: place.site_id, plant_id: place.plant_id, modules: ["Alerting"] }),
      await makeUser(t.http, { username: "analyst@example.com", user_type: "support-analyst" }),
    ];
    for (const auth of users) {
      expect(await t.http("GET", "/_config/audit", { auth })).toMatchObject({ status: 403, body: envelope(403, "Unauthorized operation") });
      expect((await t.http("GET", "/_config/audit/_verify", { auth })).status).toBe(403);
    }
    expect((await t.http("GET", "/_config/audit/_verify", { auth: siteAdmin })).status).toBe(403);
    expect((await t.http("GET", "/_config/audit", { auth: null })).status).toBe(401);
  });
});

describe("filters and paging", () => {
  it("filters by actor, entity type and id, and time; pages newest first with the total in X-Total-Count", async () => {
    // Newest first by the time of the change (entries of different services reach the chain in any order).
    const all = await audit("?limit=1000");
    for (let i = 1; i < all.length; i++) expect(Date.parse(all[i - 1]!.at)).toBeGreaterThanOrEqual(Date.parse(all[i]!.at));

    const page = await t.http<Entry[]>("GET", "/_config/audit?entity_type=asset&limit=2&offset=1");
    const assets = all.filter((e) => e.entity_type === "asset");
    expect(page.headers.get("x-total-count")).toBe(String(assets.length));
    expect(page.body.map((e) => e.id)).toEqual(assets.slice(1, 3).map((e) => e.id));

    const bySiteAdmin = await audit(`?actor=${encodeURIComponent(siteAdmin.username.toUpperCase())}`);
    expect(bySiteAdmin.length).toBeGreaterThan(0);
    expect(bySiteAdmin.every((e) => e.actor === siteAdmin.username)).toBe(true);

    const mid = all[Math.floor(all.length / 2)]!;
    const older = await audit(`?to=${encodeURIComponent(mid.at)}&limit=1000`);
    expect(older.every((e) => e.at <= mid.at)).toBe(true);
    const newer = await audit(`?from=${encodeURIComponent(mid.at)}&limit=1000`);
    expect(newer.every((e) => e.at >= mid.at)).toBe(true);
    expect(new Set([...older, ...newer].map((e) => e.id)).size).toBe(all.length);

    expect((await t.http("GET", "/_config/audit?from=yesterday")).body).toEqual(envelope(400, "Invalid date format", "from"));
    expect((await t.http("GET", "/_config/audit?colour=red")).body).toEqual(envelope(400, "Excess inputs"));
    expect((await t.http("GET", "/_config/audit?limit=0")).status).toBe(400);
  });
});

describe("the hash chain", () => {
  it("appends an entry the stream delivers twice (a redelivery after a crash) once", async () => {
    const log = (t.node.broker.getLocalService("config") as unknown as { auditLog: AuditAppender }).auditLog;
    const entry = auditEntry({ requestID: "redelivered", meta: {} }, { action: "update", entity_type: "asset", entity_id: place.asset_id, changes: { asset_category: ["Rotating", "Rotating"] } });
    await Promise.all([log.append(entry), log.append(entry)]);
    await log.append(entry);
    expect(await sql(`SELECT request_id FROM config.audit_log WHERE entry_id = $1`, [entry.entry_id])).toEqual([{ request_id: "redelivered" }]);
  });

  it("is ok as written; a row changed by hand in SQL is found, the trigger having been bypassed as only a superuser can", async () => {
    // Entries of earlier tests may still be on their way: verify once the count is the same on both sides of it.
    const count = async () => (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM config.audit_log`))[0]!.n;
    let clean: { ok: boolean; entries: number; first_bad_id: number | null };
    let n: number;
    for (let tries = 0; ; tries++) {
      const before = await count();
      clean = ok(await t.http("GET", "/_config/audit/_verify"), "verify");
      n = await count();
      if (n === before || tries > 50) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(clean).toEqual({ ok: true, entries: n, first_bad_id: null });

    // The table refuses changes...
    await expect(sql(`UPDATE config.audit_log SET actor = 'someone.else' WHERE id = 5`)).rejects.toThrow(/append-only/);
    await expect(sql(`DELETE FROM config.audit_log WHERE id = 5`)).rejects.toThrow(/append-only/);
    // ...unless triggers are off for the session: the hash tells.
    const c = new Client({ connectionString: t.db.url });
    await c.connect();
    try {
      await c.query(`SET session_replication_role = replica`);
      await c.query(`UPDATE config.audit_log SET changes = '{"tags[1].thresholds.warning":["11","15"]}' WHERE id = 7`);
    } finally {
      await c.end();
    }
    expect(ok(await t.http("GET", "/_config/audit/_verify"), "verify")).toEqual({ ok: false, entries: n, first_bad_id: 7 });
  });
});
