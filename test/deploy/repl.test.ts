/**
 * The REPL's admin commands against a running cluster: a node serving api, auth, config,
 * notifier, pipelines and alerting over NATS, and the REPL's own broker joined to it as
 * `npm run repl` joins.
 */
import { execFile, spawn } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import type { ServiceBroker } from "moleculer";
import { readConfig } from "../../lib/config";
import { COMMANDS, createReplBroker, runCommand } from "../../repl";
import type { ReplContext } from "../../repl/types";
import { eventually, ingest } from "../e2e/pipelines-fixtures";
import { ADMIN, startTestNode, type TestNode } from "../helpers/node";
import { startSmtp, type TestSmtp } from "../helpers/smtp";

const TRANSPORTER = "nats://127.0.0.1:4222";
let t: TestNode;
let repl: ServiceBroker;
let ctx: ReplContext;
let smtp: TestSmtp;
/** The demo's process monitor, and the range its pressure history was sent for (typed into the REPL below too). */
let processMonitor = "";
let historyRange = { from: "", to: "" };
/** While true, the SMTP server refuses every message with a permanent 550. */
let bouncing = false;

beforeAll(async () => {
  smtp = await startSmtp({ refuse: () => (bouncing ? 550 : null) });
  t = await startTestNode({ services: ["api", "auth", "config", "notifier", "pipelines", "alerting"], env: { TRANSPORTER, SMTP_URL: smtp.url } });
  const cfg = readConfig({ SERVICES: "api", TRANSPORTER, NAMESPACE: t.node.config.namespace, LOG_LEVEL: "error" });
  ({ broker: repl, ctx } = createReplBroker(cfg));
  await repl.start();
  await repl.waitForServices(["auth", "config", "notifier", "pipelines", "alerting"], 10000);
});
afterAll(async () => {
  await repl?.stop();
  await t?.stop();
  await smtp?.stop();
});

const command = (name: string) => {
  const cmd = COMMANDS.find((c) => c.command.split(" ")[0] === name);
  if (!cmd) throw new Error(`no command ${name}`);
  return cmd;
};
const run = (name: string, args: Record<string, unknown> = {}, options: Record<string, unknown> = {}) =>
  runCommand(command(name), ctx, { ...args, options });

