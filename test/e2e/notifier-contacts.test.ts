/**
 * The notifier reads an alert's users from its own copy of their contacts, kept from auth's
 * events (docs/architecture.md, "Events"): a number changed through the API is the one the next
 * alert texts, an alert is still told while auth is gone, and a removed user is told nothing.
 * One process: SMS at a local stand-in for Twilio's API behind the real `twilio` client.
 */
import { randomUUID } from "node:crypto";
import type { Service } from "moleculer";
import { Client } from "pg";
import { startTestNode, type TestNode } from "../helpers/node";
import { makePlace, makeUser, watcherBody, type Place } from "./alerting-fixtures";
import { startTwilio, type TwilioStandIn } from "./alerting-twilio";

const SID = "AC00000000000000000000000000000002";
const USER = "oncall-contacts@example.com";
let t: TestNode;
let twilio: TwilioStandIn;
let place: Place;
let pg: Client;
let ts = Date.now() - 3_600_000;

/** A reading of the watched tag through alerting, each a minute after the last: above 80 opens the alert, below closes it. */
async function reading(value: number): Promise<void> {
  ts += 60_000;
  await t.node.broker.call("alerting.evaluate", { readings: [{ monitor_id: place.monitor_id, tag_id: "temp", ts, value }] });
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

const updateUser = (mobile_number: string, country_code: string) =>
  t.http("PUT", `/_config/users/${USER}`, {
    body: { username: USER, user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id, mobile_number, country_code, password: null },
  });

beforeAll(async () => {
  twilio = await startTwilio();
  t = await startTestNode({
    services: ["api", "auth", "config", "alerting", "notifier"],
    env: { TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: "secret-token", TWILIO_SMS_FROM: "+15550001111", TWILIO_API_BASE: twilio.base },
  });
  pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  place = await makePlace(t.http, "k1");
  await makeUser(t.http, { username: USER, user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id, country_code: "+91", mobile_number: "9876543210" });
  const body = watcherBody(place, randomUUID(), { watcher_name: "Contact watch" }, {
    minimum_duration: "0s",
    notifyTo: { email: false, sms: true, whatsapp: false, users: [USER, "removed-contacts@example.com"] },
  });
  expect((await t.http("POST", "/_alerting/watchers", { body })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await pg?.end();
  await t?.stop();
  await twilio?.stop();
});

describe("the notifier's copy of the users' contacts", () => {
  it("texts the number the user has now: a number changed through the API is the one the next alert uses", async () => {
    await reading(95);
    const [first] = await twilio.waitFor(1);
    expect(first.To).toBe("+919876543210");

    expect(await updateUser("5550123", "+44")).toMatchObject({ status: 200 });
    await reading(20);
    await reading(96);
    const messages = await twilio.waitFor(2);
    expect(messages[1].To).toBe("+445550123");
    expect(twilio.messages).toHaveLength(2);
  });

  it("fails a removed user's notice as unknown, while the watcher's other user is texted", async () => {
    await makeUser(t.http, { username: "removed-contacts@example.com", user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id });
    expect((await t.http("DELETE", "/_config/users/removed-contacts@example.com")).status).toBe(200);
    await reading(20);
    await reading(97);
    await twilio.waitFor(3);
    const rows = await until(
      async () =>
        (await pg.query(`SELECT status, last_error FROM notifier.notifications WHERE idempotency_key LIKE '%removed-contacts@example.com%' ORDER BY created_at`)).rows as {
          status: string;
          last_error: string | null;
        }[],
      (r) => r.length === 3 && r.every((x) => x.status !== "queued"),
    );
    // Before it existed, and after it was removed: unknown both times, never texted.
    expect(rows.map((r) => r.last_error)).toEqual(Array(3).fill("unknown user removed-contacts@example.com"));
    expect(twilio.messages.map((m) => m.To)).toEqual(["+919876543210", "+445550123", "+445550123"]);
  });

  it("still texts an alert's user while auth is gone", async () => {
    const auth = t.node.broker.getLocalService("auth") as Service;
    await t.node.broker.destroyService(auth);
    expect(t.node.broker.registry.actions.isAvailable("auth.users.resolve")).toBe(false);
    await reading(20);
    await reading(98);
    const messages = await twilio.waitFor(4);
    expect(messages[3].To).toBe("+445550123");
    expect(messages[3].Body).toContain("Temperature 98 C");
  });
});

describe("a notifier whose copy has never been whole", () => {
  let bare: TestNode;
  const now = Date.now();
  const contact = (username: string, mobile_number: string) => ({
    username,
    user_type: "saas-admin" as const,
    site_id: null,
    plant_id: null,
    mobile_number,
    country_code: "+1",
    created_at: now - 86_400_000,
  });
  const alert = (alert_id: string, users: string[]) => ({
    alert_id,
    watcher_id: randomUUID(),
    watcher_name: "Copy watch",
    trigger_id: "t1",
    trigger_name: "Bearing hot",
    severity: "High",
    start_time: "2026-01-01T00:00:00+00:00",
    start_ts: now,
    site: "Site k3",
    plant: "Plant k3",
    function: "Cooling k3",
    asset: "Pump k3",
    monitor: "Bearing k3",
    tag: "Temperature",
    value: 93.5,
    threshold: 80,
    comparison: ">=",
    unit: "C",
    conditions: [],
    notifyTo: { email: false, sms: true, whatsapp: false, users },
  });
  /** Whom each notification of the alert went to, or why it failed at once (nobody to send to). */
  const recipients = async (alert_id: string) =>
    (await bare.node.broker.call<{ recipient: string; last_error: string | null }[], object>("notifier.notifications.list", { alert_id }))
      .map((n) => n.recipient || n.last_error)
      .sort();

  beforeAll(async () => {
    // No auth at all: the copy is told only what the test emits as auth would.
    bare = await startTestNode({ services: ["notifier"] });
  });
  afterAll(async () => {
    await bare?.stop();
  });

  it("holds an alert for a name it does not know back (an error, nothing recorded) until a whole announcement has come", async () => {
    const first = randomUUID();
    await bare.node.broker.emit("auth.user.created", { ...contact("known@example.com", "5550001"), at: now });
    await expect(bare.node.broker.call("notifier.alerts.notify", alert(first, ["known@example.com", "later@example.com"]))).rejects.toThrow(
      "user later@example.com not known yet",
    );
    expect(await recipients(first)).toEqual([]);

    // The whole list in two parts; an older number in it does not overwrite the event's newer one.
    await bare.node.broker.emit("auth.users.announced", { at: now - 1000, after: null, through: "known@example.com", users: [contact("known@example.com", "5559999")] });
    await expect(bare.node.broker.call("notifier.alerts.notify", alert(first, ["later@example.com"]))).rejects.toThrow("not known yet");
    await bare.node.broker.emit("auth.users.announced", { at: now - 1000, after: "known@example.com", through: null, users: [] });

    await bare.node.broker.call("notifier.alerts.notify", alert(first, ["known@example.com", "later@example.com"]));
    expect(await recipients(first)).toEqual(["+15550001", "unknown user later@example.com"]);
  });

  it("drops a user a later whole announcement no longer lists, and takes a user it newly lists", async () => {
    const second = randomUUID();
    await bare.node.broker.emit("auth.users.announced", { at: now + 120_000, after: null, through: null, users: [contact("later@example.com", "5550002")] });
    await bare.node.broker.call("notifier.alerts.notify", alert(second, ["known@example.com", "later@example.com"]));
    expect(await recipients(second)).toEqual(["+15550002", "unknown user known@example.com"]);
  });
});
