/**
 * The audit trail across processes (NATS JetStream, Redis, PostgreSQL): auth and config stage
 * their entries in their own transactions, the `audit` stream carries them, and two config
 * replicas append them to one chain. Many changes at once still make one line (ids 1..n, each
 * naming the hash of the one before, each entry once); changes made while every config replica
 * is down reach the log when one comes back.
 */
import { ServiceBroker, type BrokerOptions } from "moleculer";
import { Client } from "pg";
import { NATS_URL, pollUntil, startCluster, type Cluster, type ServiceProcess } from "../helpers/cluster";

let cluster: Cluster;
let secondConfig: ServiceProcess;
/** A broker of the test's own on the cluster's bus: it sees which config replicas are up. */
let observer: ServiceBroker;

async function sql<T = Record<string, unknown>>(text: string): Promise<T[]> {
  const c = new Client({ connectionString: cluster.db!.url });
  await c.connect();
  try {
    return (await c.query(text)).rows as T[];
  } finally {
    await c.end();
  }
}

const entries = async (): Promise<number> => (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM config.audit_log`))[0]!.n;

async function created(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await cluster.http<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** Runs `n` tasks, `width` at a time. */
async function inParallel(n: number, width: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

beforeAll(async () => {
  cluster = await startCluster({ processes: [["api"], ["auth"], ["config"]] });
  secondConfig = cluster.addProcess(["config"]);
  observer = new ServiceBroker({ namespace: cluster.namespace, nodeID: `${cluster.namespace}-observer`, transporter: NATS_URL as BrokerOptions["transporter"], logger: false });
  await observer.start();
}, 120_000);

afterAll(async () => {
  await observer?.stop();
  await cluster?.stop();
}, 60_000);

it("appends many changes made at once, through two config replicas, as one chain", async () => {
  const site = await created("/_config/sites", { site_name: "Chain Site", location: "x", timezone: "UTC", latitude: "1", edge_firmware: {} });
  const plant = await created("/_config/plants", { plant_name: "Chain Plant", site_id: site });
  const fn = await created("/_config/functions", { function_name: "Chain Function", plant_id: plant });
  // Both replicas up: the gateway's round robin sends writes to each, and each reads the stream.
  const configReplicas = () => observer.registry.getServiceList({ onlyAvailable: true }).filter((s) => s.name === "config").length;
  await pollUntil(async () => configReplicas() === 2, 90_000, "the second config replica", [secondConfig]);
  await inParallel(120, 24, (i) => created("/_config/assets", { asset_name: `Chain asset ${i}`, function_id: fn, asset_category: "Motor" }));
  await inParallel(20, 10, (i) => cluster.http("GET", "/_config/sites/_list", { auth: { username: `guess${i}@example.com`, password: "not-it" } }));
  const expected = 3 + 120 + 20;
  await pollUntil(async () => (await entries()) >= expected, 60_000, `${expected} audit entries`, [cluster.process("config"), secondConfig]);
  expect(await entries()).toBe(expected);

  const rows = await sql<{ id: string; prev_hash: string; hash: string; entry_id: string }>(`SELECT id, prev_hash, hash, entry_id FROM config.audit_log ORDER BY id`);
  expect(rows.map((r) => Number(r.id))).toEqual(Array.from({ length: expected }, (_, i) => i + 1));
  for (let i = 1; i < rows.length; i++) expect(rows[i]!.prev_hash).toBe(rows[i - 1]!.hash);
  expect(new Set(rows.map((r) => r.entry_id)).size).toBe(expected);
  expect((await cluster.http("GET", "/_config/audit/_verify")).body).toEqual({ ok: true, entries: expected, first_bad_id: null });
}, 120_000);

it("takes the changes made while no config replica ran once one is back", async () => {
  const before = await entries();
  await Promise.all([cluster.process("config").stop(), secondConfig.stop()]);
  // Auth's own changes need no config: a support analyst has no place, a failed sign-in none either.
  for (let i = 0; i < 5; i++) {
    const res = await cluster.http("POST", "/_config/users", {
      body: { username: `offline${i}@example.com`, mobile_number: "5550100", country_code: "+1", user_type: "support-analyst", password: "Offline-Pass-123" },
    });
    expect(res.status).toBe(200);
  }
  // On a route of auth's: one of config's would answer 503 before asking who calls.
  expect((await cluster.http("GET", "/_config/users/_list", { auth: { username: "offline0@example.com", password: "wrong" } })).status).toBe(401);
  expect(await entries()).toBe(before);
  cluster.process("config").start();
  await pollUntil(async () => (await entries()) >= before + 6, 90_000, "the entries made while config was down", [cluster.process("config")]);
  const actions = await sql<{ action: string; entity_id: string }>(`SELECT action, entity_id FROM config.audit_log WHERE id > ${before} ORDER BY id`);
  expect(actions.map((a) => a.action).sort()).toEqual(["create", "create", "create", "create", "create", "sign_in_failure"]);
  const verify = () => cluster.http("GET", "/_config/audit/_verify");
  await pollUntil(async () => (await verify()).status === 200, 60_000, "config's routes at the gateway", [cluster.process("config")]);
  expect((await verify()).body).toEqual({ ok: true, entries: before + 6, first_bad_id: null });
}, 180_000);
