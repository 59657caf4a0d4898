/**
 * Fail fast past a dead replica (lib/failfast.ts; docs/operations.md, "Failure modes"): every
 * service in its own process over NATS, three alerting and two pipelines replicas behind one api. A
 * replica killed with SIGKILL says nothing on the bus; it must still be out of the api's rotation
 * within 2 s, reads sent to it must be answered 200 by another replica, a write in flight to it
 * must fail with 503 at once rather than at the 10 s request timeout, and with the last replica of
 * a service gone, calls answer 503 within 2 s instead of hanging.
 *
 * "In flight to the dead replica" is made certain by freezing the replica (SIGSTOP) before the
 * call and killing it while the call waits: a frozen process is alive to NATS, so the call waits
 * for it (nothing may declare a busy node dead); its death is what must be noticed.
 *
 * A bystander broker (no services) asks the api node for its registry (`$node.actions`), which
 * is where "out of the rotation" is read.
 */
import { ServiceBroker, type BrokerOptions } from "moleculer";
import { Client } from "pg";
import { settledWithin } from "../../lib/wait";
import { NATS_URL, pollUntil, startCluster, type Cluster, type ServiceProcess } from "../helpers/cluster";
import type { HttpResult, TestNode } from "../helpers/node";
import { gatewayBody, makePlace, watcherBody, type Place } from "../e2e/alerting-fixtures";
import { createEdge, ingest } from "../e2e/pipelines-fixtures";

/** The bound of the brief: no caller waits longer than this for a node that is gone. */
const LIMIT_MS = 2000;
const REQUEST_TIMEOUT_MS = 10_000;
/** How long a replica stays frozen before it is killed: the api probes it twice meanwhile (failfast.ts: after 500 ms, every 500 ms). */
const FROZEN_MS = 1500;

let cluster: Cluster;
let bystander: ServiceBroker;
let pg: Client;
/** The replicas by process name (`alerting#2`): the cluster's own handle names only the first of each. */
const replicas = new Map<string, ServiceProcess>();
let place: Place;
let gw: { id: string; ingest_key: string };
const figures: Record<string, unknown> = {};

const nodeOf = (name: string) => `${cluster.namespace}-${name}`;
const API_NODE = "api+auth+config";

beforeAll(async () => {
  cluster = await startCluster({
    processes: [["api", "auth", "config"], ["pipelines"], ["alerting"]],
    env: { REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) },
  });
  replicas.set("pipelines", cluster.process("pipelines"));
  replicas.set("alerting", cluster.process("alerting"));
  for (const service of ["pipelines", "alerting", "alerting"]) {
    const p = cluster.addProcess([service]);
    replicas.set(p.name, p);
  }
  bystander = new ServiceBroker({ namespace: cluster.namespace, nodeID: nodeOf("bystander"), transporter: NATS_URL as BrokerOptions["transporter"], logger: false });
  await bystander.start();
  pg = new Client({ connectionString: cluster.db!.url });
  await pg.connect();
  place = await makePlace(cluster.http, "ff");
  gw = await createEdge({ http: cluster.http } as TestNode, gatewayBody(place, "Failfast gateway"));
  // Every replica in the api's rotation before anything is killed.
  const procs = [...replicas.values()];
  await pollUntil(async () => (await rotation("alerting.alerts.list")).length === 3, 60_000, "three alerting replicas in the api's registry", procs);
  await pollUntil(async () => (await rotation("pipelines.ingest.readings")).length === 2, 60_000, "two pipelines replicas in the api's registry", procs);
}, 180_000);

afterAll(async () => {
  console.log(`failfast figures: ${JSON.stringify(figures, null, 2)}`);
  await pg?.end();
  await bystander?.stop();
  await cluster?.stop();
}, 60_000);

/** The nodes the api would send the action to now: available endpoints in its registry. */
async function rotation(action: string): Promise<string[]> {
  const actions = await bystander.call<{ name: string; endpoints?: { nodeID: string; available: boolean }[] }[], { withEndpoints: boolean }>(
    "$node.actions",
    { withEndpoints: true },
    { nodeID: nodeOf(API_NODE) },
  );
  return (actions.find((a) => a.name === action)?.endpoints ?? []).filter((e) => e.available).map((e) => e.nodeID);
}

interface Call {
  start: number;
  end: number;
  status: number;
}