describe("REPL commands", () => {
  let siteId = "";
  let plantId = "";

  it("each has help text, and the REPL node serves nothing", () => {
    for (const c of COMMANDS) expect(c.description.length).toBeGreaterThan(10);
    expect(repl.services.filter((s) => !s.name.startsWith("$"))).toEqual([]);
  });

  let pipelineId = "";
  let ingestKey = "";
  let pressureTag = "";
  it("seed-demo creates a whole demo installation and prints how to feed it", async () => {
    const out = await run("seed-demo", {}, { name: "Repl Demo", url: t.baseUrl });
    for (const step of ["site", "plant", "function:pumping", "function:utilities", "asset:pump", "asset:switchboard", "monitor:condition", "monitor:process", "monitor:energy", "pipeline"]) {
      expect(out).toMatch(new RegExp(`^\\+ ${step}: [0-9a-f-]{36}$`, "m"));
    }
    expect(out).toMatch(/^\+ watcher: Successfully created watcher with ID [0-9a-f-]{36}\.$/m);
    expect(out).toMatch(/demo seeded$/);
    siteId = /^\+ site: (\S+)$/m.exec(out)![1]!;
    plantId = /^\+ plant: (\S+)$/m.exec(out)![1]!;
    pipelineId = /^\+ pipeline: (\S+)$/m.exec(out)![1]!;
    ingestKey = / --key (pk_\S+)$/m.exec(out)![1]!;
    [, processMonitor, pressureTag] = /^ {2}pressure +([0-9a-f-]{36}):(\S+)$/m.exec(out)!;
    // Its watcher emails a real user (the bootstrap admin), not the REPL's own name, which no user has.
    const watcherId = /^\+ watcher: Successfully created watcher with ID (\S+)\.$/m.exec(out)![1]!;
    const watcher = await t.http<{ triggers: { notifyTo: { users: string[] } }[] }>("GET", `/_alerting/watchers/${watcherId}`);
    expect(watcher.body.triggers[0]!.notifyTo.users).toEqual([ADMIN.username]);
    // What the REPL made is what the API shows.
    const sites = await t.http<{ site_id: string; site_name: string }[]>("GET", "/_config/sites/_list");
    expect(sites.body).toContainEqual(expect.objectContaining({ site_id: siteId, site_name: "Repl Demo" }));
    // The simulator command for the pipeline, with its ingest key (seed-demo prints it).
    expect(out).toMatch(new RegExp(`^ {2}npm run simulate -- --url ${t.baseUrl} --pipeline ${pipelineId} --key pk_\\S+$`, "m"));
    // The printed command feeds the pipeline: run it (through a shell, as an operator would).
    const curl = /^ {2}(curl .*)$/m.exec(out)![1]!;
    const { stdout } = await promisify(execFile)("sh", ["-c", curl]);
    expect(JSON.parse(stdout)).toEqual({ accepted: 1, rejected: [] });
    // ... and that one reading opens the demo watcher's alert, emailed to the bootstrap admin.
    const fn = /^\+ function:pumping: (\S+)$/m.exec(out)![1]!;
    const alerts = await eventually(
      async () => (await t.http<{ trigger_name: string; state: string }[]>("GET", `/_alerting/alerts/_list?function_id=${fn}&is_hidden=0`)).body,
      (a) => a.length === 1,
    );
    expect(alerts[0]).toMatchObject({ trigger_name: "Bearing too hot", state: "active" });
    await smtp.waitFor(1, { to: ADMIN.username });
  });

  it("pipeline-start queues a start, and pipeline-show shows it with the heartbeats", async () => {
    expect(await run("pipeline-start", { pipelineIds: [pipelineId] })).toBe("Action is being queued");
    const out = await run("pipeline-show", { pipelineId });
    expect(out).toMatch(new RegExp(`^Repl Demo Gateway \\(${pipelineId}\\): starting, OPC-UA\n`));
    expect(out).toMatch(/^heartbeats\ncomponent\s+last\n/m);
    expect(out).toMatch(/^[0-9a-f-]{36}\s+start\s+in_progress\s+\d{4}-\d\d-\d\dT\S+Z\s+-$/m);
  });

  it("retention-now runs the retention job", async () => {
    expect(await run("retention-now")).toMatch(/^retention done: \d+ readings deleted$/);
  });

  it("history prints a tag's readings, then buckets with mean, min and max, as a table", async () => {
    // Thirty readings of the discharge pressure a minute apart, 50 to 79, two hours ago (no watcher reads pressure).
    const t0 = Math.floor((Date.now() - 2 * 3600_000) / 600_000) * 600_000;
    const readings = Array.from({ length: 30 }, (_, i) => ({ monitor_id: processMonitor, tag_id: pressureTag, ts: t0 + i * 60_000, value: 50 + i }));
    const sent = await ingest<{ accepted: number }>(t, "POST", `/_ingest/pipelines/${pipelineId}/readings`, ingestKey, { readings });
    expect(sent.body.accepted).toBe(30);
    const from = new Date(t0).toISOString();
    const to = new Date(t0 + 29 * 60_000).toISOString();
    historyRange = { from, to };

    const raw = (await run("history", { monitorId: processMonitor, tag: "pressure", from, to })).split("\n");
    expect(raw[0]).toBe(`pressure [bar] of ${processMonitor}: 30 point(s), raw readings`);
    expect(raw[1]).toMatch(/^timestamp\s+value\s+min\s+max\s+count$/);
    expect(raw[2]).toMatch(/^-{24}( +-+){4}$/);
    expect(raw[3]).toMatch(new RegExp(`^${from}\\s+50\\s+50\\s+50\\s+1$`));
    expect(raw.slice(3)).toHaveLength(30);

    // Three points: buckets of 10 min from the minute rollups, once the stream has folded the batch in.
    const bucketed = await eventually(
      () => run("history", { monitorId: processMonitor, tag: "pressure", from, to }, { points: "3" }),
      (out) => /54\.5\s+50\s+59\s+10\n.*64\.5\s+60\s+69\s+10\n.*74\.5\s+70\s+79\s+10$/.test(out),
      100,
      200,
    );
    expect(bucketed.split("\n")[0]).toBe(`pressure [bar] of ${processMonitor}: 3 point(s), buckets of 10 min`);
    expect(bucketed).toMatch(new RegExp(`^${from}\\s+54\\.5\\s+50\\s+59\\s+10$`, "m"));
    expect(bucketed).toMatch(new RegExp(`^${new Date(t0 + 20 * 60_000).toISOString()}\\s+74\\.5\\s+70\\s+79\\s+10$`, "m"));

    // A range without readings, and the service's own messages.
    const before = new Date(t0 - 3600_000).toISOString();
    expect(await run("history", { monitorId: processMonitor, tag: "pressure", from: before, to: new Date(t0 - 60_000).toISOString() })).toBe(
      `pressure [bar] of ${processMonitor}: 0 point(s), raw readings\nno readings in the range`,
    );
    expect(await run("history", { monitorId: processMonitor, tag: "flow", from, to })).toBe("error: 400 Invalid tag");
    expect(await run("history", { monitorId: processMonitor, tag: "pressure", from: "yesterday", to })).toBe("error: 400 Invalid date format");
    expect(await run("history", { monitorId: "00000000-0000-4000-8000-000000000001", tag: "pressure", from, to })).toBe("error: 400 Invalid Monitor Id");
    expect(await run("history", { monitorId: "p-101", tag: "pressure", from, to })).toMatch(/^error: monitorId must be an id \(a UUID\), got "p-101"\nusage: history <monitorId> <tag> <from> <to>\n {2}--points <n>/);
    expect(await run("history", { monitorId: processMonitor, tag: "pressure", from, to }, { points: "0" })).toMatch(/^error: --points must be an integer from 1 to 10000\n/);
  });

  it("sites lists the sites as a table", async () => {
    const out = await run("sites");
    const lines = out.split("\n");
    expect(lines[0]).toMatch(/^site_id\s+site_name\s+location\s+timezone\s+retention_days$/);
    expect(lines[1]).toMatch(/^-+( +-+){4}$/);
    expect(lines.slice(2).find((l) => l.startsWith(siteId))).toMatch(/Repl Demo\s+Pune, India\s+Asia\/Kolkata\s+180$/);
  });

  it("plants lists the plants of every site, or of one, with their counts", async () => {
    const all = await run("plants");
    expect(all).toMatch(new RegExp(`^${plantId}\\s+Repl Demo Plant\\s+Repl Demo\\s+2\\s+1$`, "m"));
    expect(await run("plants", { siteId })).toBe(all);
    expect(await run("plants", { siteId: "not-an-id" })).toMatch(/^error: siteId must be an id \(a UUID\), got "not-an-id"\nusage: plants \[siteId\]/);
  });

  it("user-create checks its arguments before calling anything", async () => {
    expect(await run("user-create", { username: "op@example.com", userType: "boss" })).toMatch(/^error: userType must be one of saas-admin, /);
    expect(await run("user-create", { username: "op@example.com", userType: "plant-admin" })).toMatch(
      /^error: --mobile and --country are required\nusage: user-create <username> <userType>\n  --mobile <number>/,
    );
    expect(await run("user-create", { username: "op@example.com", userType: "plant-admin" }, { mobile: "1", country: "+49" })).toMatch(
      /^error: a plant-admin needs --plant\nusage: /,
    );
  });

  let password = "";
  it("user-create makes a user who can sign in, with a generated password shown once", async () => {
    const out = await run("user-create", { username: "Operator@Example.com", userType: "plant-admin" }, { mobile: "1555", country: "+1", plant: plantId });
    expect(out).toMatch(/^User created successfully\npassword: (\S+) {2}\(shown once\)$/);
    password = /password: (\S+)/.exec(out)![1]!;
    const res = await t.http("GET", "/_config/plants/" + plantId, { auth: { username: "operator@example.com", password } });
    expect(res.status).toBe(200);
  });

  it("user-create answers the service's own message when the service refuses", async () => {
    const out = await run("user-create", { username: "operator@example.com", userType: "plant-admin" }, { mobile: "1", country: "+1", plant: plantId, password: "Another123x" });
    expect(out).toBe("error: 409 User already exists");
  });

  it("user-password resets a password: the old one stops working, the new one works", async () => {
    const out = await run("user-password", { username: "operator@example.com" }, { password: "BrandNew123x" });
    expect(out).toBe("User updated successfully");
    const old = await t.http("GET", "/_config/server-time", { auth: { username: "operator@example.com", password } });
    expect(old.status).toBe(401);
    const fresh = await t.http("GET", "/_config/server-time", { auth: { username: "operator@example.com", password: "BrandNew123x" } });
    expect(fresh.status).toBe(200);
    expect(await run("user-password", { username: "nobody@example.com" })).toBe("error: 404 User not found!");
  });

  it("token-issue prints a token once, which signs in as the user; token-revoke refuses it at once", async () => {
    const out = await run("token-issue", { username: "operator@example.com", name: "historian", scope: "read", days: "30" });
    expect(out).toMatch(/^token_id: [0-9a-f-]{36}\ntoken: ims_[A-Za-z0-9_-]{43} {2}\(shown once; send it as Authorization: Bearer <token>\)$/);
    const tokenId = /^token_id: (\S+)$/m.exec(out)![1]!;
    const token = /^token: (\S+)/m.exec(out)![1]!;
    const as = { auth: null, headers: { authorization: `Bearer ${token}` } };
    expect((await t.http("GET", `/_config/plants/${plantId}`, as)).status).toBe(200);
    expect((await t.http("DELETE", `/_config/plants/${plantId}`, as)).status).toBe(403);
    expect(await run("token-revoke", { username: "operator@example.com", tokenId })).toBe("Token revoked");
    expect((await t.http("GET", `/_config/plants/${plantId}`, as)).status).toBe(401);
    expect(await run("token-revoke", { username: "operator@example.com", tokenId })).toBe("error: 400 Invalid input: token_id");
  });

  it("token-issue and token-revoke check their arguments before calling anything", async () => {
    const issue = (args: Record<string, unknown>) => run("token-issue", { username: "operator@example.com", name: "n", scope: "read", days: "1", ...args });
    expect(await issue({ scope: "admin" })).toMatch(/^error: scope must be one of read, write\nusage: token-issue <username> <name> <scope> <days>/);
    for (const days of ["0", "366", "1.5", "x"]) expect(await issue({ days })).toMatch(/^error: days must be a whole number from 1 to 365, got /);
    expect(await issue({ username: "nobody@example.com" })).toBe("error: 404 User not found!");
    expect(await run("token-revoke", { username: "operator@example.com", tokenId: "x1" })).toMatch(/^error: tokenId must be an id \(a UUID\)/);
  });

  it("notifications shows a failed notification, and notifications-retry sends it once the SMTP server takes it", async () => {
    bouncing = true;
    const sent = await t.node.broker.call<{ notification_id: string }, object>("notifier.email.send", {
      to: "bounced@example.com",
      subject: "Shift report",
      text: "all quiet",
    });
    const id = sent.notification_id;
    const failedRow = new RegExp(`^${id}\\s+email\\s+bounced@example\\.com\\s+failed\\s+1\\s+.*550`, "m");
    const listed = await eventually(() => run("notifications", {}, { status: "failed" }), (out) => failedRow.test(out));
    expect(listed).toMatch(/^notification_id\s+medium\s+recipient\s+status\s+attempts\s+last_error$/m);
    expect(listed).toMatch(failedRow);
    expect(await run("notifications")).toMatch(failedRow);
    expect(await run("notifications", {}, { status: "sent", limit: 1 })).not.toContain(id);
    expect(await run("notifications", {}, { medium: "sms", status: "failed" })).not.toContain(id);
    expect(await run("notifications", {}, { medium: "fax" })).toMatch(/^error: --medium must be one of email, sms, whatsapp\nusage: notifications/);
    expect(smtp.received.filter((m) => m.to.includes("bounced@example.com"))).toHaveLength(0);

    bouncing = false;
    const retried = await run("notifications-retry", { notificationIds: [id] });
    expect(retried.split("\n")[0]).toBe("1 notification(s) queued again");
    expect(retried).toMatch(new RegExp(`^${id}\\s+email\\s+bounced@example\\.com\\s+(queued|sending|sent)\\s+1`, "m"));
    const [mail] = await smtp.waitFor(1, { to: "bounced@example.com" });
    expect(mail.raw).toContain("Subject: Shift report");
    expect(await run("notifications", {}, { status: "sent", limit: 1 })).toMatch(new RegExp(`^${id}\\s+email\\s+bounced@example\\.com\\s+sent\\s+1$`, "m"));

    // Sent is final: asked again, the notifier refuses and nothing more is sent.
    expect(await run("notifications-retry", { notificationIds: [id] })).toBe(`error: 409 Notification ${id} was sent already; a sent notification is not sent again`);
    expect(await run("notifications-retry")).toBe("0 notification(s) queued again");
    expect(smtp.received.filter((m) => m.to.includes("bounced@example.com"))).toHaveLength(1);
  });

  it("says which commands' services or actions are not there", async () => {
    await t.node.broker.destroyService(t.node.broker.getLocalService("pipelines")!);
    const id = "00000000-0000-4000-8000-000000000001";
    expect(await run("pipeline-stop", { pipelineIds: [id] })).toBe("error: not available: pipelines not deployed");
    expect(await run("retention-now")).toBe("error: not available: pipelines not deployed");
    expect(await run("pipeline-start", { pipelineIds: ["x1"] })).toMatch(/^error: pipelineIds must be an id/);
    expect(await run("notifications", {}, { status: "lost" })).toMatch(/^error: --status must be one of queued, /);
  });
});

