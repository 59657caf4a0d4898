/**
 * Idempotent ingestion (docs/api-tour.md, "Retries"): the `Idempotency-Key` header on readings and
 * waveforms. A repeat answers what the first answered and stores nothing again, also when the first
 * was committed but never answered; another body under the key is 422; a repeat while the first is
 * in its transaction is 409; a bad key is 400; without the header nothing changes; keys are per
 * pipeline and purged after 24 h. Counted in SQL, against a real node.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Client } from "pg";
import PipelinesService from "../../services/pipelines/pipelines.service";
import type { PipelinesThis } from "../../services/pipelines/pipelines.types";
import { startTestNode, type HttpResult, type TestNode } from "../helpers/node";
import { createEdge, edgeBody, err, eventually, hierarchy, type Hierarchy } from "./pipelines-fixtures";

let t: TestNode;
let h: Hierarchy;
let gw: { id: string; ingest_key: string };
let pg: Client;
let sim: ChildProcess | undefined;
let proxy: http.Server | undefined;

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "pipelines"] });
  pg = new Client({ connectionString: t.db.url });
  await pg.connect();
  h = await hierarchy(t, "Idem");
  gw = await createEdge(t, edgeBody(h, [h.pump.id, h.fan.id]));
});
afterAll(async () => {
  sim?.kill("SIGKILL");
  proxy?.close();
  await pg?.end();
  await t?.stop();
});

type IngestAnswer = { accepted: number; rejected: { index: number; reason: string }[] };

let seq = 0;
/** A distinct key per test step, as a gateway makes one per batch. */
const newKey = () => `gw-${process.pid}-${++seq}-${Date.now()}`;

/** `n` readings of the pump's pressure, with values that tell batches apart, and one rejected item. */
function batch(n: number, tag = seq): { readings: unknown[] } {
  const ts = Date.now();
  const readings: unknown[] = Array.from({ length: n }, (_, i) => ({ monitor_id: h.pump.id, tag_id: "pressure", ts: ts - i, value: tag * 1000 + i }));
  readings.push({ monitor_id: h.pump.id, tag_id: "not-mapped", ts, value: 1 });
  return { readings };
}

function send<T = IngestAnswer>(path: string, body: unknown, key?: string, gateway = gw): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { authorization: `Bearer ${gateway.ingest_key}` };
  if (key !== undefined) headers["idempotency-key"] = key;
  return t.http<T>("POST", path, { body, auth: null, headers });
}
const readings = (gateway = gw) => `/_ingest/pipelines/${gateway.id}/readings`;
const waveforms = (gateway = gw) => `/_ingest/pipelines/${gateway.id}/waveforms`;

async function stored(gateway = gw): Promise<number> {
  const res = await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM pipelines.readings WHERE pipeline_id = $1`, [gateway.id]);
  return res.rows[0]!.n;
}
async function events(gateway = gw): Promise<number> {
  const res = await pg.query<{ n: string }>(`SELECT coalesce(sum(total_events), 0) AS n FROM pipelines.pipeline_events WHERE pipeline_id = $1`, [gateway.id]);
  return Number(res.rows[0]!.n);
}
async function captures(gateway = gw): Promise<number> {
  const res = await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM pipelines.waveforms WHERE pipeline_id = $1`, [gateway.id]);
  return res.rows[0]!.n;
}

/**
 * Holds a lock on a table that every store writes, so that a request stops inside its
 * transaction (after claiming its key) until `release`: "the first is still being processed".
 */
async function blockStores(table: "readings" | "waveforms") {
  const blocker = new Client({ connectionString: t.db.url });
  await blocker.connect();
  await blocker.query("BEGIN");
  await blocker.query(`LOCK TABLE pipelines.${table} IN SHARE MODE`);
  const waiting = async () =>
    (await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0]!.n;
  return {
    /** Until a request waits on the lock: it is inside its transaction. */
    async blocked(): Promise<void> {
      expect(await eventually(waiting, (n) => n >= 1, 200, 25)).toBeGreaterThanOrEqual(1);
    },
    async release(): Promise<void> {
      await blocker.query("COMMIT");
      await blocker.end();
    },
  };
}

