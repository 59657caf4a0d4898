/**
 * The notifier's copy of the users' contacts across processes over NATS (docs/architecture.md,
 * "Events"): a notifier started after its users were made learns them from auth's announcement
 * when it joins, a number changed through the API reaches the next alert's SMS, and an alert
 * opened while auth's process is dead is still texted. Readings come in through the ingestion
 * API; SMS go to a local stand-in for Twilio's API behind the real `twilio` client.
 */
import { Client } from "pg";
import type { TestNode } from "../helpers/node";
import { pollUntil, startCluster, type Cluster } from "../helpers/cluster";
import { gatewayBody, makePlace, watcherBody, type Place } from "../e2e/alerting-fixtures";
import { startTwilio, type TwilioStandIn } from "../e2e/alerting-twilio";
import { createEdge, ingest } from "../e2e/pipelines-fixtures";

const SID = "AC00000000000000000000000000000003";
const USER = "oncall-copy@example.com";
let cluster: Cluster;
let twilio: TwilioStandIn;
let pg: Client;
let place: Place;
let gw: { id: string; ingest_key: string };
let ts = Date.now() - 3_600_000;

/** A reading of the watched tag, each a minute after the last: above 80 opens the alert, below closes it. */
async function reading(value: number): Promise<void> {
  ts += 60_000;
  const res = await ingest({ http: cluster.http } as TestNode, "POST", `/_ingest/pipelines/${gw.id}/readings`, gw.ingest_key, {
    readings: [{ monitor_id: place.monitor_id, tag_id: "temp", ts, value }],
  });
  expect(res.status).toBe(200);
}

const kept = async (): Promise<{ mobile_number: string; country_code: string } | undefined> =>
  (await pg.query(`SELECT mobile_number, country_code FROM notifier.contacts WHERE username = $1 AND NOT deleted`, [USER])).rows[0];

beforeAll(async () => {
  twilio = await startTwilio();
  // No notifier yet: auth's event of the user goes to no one.
  cluster = await startCluster({
    processes: [["api", "config", "pipelines", "alerting"], ["auth"]],
    env: { TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: "secret-token", TWILIO_SMS_FROM: "+15550001111", TWILIO_API_BASE: twilio.base },
  });
  pg = new Client({ connectionString: cluster.db!.url });
  await pg.connect();
  place = await makePlace(cluster.http, "k2");
  // Auth's process, just started, may not see config's node yet (503): asked again until it does.
  await pollUntil(
    async () =>
      (
        await cluster.http("POST", "/_config/users", {
          body: { username: USER, password: "UserPass1234", user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id, country_code: "+91", mobile_number: "9876543210" },
        })
      ).status === 200,
    30_000,
    "the user created",
  );
  gw = await createEdge({ http: cluster.http } as TestNode, gatewayBody(place, "Contacts gateway"));
  const body = watcherBody(place, gw.id, { watcher_name: "Copy watch" }, {
    minimum_duration: "0s",
    notifyTo: { email: false, sms: true, whatsapp: false, users: [USER] },
  });
  const created = await cluster.http("POST", "/_alerting/watchers", { body });
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
}, 180_000);

afterAll(async () => {
  await pg?.end();
  await cluster?.stop();
  await twilio?.stop();
}, 60_000);

describe("the notifier's copy of the contacts, over NATS", () => {
  it("a notifier started after its users were made learns them from auth's announcement, and texts them", async () => {
    const notifier = cluster.addProcess(["notifier"]);
    await pollUntil(async () => (await kept()) !== undefined, 60_000, "auth's announcement in the notifier's copy", [notifier, cluster.process("auth")]);
    expect(await kept()).toEqual({ mobile_number: "9876543210", country_code: "+91" });
    await reading(95);
    const [sms] = await twilio.waitFor(1, 60_000);
    expect(sms.To).toBe("+919876543210");
  }, 120_000);

  it("texts the next alert to a number changed through the API", async () => {
    const res = await cluster.http("PUT", `/_config/users/${USER}`, {
      body: { username: USER, user_type: "plant-admin", site_id: place.site_id, plant_id: place.plant_id, mobile_number: "5550123", country_code: "+44", password: null },
    });
    expect(res.status).toBe(200);
    // The event crosses the bus after the answer: the copy follows within its delay.
    await pollUntil(async () => (await kept())?.mobile_number === "5550123", 30_000, "the changed number in the notifier's copy");
    await reading(20);
    await reading(96);
    const messages = await twilio.waitFor(2, 60_000);
    expect(messages[1].To).toBe("+445550123");
  }, 120_000);

  it("texts an alert opened while auth's process is dead", async () => {
    await cluster.process("auth").stop("SIGKILL");
    // Nothing answers for auth any more: a signed-in read is refused.
    await pollUntil(async () => (await cluster.http("GET", "/_config/users/_list")).status === 503, 30_000, "auth gone from the bus");
    await reading(20);
    await reading(97);
    const messages = await twilio.waitFor(3, 60_000);
    expect(messages[2].To).toBe("+445550123");
    expect(messages[2].Body).toContain("Temperature 97 C");
  }, 120_000);
});
