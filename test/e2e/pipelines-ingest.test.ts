/**
 * The ingestion API (contract): keys, readings accepted and rejected per item, durability in the
 * partitioned table, waveforms, heartbeats, and the action lifecycle with a gateway acking and
 * with a timeout.
 */
import { Client } from "pg";
import { RAW_READINGS_ONLY, startTestNode, type TestNode } from "../helpers/node";
import { createEdge, edgeBody, err, eventually, hierarchy, ingest, MISSING, type Hierarchy } from "./pipelines-fixtures";

let t: TestNode;
let h: Hierarchy;
let gw: { id: string; ingest_key: string };
let pg: Client;

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "pipelines"], env: { ...RAW_READINGS_ONLY, PIPELINE_ACTION_TIMEOUT_MS: "1500" } });
  pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  h = await hierarchy(t, "Ing");
  gw = await createEdge(t, edgeBody(h, [h.pump.id, h.fan.id]));
});
afterAll(async () => {
  await pg?.end();
  await t?.stop();
});

const readingsPath = () => `/_ingest/pipelines/${gw.id}/readings`;

describe("ingest keys", () => {
  it("answers create with the id and a key shown once, stored only as a hash", async () => {
    expect(gw.ingest_key).toMatch(/^pk_[A-Za-z0-9_-]{43}$/);
    const rows = await pg.query(`SELECT encode(ingest_key_hash, 'hex') AS h FROM pipelines.pipelines WHERE pipeline_id = $1`, [gw.id]);
    expect(rows.rows[0].h).toHaveLength(64);
    expect(JSON.stringify(rows.rows)).not.toContain(gw.ingest_key);
    const fetched = await t.http("GET", `/_config/pipelines/edge-server/${gw.id}`);
    expect(JSON.stringify(fetched.body)).not.toContain(gw.ingest_key);
  });

  it("refuses a missing key, a wrong key and another pipeline's key with 401", async () => {
    const body = { readings: [] };
    for (const key of [null, "pk_wrong", "not a bearer"]) {
      const res = await ingest(t, "POST", readingsPath(), key, body);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(err(401, "Invalid ingest key"));
    }
    const other = await createEdge(t, edgeBody(h, []));
    const res = await ingest(t, "POST", readingsPath(), other.ingest_key, body);
    expect(res.body).toEqual(err(401, "Invalid ingest key"));
    const own = await ingest(t, "POST", `/_ingest/pipelines/${other.id}/readings`, other.ingest_key, body);
    expect(own.body).toEqual({ accepted: 0, rejected: [] });
  });
});