describe("npm run repl", () => {
  it("joins the cluster with moleculer-repl and runs the admin commands typed into it", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "bin/repl.ts"], {
      cwd: path.resolve(__dirname, "../.."),
      env: { PATH: process.env.PATH ?? "", HOME: "/tmp", TRANSPORTER, NAMESPACE: t.node.config.namespace, LOG_LEVEL: "error" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const waitFor = async (re: RegExp, ms = 20000) => {
      const until = Date.now() + ms;
      while (!re.test(out)) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${re}; output:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    try {
      await waitFor(/ims:test-[0-9a-f]+ \$/);
      child.stdin.write("sites\n");
      await waitFor(/Repl Demo\s+Pune, India/);
      child.stdin.write("help\n");
      await waitFor(/seed-demo/);
      expect(out).toMatch(/history \[options\] <monitorId> <tag> <from> <to>\s+A tag's history as a table/);
      // Its arguments and option as typed (the pipelines service is gone by now: the option is checked first).
      child.stdin.write(`history ${processMonitor} pressure ${historyRange.from} ${historyRange.to} --points 0\n`);
      await waitFor(/error: --points must be an integer from 1 to 10000\nusage: history <monitorId> <tag> <from> <to>/);
      expect(out).toContain("Reset a user's password");
      child.stdin.write("user-create someone@example.com nobody-type --mobile 1 --country +1\n");
      await waitFor(/error: userType must be one of/);
    } finally {
      child.stdin.end();
      await new Promise((r) => child.once("exit", r));
    }
    // The serving node is untouched by the REPL's exit.
    expect((await t.http("GET", "/_config/server-time")).status).toBe(200);
  }, 60000);
});