describe("readings with an Idempotency-Key", () => {
  it("answers a repeat with the same body as the first, says it is a replay, and stores the readings once", async () => {
    const key = newKey();
    const body = batch(50);
    const [count0, events0] = [await stored(), await events()];
    const first = await send(readings(), body, key);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ accepted: 50, rejected: [{ index: 50, reason: "Tag not mapped to this monitor" }] });
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    for (let i = 0; i < 3; i++) {
      const again = await send(readings(), body, key);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
    }
    expect(await stored()).toBe(count0 + 50);
    expect(await events()).toBe(events0 + 50);
  });

  it("answers a batch with nothing to keep again as it was", async () => {
    const key = newKey();
    const body = { readings: [{ monitor_id: h.pump.id, tag_id: "not-mapped", ts: Date.now(), value: 1 }] };
    const first = await send(readings(), body, key);
    expect(first.body).toEqual({ accepted: 0, rejected: [{ index: 0, reason: "Tag not mapped to this monitor" }] });
    const again = await send(readings(), body, key);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  it("refuses the same key with another body (422) and stores nothing of it", async () => {
    const key = newKey();
    await send(readings(), batch(5), key);
    const count = await stored();
    const other = await send(readings(), batch(6, 99), key);
    expect(other.status).toBe(422);
    expect(other.body).toEqual(err(422, "Idempotency key reused with a different body"));
    expect(await stored()).toBe(count);
    // Nor can a readings key serve a capture.
    const capture = await send(waveforms(), { monitor_id: h.fan.id, tag: "vib", axis: "x", ts: Date.now(), sample_rate_hz: 1000, samples: [1, 2] }, key);
    expect(capture.body).toEqual(err(422, "Idempotency key reused with a different body"));
    expect(await captures()).toBe(0);
  });

  it("stores the same body twice without the header, as before", async () => {
    const body = batch(20);
    const count = await stored();
    const one = await send(readings(), body);
    const two = await send(readings(), body);
    expect(one.body).toEqual(two.body);
    expect(two.headers.get("idempotent-replayed")).toBeNull();
    expect(await stored()).toBe(count + 40);
  });

  it("refuses a key that is not 1-255 printable characters with 400, before storing anything", async () => {
    const count = await stored();
    for (const bad of ["", "x".repeat(256), "clé", "tab\there"]) {
      const res = await send(readings(), batch(3), bad);
      expect([bad, res.status]).toEqual([bad, 400]);
      expect(res.body).toEqual(err(400, "Invalid input: Idempotency-Key", "Idempotency-Key"));
    }
    expect(await stored()).toBe(count);
    // The longest and a key with spaces and punctuation are keys.
    for (const good of ["k".repeat(255), "batch 42 / gateway {A}~"]) expect((await send(readings(), batch(1), good)).status).toBe(200);
    expect(await stored()).toBe(count + 2);
  });

  it("answers 409 to a repeat while the first is still being stored, then the first answer; never stores twice", async () => {
    const key = newKey();
    const body = batch(100);
    const count = await stored();
    const block = await blockStores("readings");
    const first = send(readings(), body, key);
    let second: HttpResult<IngestAnswer>;
    try {
      await block.blocked();
      const started = Date.now();
      second = await send(readings(), body, key);
      // At once, not after the first: it holds no connection waiting.
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await block.release();
    }
    expect(second.status).toBe(409);
    expect(second.body).toEqual(err(409, "Request with this Idempotency-Key is in progress"));
    const answered = await first;
    expect(answered.status).toBe(200);
    expect(answered.body.accepted).toBe(100);
    const retried = await send(readings(), body, key);
    expect(retried.body).toEqual(answered.body);
    expect(retried.headers.get("idempotent-replayed")).toBe("true");
    expect(await stored()).toBe(count + 100);
  });

  it("stores a batch once however many requests race with its key", async () => {
    const key = newKey();
    const body = batch(2000);
    const count = await stored();
    const answers = await Promise.all(Array.from({ length: 6 }, () => send(readings(), body, key)));
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const a of ok) expect(a.body).toEqual({ accepted: 2000, rejected: [{ index: 2000, reason: "Tag not mapped to this monitor" }] });
    for (const a of answers.filter((x) => x.status !== 200)) expect(a.body).toEqual(err(409, "Request with this Idempotency-Key is in progress"));
    expect(await stored()).toBe(count + 2000);
  });

  it("stores nothing again for a request committed through the action whose answer never reached the gateway", async () => {
    const key = newKey();
    const text = JSON.stringify(batch(30));
    const count = await stored();
    // As the gateway calls it: the key as sent and sha256 of the raw body.
    const fingerprint = createHash("sha256").update(text).digest("hex");
    const direct = await t.node.broker.call<IngestAnswer, Record<string, unknown>>(
      "pipelines.ingest.readings",
      { pipeline_id: gw.id, ...(JSON.parse(text) as object) },
      { meta: { ingestKey: gw.ingest_key, idempotency: { key, fingerprint } } },
    );
    expect(direct.accepted).toBe(30);
    expect(await stored()).toBe(count + 30);
    const res = await t.http<IngestAnswer>("POST", readings(), {
      rawBody: text,
      auth: null,
      headers: { authorization: `Bearer ${gw.ingest_key}`, "content-type": "application/json", "idempotency-key": key },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(direct);
    expect(res.headers.get("idempotent-replayed")).toBe("true");
    expect(await stored()).toBe(count + 30);
  });

  it("stores nothing again when the client's connection died before its answer (the request was committed)", async () => {
    const key = newKey();
    const text = JSON.stringify(batch(40));
    const count = await stored();
    const block = await blockStores("readings");
    const url = new URL(readings(), t.baseUrl);
    const req = http.request(url, {
      method: "POST",
      headers: { authorization: `Bearer ${gw.ingest_key}`, "content-type": "application/json", "idempotency-key": key, "content-length": Buffer.byteLength(text) },
    });
    let answered = false;
    req.on("response", () => (answered = true));
    req.on("error", () => undefined);
    req.end(text);
    try {
      await block.blocked();
      req.destroy(); // the gateway's socket is gone while its request is in the store's transaction
    } finally {
      await block.release();
    }
    const committed = async () => (await pg.query(`SELECT 1 FROM pipelines.idempotency_keys WHERE pipeline_id = $1 AND key = $2`, [gw.id, key])).rows.length;
    expect(await eventually(committed, (n) => n === 1)).toBe(1);
    expect(answered).toBe(false);
    expect(await stored()).toBe(count + 40);
    const retried = await t.http<IngestAnswer>("POST", readings(), {
      rawBody: text,
      auth: null,
      headers: { authorization: `Bearer ${gw.ingest_key}`, "content-type": "application/json", "idempotency-key": key },
    });
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ accepted: 40, rejected: [{ index: 40, reason: "Tag not mapped to this monitor" }] });
    expect(retried.headers.get("idempotent-replayed")).toBe("true");
    expect(await stored()).toBe(count + 40);
  });

  it("keeps keys per pipeline: the same key on another pipeline is its own", async () => {
    const h2 = await hierarchy(t, "Idem2");
    const gw2 = await createEdge(t, edgeBody(h2, [h2.pump.id]));
    const key = newKey();
    await send(readings(), batch(10), key);
    const body = { readings: [{ monitor_id: h2.pump.id, tag_id: "pressure", ts: Date.now(), value: 7 }] };
    const other = await send(readings(gw2), body, key, gw2);
    expect(other.status).toBe(200);
    expect(other.body).toEqual({ accepted: 1, rejected: [] });
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    expect(await stored(gw2)).toBe(1);
  });

  it("forgets a key after 24 h: a repeat is a new request, and the periodic purge deletes it", async () => {
    const key = newKey();
    const body = batch(4);
    await send(readings(), body, key);
    const count = await stored();
    await pg.query(`UPDATE pipelines.idempotency_keys SET created_at = created_at - 25 * 3600000 WHERE key = $1`, [key]);
    const again = await send(readings(), body, key);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect(await stored()).toBe(count + 4);
    // Recorded anew, and repeated as usual from there.
    expect((await send(readings(), body, key)).headers.get("idempotent-replayed")).toBe("true");

    const old = newKey();
    await send(readings(), batch(1), old);
    await pg.query(`UPDATE pipelines.idempotency_keys SET created_at = created_at - 24 * 3600000 - 1000 WHERE key = $1`, [old]);
    const keys = async () => (await pg.query<{ key: string }>(`SELECT key FROM pipelines.idempotency_keys WHERE key = ANY($1)`, [[key, old]])).rows.map((r) => r.key);
    expect((await keys()).sort()).toEqual([key, old].sort());
    const service = t.node.broker.getLocalService("pipelines") as unknown as PipelinesThis;
    await PipelinesService.jobs.idempotencyKeys!.run.call(service, t.node.broker, Date.now());
    expect(await keys()).toEqual([key]);
  });
});

