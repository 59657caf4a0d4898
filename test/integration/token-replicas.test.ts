/**
 * API tokens across two api replicas (each its own process, with its own short cache of verified
 * tokens), auth and config over NATS with Redis as the cacher: a token revoked through one
 * replica is refused by the other on the very next request, and a token that expires is refused
 * by both at its expiry, whatever they cached.
 */
import { Client } from "pg";
import { ADMIN, type HttpClient, type RequestOptions } from "../helpers/node";
import { ServiceProcess, pollUntil, startApiReplica, startCluster, type Cluster } from "../helpers/cluster";

let cluster: Cluster;
let second: ServiceProcess;
/** The second api replica's own address. */
let other: HttpClient;

beforeAll(async () => {
  cluster = await startCluster({ processes: [["api"], ["auth"], ["config"]] });
  ({ process: second, http: other } = await startApiReplica(cluster, "/_config/users/_list"));
}, 120_000);

afterAll(async () => {
  await second?.stop();
  await cluster?.stop();
}, 60_000);

const bearer = (token: string): RequestOptions => ({ auth: null, headers: { authorization: `Bearer ${token}` } });
const refused = { status: 401, body: { error: { status: 401, message: "Invalid credentials" } } };

async function issue(scope: "read" | "write"): Promise<{ token_id: string; token: string }> {
  const res = await cluster.http<{ token_id: string; token: string }>("POST", `/_config/users/${ADMIN.username}/tokens`, {
    body: { name: `replicas ${scope}`, scope, expires_in_days: 1 },
  });
  expect(res.status).toBe(200);
  return res.body;
}

/**
 * One round: a token verified (and cached) by both replicas, revoked through the first; whether
 * the second refused it on the very next request.
 */
async function revokedSeenAtOnce(): Promise<boolean> {
  const { token, token_id } = await issue("read");
  for (const replica of [cluster.http, other, cluster.http, other]) expect((await replica("GET", "/_config/sites/_list", bearer(token))).status).toBe(200);
  expect(await cluster.http("DELETE", `/_config/users/${ADMIN.username}/tokens/${token_id}`)).toMatchObject({ status: 200, body: "Token revoked" });
  const next = await other("GET", "/_config/sites/_list", bearer(token));
  return next.status === 401;
}

it("a token revoked through one replica is refused by the other on the next request", async () => {
  // A replica that has just started answers before the others have its list of events (Moleculer
  // announces a node's services a moment later, debounced): until then no broadcast reaches it.
  await pollUntil(revokedSeenAtOnce, 20_000, "auth to know the second replica's listeners", [second]);
  for (let round = 0; round < 5; round++) expect(await revokedSeenAtOnce()).toBe(true);
}, 60_000);

it("a read token's change is refused by either replica; a token that expires while cached is refused by both", async () => {
  const { token, token_id } = await issue("read");
  // Before its first use: a token that expires in a moment, well within the replicas' cache time.
  const db = new Client({ connectionString: cluster.db!.url });
  await db.connect();
  const expiry = Date.now() + 2500;
  try {
    await db.query(`UPDATE auth.tokens SET expires_at = $2 WHERE token_id = $1`, [token_id, expiry]);
  } finally {
    await db.end();
  }
  for (const replica of [cluster.http, other]) {
    expect(await replica("POST", "/_config/plants", { ...bearer(token), body: { plant_name: "x", site_id: "y" } })).toMatchObject({
      status: 403,
      body: { error: { status: 403, message: "Unauthorized operation" } },
    });
    expect((await replica("GET", "/_config/sites/_list", bearer(token))).status).toBe(200);
  }
  await new Promise((r) => setTimeout(r, expiry - Date.now() + 50));
  for (const replica of [cluster.http, other]) expect(await replica("GET", "/_config/sites/_list", bearer(token))).toMatchObject(refused);
}, 60_000);
