/**
 * Two auth replicas with the memory cacher (no REDIS_URL): each caches the verifications it made.
 * A password changed through one replica must be refused by the other on the very next request,
 * so every replica drops its own cached credentials on auth's `auth.credentials.changed` broadcast.
 */
import { startCluster, type Cluster } from "../helpers/cluster";

let cluster: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ processes: [["api"], ["auth"], ["auth"], ["config"]], env: { REDIS_URL: "" } });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

it("refuses the old password on every replica after a change", async () => {
  const username = "replicas@example.com";
  const user = (password: string) => ({
    username,
    mobile_number: "9876543210",
    country_code: "+91",
    user_type: "saas-admin",
    password,
  });
  const as = (password: string) => cluster.http("GET", "/_config/sites/_list", { auth: { username, password } });
  expect((await cluster.http("POST", "/_config/users", { body: user("OldPass1234") })).status).toBe(200);
  // Both replicas verify (and cache) the old password: the balancer takes turns, and the requests
  // are further apart than the api process's own cache of a verified caller (5 s at most).
  for (let i = 0; i < 3; i++) {
    expect((await as("OldPass1234")).status).toBe(200);
    await new Promise((r) => setTimeout(r, 5200));
  }

  expect((await cluster.http("PUT", `/_config/users/${username}`, { body: user("NewPass5678") })).status).toBe(200);
  // A refusal is never cached: each of these reaches auth, on either replica. Four, as a fifth
  // failure from one address would lock the username there (sign-in throttling, lib/throttle.ts).
  const refused = { status: 401, body: { error: { status: 401, message: "Invalid credentials" } } };
  for (let i = 0; i < 4; i++) expect(await as("OldPass1234")).toMatchObject(refused);
  for (let i = 0; i < 4; i++) expect((await as("NewPass5678")).status).toBe(200);
}, 60_000);