describe("waveforms with an Idempotency-Key", () => {
  const capture = (axis: "x" | "y" | "z", samples = [0.1, 0.5, -0.2, -0.4]) => ({ monitor_id: h.fan.id, tag: "vib", axis, ts: Date.now(), sample_rate_hz: 2560, samples });

  it("stores a capture once and answers its id again; another body is 422; without the header twice is twice", async () => {
    const key = newKey();
    const body = capture("x");
    const count = await captures();
    const first = await send<{ id: string }>(waveforms(), body, key);
    expect(first.status).toBe(200);
    const again = await send<{ id: string }>(waveforms(), body, key);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await captures()).toBe(count + 1);
    const rows = await pg.query(`SELECT waveform_id FROM pipelines.waveforms WHERE pipeline_id = $1 AND axis = 'x'`, [gw.id]);
    expect(rows.rows.map((r: { waveform_id: string }) => r.waveform_id)).toContain(first.body.id);

    const other = await send(waveforms(), capture("y"), key);
    expect(other.body).toEqual(err(422, "Idempotency key reused with a different body"));
    expect(await captures()).toBe(count + 1);

    const plain = capture("z");
    const one = await send<{ id: string }>(waveforms(), plain);
    const two = await send<{ id: string }>(waveforms(), plain);
    expect(one.body.id).not.toBe(two.body.id);
    expect(await captures()).toBe(count + 3);
  });

  it("answers 409 while the first capture is being stored, and a bad key 400", async () => {
    const key = newKey();
    const body = capture("x", [1, 2, 3]);
    const count = await captures();
    const block = await blockStores("waveforms");
    const first = send<{ id: string }>(waveforms(), body, key);
    let second: HttpResult;
    try {
      await block.blocked();
      second = await send(waveforms(), body, key);
    } finally {
      await block.release();
    }
    expect(second.body).toEqual(err(409, "Request with this Idempotency-Key is in progress"));
    expect((await first).status).toBe(200);
    expect(await captures()).toBe(count + 1);
    const bad = await send(waveforms(), body, "x".repeat(300));
    expect(bad.body).toEqual(err(400, "Invalid input: Idempotency-Key", "Idempotency-Key"));
  });
});

