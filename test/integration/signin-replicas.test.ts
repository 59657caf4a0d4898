/**
 * Sign-in throttling and console sessions across two api replicas (each its own process, with
 * its own short cache of verified callers), auth and config over NATS, Redis as the throttle's
 * store and the cacher: failures counted on either replica add up, a lock reached through one is
 * met on the other at once (cached caller or not), and lapses a window after the last failure
 * (THROTTLE_WINDOW_S shortened to seconds: the one setting tests may shorten); a session made
 * through one replica is known, ended and dropped on a password change through the other.
 * No proxy is trusted here: X-Forwarded-For, which these requests forge, must not move the count.
 */
import { ADMIN, type HttpClient } from "../helpers/node";
import { ServiceProcess, pollUntil, startApiReplica, startCluster, type Cluster } from "../helpers/cluster";

const WINDOW_S = 12;
const PASSWORD = "GoodPass123";
const SITES = "/_config/sites/_list";

let cluster: Cluster;
let second: ServiceProcess;
/** The first replica (the cluster's port) and the second (its own). */
let one: HttpClient;
let two: HttpClient;

beforeAll(async () => {
  cluster = await startCluster({ processes: [["api"], ["auth"], ["config"]], env: { THROTTLE_WINDOW_S: String(WINDOW_S) } });
  one = cluster.http;
  ({ process: second, http: two } = await startApiReplica(cluster, SITES, { THROTTLE_WINDOW_S: String(WINDOW_S) }));
}, 120_000);

afterAll(async () => {
  await second?.stop();
  await cluster?.stop();
}, 60_000);

async function newUser(username: string) {
  const res = await one("POST", "/_config/users", {
    body: { username, mobile_number: "5550100", country_code: "+1", user_type: "support-analyst", password: PASSWORD },
  });
  expect(res.status).toBe(200);
}

/** A Basic request with a forged X-Forwarded-For, which an untrusted peer's request may carry but must not be believed. */
const as = (replica: HttpClient, username: string, password: string, forged: string) =>
  replica("GET", SITES, { auth: { username, password }, headers: { "x-forwarded-for": forged } });

const throttled = { status: 429, body: { error: { status: 429, message: "Too many failed attempts. Try again later." } } };

it("counts failures on both replicas together, locks on both at once, and lets go a window after the last failure", async () => {
  const user = "replicas.lock@example.com";
  await newUser(user);
  // Verified (and cached for a few seconds) by the second replica.
  expect((await as(two, user, PASSWORD, "1.1.1.1")).status).toBe(200);
  const replicas = [one, two, one, two, one];
  for (const [i, replica] of replicas.entries()) {
    expect((await as(replica, user, "WrongPass999", `6.6.6.${i}`)).status).toBe(401);
  }
  const refused = await as(one, user, PASSWORD, "9.9.9.9");
  expect(refused).toMatchObject(throttled);
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(WINDOW_S);
  // The second replica had this caller verified: the lock's broadcast made it forget.
  await pollUntil(async () => (await as(two, user, PASSWORD, "9.9.9.8")).status === 429, 5000, "the second replica to meet the lock");
  // Another username from the same address is not concerned.
  expect((await as(two, ADMIN.username, ADMIN.password, "9.9.9.7")).status).toBe(200);
  // A window after the last failure, the right password passes again on both.
  await pollUntil(async () => (await as(one, user, PASSWORD, "1.1.1.1")).status === 200, (WINDOW_S + 3) * 1000, "the lock to lapse");
  expect((await as(two, user, PASSWORD, "1.1.1.1")).status).toBe(200);
}, 60_000);

it("knows a console session on every replica, and ends it on every replica", async () => {
  const user = "replicas.session@example.com";
  await newUser(user);
  const signIn = async (replica: HttpClient, password = PASSWORD) => {
    const res = await replica("POST", "/_auth/session", { auth: null, body: { username: user, password } });
    expect(res.status).toBe(200);
    return /ims_session=([^;]+)/.exec(res.headers.getSetCookie().join("\n"))![1]!;
  };
  const cookie = (id: string, console_ = false) => ({ auth: null, headers: { cookie: `ims_session=${id}`, ...(console_ ? { "x-requested-with": "ims-console" } : {}) } });

  const id = await signIn(one);
  expect(await two("GET", "/_auth/session", cookie(id))).toMatchObject({ status: 200, body: { username: user, user_type: "support-analyst" } });
  expect((await two("DELETE", "/_auth/session", cookie(id, true))).status).toBe(200);
  expect((await one("GET", SITES, cookie(id))).status).toBe(401);

  // A password changed through one replica ends the user's sessions on the other.
  const live = await signIn(two);
  expect((await one("GET", SITES, cookie(live))).status).toBe(200);
  const update = await one("PUT", `/_config/users/${user}`, {
    body: { username: user, mobile_number: "5550100", country_code: "+1", user_type: "support-analyst", password: "NewPass5678" },
  });
  expect(update.status).toBe(200);
  expect((await two("GET", SITES, cookie(live))).status).toBe(401);
  expect((await one("GET", "/_auth/session", cookie(live))).status).toBe(401);
}, 60_000);