/** `concurrency` callers sending `path` back to back until stopped. */
function readStream(path: string, concurrency: number) {
  let running = true;
  const calls: Call[] = [];
  const loops = Array.from({ length: concurrency }, async () => {
    while (running) {
      const start = Date.now();
      const res = await cluster.http("GET", path).catch(() => ({ status: 0 }));
      calls.push({ start, end: Date.now(), status: res.status });
    }
  });
  return {
    calls,
    answeredSince: (t: number) => calls.filter((c) => c.start >= t).length,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** How long each call still waited from `t` on (calls answered before `t` are left out). */
function waitsAfter(calls: Call[], t: number): number[] {
  return calls.filter((c) => c.end >= t).map((c) => c.end - Math.max(c.start, t));
}

const freeze = (p: ServiceProcess) => process.kill(p.pid!, "SIGSTOP");

/** Sends `send()` until one does not answer within 300 ms: the round robin has given it to the frozen replica. */
async function inFlightToFrozen<T>(send: () => Promise<HttpResult<T>>, answered: HttpResult<T>[]): Promise<{ call: Promise<HttpResult<T>> }> {
  for (let i = 0; i < 4; i++) {
    const call = send();
    // Wrapped: an async function returning the promise itself would wait for it.
    if (!(await settledWithin(call, 300))) return { call };
    answered.push(await call);
  }
  throw new Error("no call reached the frozen replica");
}

/** Kills `p` (SIGKILL) and gives the instant it was sent. */
async function kill(p: ServiceProcess): Promise<number> {
  const at = Date.now();
  await p.stop("SIGKILL");
  return at;
}

const alertsList = () => `/_alerting/alerts/_list?function_id=${place.function_id}&is_hidden=0`;

it("takes a killed alerting replica out of the rotation within 2 s; reads keep answering 200, none waiting 2 s", async () => {
  const victim = replicas.get("alerting#3")!;
  const reads = readStream(alertsList(), 6);
  await pollUntil(async () => reads.answeredSince(0) >= 30, 20_000, "reads before the kill");
  expect(new Set(reads.calls.map((c) => c.status))).toEqual(new Set([200]));
  const killedAt = await kill(victim);
  await pollUntil(async () => !(await rotation("alerting.alerts.list")).includes(nodeOf("alerting#3")), 10_000, "the dead replica out of the rotation");
  const outAfter = Date.now() - killedAt;
  const outAt = Date.now();
  await pollUntil(async () => reads.answeredSince(outAt) >= 60, 20_000, "reads after the replica left");
  await reads.stop();

  const waits = waitsAfter(reads.calls, killedAt);
  const after = reads.calls.filter((c) => c.end >= killedAt);
  figures.alertingKill = {
    outOfRotationMs: outAfter,
    readsAfterKill: after.length,
    maxWaitAfterKillMs: Math.max(...waits),
    heldThenRetried: waits.filter((w) => w > 300).length,
    statuses: countBy(after.map((c) => c.status)),
  };
  expect(outAfter).toBeLessThan(LIMIT_MS);
  expect(after.map((c) => c.status).filter((s) => s !== 200)).toEqual([]);
  expect(Math.max(...waits)).toBeLessThan(LIMIT_MS);
  // The other two still serve.
  expect((await rotation("alerting.alerts.list")).sort()).toEqual([nodeOf("alerting"), nodeOf("alerting#2")]);
}, 60_000);

it("answers a write in flight to a replica that dies with 503 within 2 s, and reads in flight to it with 200 from another", async () => {
  const victim = replicas.get("alerting#2")!;
  const reads = readStream(alertsList(), 4);
  await pollUntil(async () => reads.answeredSince(0) >= 20, 20_000, "reads before the freeze");
  freeze(victim);
  const written: HttpResult<unknown>[] = [];
  const name = (i: number) => `Failfast watch ${i}`;
  let n = 0;
  const write = await inFlightToFrozen(() => cluster.http("POST", "/_alerting/watchers", { body: watcherBody(place, gw.id, { watcher_name: name(n++) }) }), written);
  // Frozen, the replica still holds its NATS socket: the api's probes go unanswered, which proves
  // nothing, so it stays in the rotation and the write waits (a busy node is not a dead one).
  expect(await settledWithin(write.call, FROZEN_MS)).toBe(false);
  expect(await rotation("alerting.alerts.list")).toContain(nodeOf("alerting#2"));
  const killedAt = await kill(victim);
  const answer = await write.call;
  const writeWait = Date.now() - killedAt;
  const killedOutAt = Date.now();
  await pollUntil(async () => reads.answeredSince(killedOutAt) >= 40, 20_000, "reads after the kill");
  await reads.stop();

  const waits = waitsAfter(reads.calls, killedAt);
  const after = reads.calls.filter((c) => c.end >= killedAt);
  figures.alertingWriteInFlight = {
    writeStatus: answer.status,
    writeWaitAfterKillMs: writeWait,
    readsAfterKill: after.length,
    maxReadWaitAfterKillMs: Math.max(...waits),
    statuses: countBy(after.map((c) => c.status)),
  };
  expect(answer).toMatchObject({ status: 503, body: { error: { status: 503, message: "Service unavailable" } } });
  expect(writeWait).toBeLessThan(LIMIT_MS);
  expect(after.map((c) => c.status).filter((s) => s !== 200)).toEqual([]);
  expect(Math.max(...waits)).toBeLessThan(LIMIT_MS);

  // The refused write was not applied by anyone; those answered 200 were.
  const listed = await cluster.http<{ watcher_name: string }[]>("GET", `/_alerting/watchers/_list?function_id=${place.function_id}`);
  expect(listed.status).toBe(200);
  expect(listed.body.map((w) => w.watcher_name).sort()).toEqual(written.map((_, i) => name(i)).sort());
  expect(written.every((w) => w.status === 200)).toBe(true);
}, 60_000);

it("sends keyed readings in flight to a pipelines replica that dies to the other, stored once", async () => {
  const victim = replicas.get("pipelines#2")!;
  freeze(victim);
  const ts = Date.now() - 60_000;
  const answered: HttpResult<{ accepted: number }>[] = [];
  let i = 0;
  const send = () => {
    const n = i++;
    return cluster.http<{ accepted: number }>("POST", `/_ingest/pipelines/${gw.id}/readings`, {
      auth: null,
      headers: { authorization: `Bearer ${gw.ingest_key}`, "idempotency-key": `failfast-${n}` },
      body: { readings: [{ monitor_id: place.monitor_id, tag_id: "temp", ts: ts + n, value: 20 + n }] },
    });
  };
  const keyed = await inFlightToFrozen(send, answered);
  const killedAt = await kill(victim);
  const answer = await keyed.call;
  const wait = Date.now() - killedAt;
  figures.keyedIngestInFlight = { status: answer.status, waitAfterKillMs: wait };
  expect(answer).toMatchObject({ status: 200, body: { accepted: 1 } });
  expect(wait).toBeLessThan(LIMIT_MS);
  const stored = await pg.query(`SELECT count(*)::int AS n FROM pipelines.readings WHERE pipeline_id = $1`, [gw.id]);
  expect(stored.rows[0].n).toBe(answered.length + 1);
}, 60_000);

it("answers 503 within 2 s, instead of hanging, once the last pipelines replica is killed", async () => {
  const victim = cluster.process("pipelines");
  const reads = readStream(`/_config/pipelines/_list?function_id=${place.function_id}`, 4);
  await pollUntil(async () => reads.answeredSince(0) >= 20, 20_000, "reads before the kill");
  expect(new Set(reads.calls.map((c) => c.status))).toEqual(new Set([200]));
  freeze(victim);
  const answered: HttpResult<unknown>[] = [];
  // A heartbeat carries no key: it is not sent again, it fails.
  const heartbeat = await inFlightToFrozen(
    () => ingest({ http: cluster.http } as TestNode, "POST", `/_ingest/pipelines/${gw.id}/heartbeat`, gw.ingest_key, {}),
    answered,
  );
  const killedAt = await kill(victim);
  const hb = await heartbeat.call;
  const hbWait = Date.now() - killedAt;
  const killedOutAt = Date.now();
  await pollUntil(async () => reads.answeredSince(killedOutAt) >= 20, 20_000, "reads after the kill");
  await reads.stop();

  const waits = waitsAfter(reads.calls, killedAt);
  const after = reads.calls.filter((c) => c.start >= killedAt);
  figures.lastPipelinesKill = {
    heartbeatStatus: hb.status,
    heartbeatWaitAfterKillMs: hbWait,
    readsAfterKill: after.length,
    maxReadWaitAfterKillMs: Math.max(...waits),
    statuses: countBy(after.map((c) => c.status)),
  };
  expect(hb).toMatchObject({ status: 503, body: { error: { status: 503, message: "Service unavailable" } } });
  expect(hbWait).toBeLessThan(LIMIT_MS);
  expect(Math.max(...waits)).toBeLessThan(LIMIT_MS);
  expect(new Set(after.map((c) => c.status))).toEqual(new Set([503]));
}, 60_000);

function countBy(values: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