describe("the documents", () => {
  it("show the optional header and its answers on both routes in /openapi.json", async () => {
    type Op = { parameters?: { name: string; in: string; required: boolean; schema: { description?: string } }[]; responses: Record<string, unknown> };
    const doc = await t.http<{ paths: Record<string, Record<string, Op>> }>("GET", "/openapi.json", { auth: null });
    for (const path of ["/_ingest/pipelines/{pipeline_id}/readings", "/_ingest/pipelines/{pipeline_id}/waveforms"]) {
      const op = doc.body.paths[path]!.post!;
      const header = op.parameters?.find((p) => p.name === "Idempotency-Key");
      expect(header).toMatchObject({ in: "header", required: false });
      expect(header?.schema.description).toMatch(/24 h/);
      expect(JSON.stringify(op.responses["409"])).toContain("Request with this Idempotency-Key is in progress");
      expect(JSON.stringify(op.responses["422"])).toContain("Idempotency key reused with a different body");
    }
  });
});

describe("the simulator", () => {
  it("sends a key with each batch and capture, and one whose answer was lost again with the same key: stored once", async () => {
    const b = await hierarchy(t, "IdemSim");
    const sgw = await createEdge(t, edgeBody(b, [b.pump.id, b.fan.id, b.meter.id], { function_enabled_in_registration: true }));
    // Between the simulator and the node: forwards every request, and drops the answer of the
    // first readings send and of the first capture after the node has stored them.
    const sent: { kind: string; key: string | undefined; dropped: boolean }[] = [];
    proxy = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        void (async () => {
          const body = Buffer.concat(chunks);
          const headers: Record<string, string> = {};
          for (const name of ["authorization", "content-type", "idempotency-key"]) if (typeof req.headers[name] === "string") headers[name] = req.headers[name];
          const upstream = await fetch(t.baseUrl + req.url, { method: req.method, headers, body: body.length ? body : undefined });
          const answer = Buffer.from(await upstream.arrayBuffer());
          const kind = /\/(readings|waveforms)$/.exec(req.url ?? "")?.[1];
          const dropped = kind !== undefined && upstream.status === 200 && !sent.some((x) => x.kind === kind && x.dropped);
          if (kind) sent.push({ kind, key: headers["idempotency-key"], dropped });
          if (dropped) return req.socket.destroy();
          res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" });
          res.end(answer);
        })();
      });
    });
    await new Promise<void>((resolve) => proxy!.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    let out = "";
    sim = spawn(process.execPath, ["--import", "tsx", "scripts/simulate.ts", "--pipeline", sgw.id, "--key", sgw.ingest_key, "--url", url, "--backfill", "2h", "--step", "60s"], {
      cwd: path.resolve(__dirname, "../.."),
      stdio: ["ignore", "pipe", "pipe"],
    });
    sim.stdout?.on("data", (c: Buffer) => (out += c.toString()));
    sim.stderr?.on("data", (c: Buffer) => (out += c.toString()));
    await eventually(async () => out, (o) => /backfill done/.test(o) || /Error|error:/.test(o), 600, 100);
    sim.kill("SIGTERM");
    // 121 instants of 5 tags in one send; a triaxial capture of the fan at 0, 1 h and 2 h.
    expect(out).toMatch(/backfill done: 605 readings sent, 605 accepted, 0 rejected; 3 captures/);
    expect(out).toMatch(/no answer \(\w+\); sending again in \d+ ms with the same key \(1\/6\)/);
    const rows = await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM pipelines.readings WHERE pipeline_id = $1`, [sgw.id]);
    expect(rows.rows[0]!.n).toBe(605);
    expect(await captures(sgw)).toBe(9);

    // Every send had a key; the one dropped came again with its key, and no two sends of different bodies shared one.
    expect(sent.every((x) => typeof x.key === "string" && x.key.length > 0)).toBe(true);
    for (const kind of ["readings", "waveforms"]) {
      const lost = sent.find((x) => x.kind === kind && x.dropped)!;
      expect(sent.filter((x) => x.key === lost.key).map((x) => x.dropped)).toEqual([true, false]);
    }
    expect(new Set(sent.map((x) => x.key)).size).toBe(sent.length - 2);
  });
});