describe("readings", () => {
  it("keeps the mapped readings and rejects each other one with its reason", async () => {
    const now = Date.now();
    const res = await ingest(t, "POST", readingsPath(), gw.ingest_key, {
      readings: [
        { monitor_id: h.pump.id, tag_id: "pressure", ts: now, value: 4.2 },
        { monitor_id: h.meter.id, tag_id: "kwh", ts: now, value: 1 },
        { monitor_id: h.pump.id, tag_id: "vib", ts: now, value: 1 },
        { monitor_id: h.fan.id, tag_id: "vib", ts: now - 1000, value: 2.5 },
        { monitor_id: h.pump.id, tag_id: "flow", ts: "yesterday", value: 1 },
        { monitor_id: h.pump.id, tag_id: "flow", ts: now },
        { monitor_id: h.pump.id, tag_id: "flow", ts: now, value: 1, extra: true },
        { monitor_id: "nope", tag_id: "flow", ts: now, value: 1 },
        { monitor_id: h.pump.id, tag_id: "flow", ts: now - 200 * 86400000, value: 1 },
        { monitor_id: h.pump.id, tag_id: "flow", ts: now + 3 * 86400000, value: 1 },
        42,
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      accepted: 2,
      rejected: [
        { index: 1, reason: "Monitor not mapped to this pipeline" },
        { index: 2, reason: "Tag not mapped to this monitor" },
        { index: 4, reason: "Invalid input: ts" },
        { index: 5, reason: "Insufficient input: value" },
        { index: 6, reason: "Invalid input key" },
        { index: 7, reason: "Invalid input: monitor_id" },
        { index: 8, reason: "Reading older than the site's retention period" },
        { index: 9, reason: "Reading time is in the future" },
        { index: 10, reason: "Invalid input: reading" },
      ],
    });
    const stored = await pg.query(
      `SELECT monitor_id, tag_id, value, (extract(epoch from ts) * 1000)::bigint AS ts FROM pipelines.readings WHERE pipeline_id = $1 ORDER BY idx`,
      [gw.id],
    );
    expect(stored.rows).toEqual([
      { monitor_id: h.pump.id, tag_id: "pressure", value: 4.2, ts: String(now) },
      { monitor_id: h.fan.id, tag_id: "vib", value: 2.5, ts: String(now - 1000) },
    ]);
  });

  it("stores a batch of 10,000 in the day partitions and counts the events in the list", async () => {
    const start = Date.now() - 3 * 86400000;
    const readings = Array.from({ length: 10000 }, (_, i) => ({ monitor_id: h.pump.id, tag_id: "flow", ts: start + i * 30000, value: i }));
    const res = await ingest(t, "POST", readingsPath(), gw.ingest_key, { readings });
    expect(res.body).toEqual({ accepted: 10000, rejected: [] });
    const parts = await pg.query(
      `SELECT c.relname AS name, count(*)::int AS n FROM pipelines.readings r JOIN pg_class c ON c.oid = r.tableoid
        WHERE r.pipeline_id = $1 AND r.tag_id = 'flow' GROUP BY c.relname ORDER BY c.relname`,
      [gw.id],
    );
    expect(parts.rows.length).toBeGreaterThanOrEqual(4);
    expect(parts.rows.reduce((s: number, r: { n: number }) => s + r.n, 0)).toBe(10000);
    const list = await t.http<Record<string, unknown>[]>("GET", `/_config/pipelines/_list?function_id=${h.fn}`);
    const item = list.body.find((p) => p.pipeline_id === gw.id);
    expect(item?.total_events).toBe(10002);
    expect(item?.latest_event).toEqual(readings.slice(-5));
  });

  it("counts every event of requests sent at once (the counter's stripes add up) and shows the last request's latest", async () => {
    const before = (await t.http<Record<string, unknown>[]>("GET", `/_config/pipelines/_list?function_id=${h.fn}`)).body.find((p) => p.pipeline_id === gw.id);
    const start = Date.now() - 3600_000;
    const batch = (k: number) => Array.from({ length: 100 }, (_, i) => ({ monitor_id: h.pump.id, tag_id: "flow", ts: start + k * 1000 + i, value: k * 1000 + i }));
    const answers = await Promise.all(Array.from({ length: 12 }, (_, k) => ingest(t, "POST", readingsPath(), gw.ingest_key, { readings: batch(k) })));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    const last = batch(99);
    expect((await ingest(t, "POST", readingsPath(), gw.ingest_key, { readings: last })).status).toBe(200);
    const list = await t.http<Record<string, unknown>[]>("GET", `/_config/pipelines/_list?function_id=${h.fn}`);
    const item = list.body.find((p) => p.pipeline_id === gw.id);
    expect(item?.total_events).toBe(Number(before?.total_events) + 1300);
    expect(item?.latest_event).toEqual(last.slice(-5));
  });

  it("refuses more than 10,000 readings in one request", async () => {
    const readings = Array.from({ length: 10001 }, () => ({ monitor_id: h.pump.id, tag_id: "flow", ts: Date.now(), value: 1 }));
    const res = await ingest(t, "POST", readingsPath(), gw.ingest_key, { readings });
    expect(res.body).toEqual(err(400, "Too many readings: at most 10000 a request"));
    // A value that is no list is not "too many".
    for (const bad of ["abc", {}]) {
      expect((await ingest(t, "POST", readingsPath(), gw.ingest_key, { readings: bad })).body).toEqual(err(400, "Invalid input: readings"));
    }
  });
});

describe("waveforms and heartbeats", () => {
  it("stores a capture of a mapped monitor and refuses one of another monitor", async () => {
    const samples = Array.from({ length: 1024 }, (_, i) => Math.sin((2 * Math.PI * 25 * i) / 1024));
    const ok = await ingest<{ id: string }>(t, "POST", `/_ingest/pipelines/${gw.id}/waveforms`, gw.ingest_key, {
      monitor_id: h.fan.id,
      tag: "vibration",
      axis: "x",
      ts: Date.now(),
      sample_rate_hz: 1024,
      samples,
    });
    expect(ok.status).toBe(200);
    const row = await pg.query(`SELECT array_length(samples, 1) AS n, axis FROM pipelines.waveforms WHERE waveform_id = $1`, [ok.body.id]);
    expect(row.rows[0]).toEqual({ n: 1024, axis: "x" });
    const bad = await ingest(t, "POST", `/_ingest/pipelines/${gw.id}/waveforms`, gw.ingest_key, {
      monitor_id: h.meter.id,
      tag: "vibration",
      axis: "x",
      ts: Date.now(),
      sample_rate_hz: 1024,
      samples,
    });
    expect(bad.body).toEqual(err(400, "Monitor not mapped to this pipeline"));
    const axis = await ingest(t, "POST", `/_ingest/pipelines/${gw.id}/waveforms`, gw.ingest_key, {
      monitor_id: h.fan.id,
      tag: "vibration",
      axis: "w",
      ts: Date.now(),
      sample_rate_hz: 1024,
      samples,
    });
    expect(axis.body).toEqual(err(400, "Invalid input: axis"));
    // Times beyond what PostgreSQL's bigint or a JS Date holds are bad input, and so is a clock a day ahead.
    const at = (ts: number) =>
      ingest(t, "POST", `/_ingest/pipelines/${gw.id}/waveforms`, gw.ingest_key, { monitor_id: h.fan.id, tag: "vibration", axis: "x", ts, sample_rate_hz: 1024, samples });
    expect((await at(1e308)).body).toEqual(err(400, "Invalid input: ts"));
    expect((await at(1e17)).body).toEqual(err(400, "Invalid input: ts"));
    expect((await at(Date.now() + 2 * 86_400_000)).body).toEqual(err(400, "Waveform time is in the future"));
  });

  it("refuses a heartbeat time no clock could give", async () => {
    const beat = (ts: number) => ingest(t, "POST", `/_ingest/pipelines/${gw.id}/heartbeat`, gw.ingest_key, { component: "gateway", ts });
    expect((await beat(1e20)).body).toEqual(err(400, "Invalid input: ts"));
    expect((await beat(Date.now() + 2 * 86_400_000)).body).toEqual(err(400, "Heartbeat time is in the future"));
  });

  it("records each component's heartbeat and shows them in the list", async () => {
    const ts = Date.now();
    for (const component of ["gateway", "producer"]) {
      const res = await ingest(t, "POST", `/_ingest/pipelines/${gw.id}/heartbeat`, gw.ingest_key, { component, ts });
      expect(res.body).toBe("Heartbeat recorded");
    }
    const bad = await ingest(t, "POST", `/_ingest/pipelines/${gw.id}/heartbeat`, gw.ingest_key, { component: "toaster", ts });
    expect(bad.body).toEqual(err(400, "Invalid input: component"));
    const list = await t.http<Record<string, unknown>[]>("GET", `/_config/pipelines/_list?function_id=${h.fn}`);
    expect(list.body.find((p) => p.pipeline_id === gw.id)?.heart_beats).toEqual({ log_parser: null, producer: ts, gateway: ts, stasher: null });
    // A late or replayed heartbeat does not move "last heard" back.
    expect((await ingest(t, "POST", `/_ingest/pipelines/${gw.id}/heartbeat`, gw.ingest_key, { component: "gateway", ts: 0 })).body).toBe("Heartbeat recorded");
    const after = await t.http<Record<string, unknown>[]>("GET", `/_config/pipelines/_list?function_id=${h.fn}`);
    expect(after.body.find((p) => p.pipeline_id === gw.id)?.heart_beats).toMatchObject({ gateway: ts });
  });
});

describe("actions (op 56 and the gateway's side)", () => {
  const status = async (id: string) => {
    const list = await t.http<{ pipeline_id: string; status: string; last_actions: Record<string, unknown>[] }[]>(
      "GET",
      `/_config/pipelines/_list?function_id=${h.fn}`,
    );
    return list.body.find((p) => p.pipeline_id === id) ?? { status: "missing", last_actions: [] };
  };

  it("start: stopped → starting, the gateway polls and acks, → running; stop likewise → stopped", async () => {
    expect((await status(gw.id)).status).toBe("stopped");
    const queued = await t.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: "start" } });
    expect(queued.status).toBe(200);
    expect(queued.body).toBe("Action is being queued");
    const p = await status(gw.id);
    expect(p.status).toBe("starting");
    expect(p.last_actions[0]).toMatchObject({ action: "start", status: "in_progress", completed_at: null });

    const pending = await ingest<{ action_id: string; action: string; status: string }[]>(t, "GET", `/_ingest/pipelines/${gw.id}/actions`, gw.ingest_key);
    expect(pending.body).toHaveLength(1);
    expect(pending.body[0]).toMatchObject({ action: "start", status: "in_progress" });
    const ack = await ingest(t, "POST", `/_ingest/pipelines/${gw.id}/actions/${pending.body[0].action_id}`, gw.ingest_key, { status: "completed" });
    expect(ack.body).toBe("Action acknowledged");
    const running = await status(gw.id);
    expect(running.status).toBe("running");
    expect(running.last_actions[0]).toMatchObject({ action_id: pending.body[0].action_id, status: "completed" });
    expect(typeof running.last_actions[0].completed_at).toBe("number");
    const again = await ingest(t, "POST", `/_ingest/pipelines/${gw.id}/actions/${pending.body[0].action_id}`, gw.ingest_key, { status: "completed" });
    expect(again.body).toEqual(err(409, "Action is not in progress"));

    await t.http("POST", "/_config/pipelines/_action", { body: { id: [gw.id], action: "stop" } });
    expect((await status(gw.id)).status).toBe("stopping");
    const stop = await ingest<{ action_id: string }[]>(t, "GET", `/_ingest/pipelines/${gw.id}/actions`, gw.ingest_key);
    await ingest(t, "POST", `/_ingest/pipelines/${gw.id}/actions/${stop.body[0].action_id}`, gw.ingest_key, { status: "completed" });
    expect((await status(gw.id)).status).toBe("stopped");
    const count = await t.http("GET", `/_config/pipelines/_count?function_id=${h.fn}&status=stop`);
    expect(count.body).toBeGreaterThanOrEqual(1);
  });

  it("no ack within PIPELINE_ACTION_TIMEOUT_MS: the action fails and the pipeline goes to error, once", async () => {
    const other = await createEdge(t, edgeBody(h, []));
    await t.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [other.id], action: "start" } });
    const p = await eventually(() => status(other.id), (s) => s.status === "error", 100, 100);
    expect(p.status).toBe("error");
    expect(p.last_actions[0]).toMatchObject({ action: "start", status: "failed" });
    // A second sweep (another replica) finds nothing left to fail.
    expect(await t.node.broker.call("pipelines.actions.sweep")).toEqual([]);
    const pending = await ingest(t, "GET", `/_ingest/pipelines/${other.id}/actions`, other.ingest_key);
    expect(pending.body).toEqual([]);
  });

  it("refuses an unknown pipeline with Invalid Gateway ID and queues nothing", async () => {
    const res = await t.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id, MISSING], action: "start" } });
    expect(res.body).toEqual(err(400, `Invalid Gateway ID: ${MISSING}`));
    expect((await status(gw.id)).status).toBe("stopped");
    const bad = await t.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: "restart" } });
    expect(bad.body).toEqual(err(400, "Invalid input: action"));
    // No pipeline named: the required list is missing, whichever key carries it.
    for (const body of [{ action: "start" }, { pipeline_id: [], action: "start" }, { id: [], action: "stop" }]) {
      expect((await t.http("POST", "/_config/pipelines/_action", { body })).body).toEqual(err(400, "Insufficient inputs"));
    }
  });

  it("queues twenty starts and stops sent at once, one after another: one pending action at the end", async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: i % 2 ? "stop" : "start" } }),
      ),
    );
    expect(answers.map((a) => a.body)).toEqual(Array(20).fill("Action is being queued"));
    const pending = await ingest<unknown[]>(t, "GET", `/_ingest/pipelines/${gw.id}/actions`, gw.ingest_key);
    expect(pending.body).toHaveLength(1);
  });
});
