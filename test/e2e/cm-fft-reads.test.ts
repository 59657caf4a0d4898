/**
 * Easier spectrum reads (docs/api-tour.md, "Looking back"): `_timestamps` bounded by from/to/limit,
 * `_spectrum` and `_peaks` with nearest=true and the X-Capture-Timestamp header; captures stored
 * through cm's `ingest.waveform`, as the waveforms stream stores them.
 */
import { randomUUID } from "node:crypto";
import { envelope } from "../helpers/envelope";
import { startTestNode, type TestNode } from "../helpers/node";
import { insertUsers } from "../helpers/users";

let t: TestNode;
const ids = { site: "", plant: "", otherPlant: "", fn: "", asset: "", monitor: "" };
/** 2026-01-01T00:00:00Z. */
const T0 = 1_767_225_600_000;
/** 2 Hz bins: every tone below sits on one. */
const FS = 1024;
const N = 512;
/** Captures of vibration/x, each with its own tone so that a body tells which capture it is. */
const X_CAPTURES = [
  { ts: T0, f: 20 },
  { ts: T0 + 60_000, f: 40 },
  { ts: T0 + 120_000, f: 60 },
  { ts: T0 + 300_000, f: 80 },
];
/** Other axes: one at a time x has too (listed once), one at a time of its own (never a nearest of x). */
const Y_CAPTURES = [
  { ts: T0, f: 30 },
  { ts: T0 + 30_000, f: 50 },
];
const ALL_TIMES = [T0, T0 + 30_000, T0 + 60_000, T0 + 120_000, T0 + 300_000];

const other = { username: "other@plant.test", password: "OtherPass123" };
const same = { username: "same@plant.test", password: "SamePass123" };
const HEADER = "x-capture-timestamp";
const iso = (ms: number) => new Date(ms).toISOString();
const err = envelope;

async function create(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.http<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

async function capture(axis: string, ts: number, f: number): Promise<void> {
  const samples = Array.from({ length: N }, (_, i) => 2 * Math.sin(2 * Math.PI * f * (i / FS)));
  const res = await t.node.broker.call("cm.ingest.waveform", { monitor_id: ids.monitor, tag: "vibration", axis, ts, sample_rate_hz: FS, samples });
  expect(res).toEqual({ stored: true });
}

const timestamps = (query = "", auth?: typeof other) =>
  t.http<number[]>("GET", `/_cm/fft/_timestamps?monitor_id=${ids.monitor}${query}`, auth ? { auth } : {});
const read = <T = unknown[]>(op: "_spectrum" | "_peaks", query: string, auth?: typeof other) =>
  t.http<T>("GET", `/_cm/fft/${op}?monitor_id=${ids.monitor}&tag=vibration&${query}`, auth ? { auth } : {});

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "cm"] });
  ids.site = await create("/_config/sites", {
    site_name: "Pune",
    location: "Pune, IN",
    timezone: "Asia/Kolkata",
    latitude: "18.52",
    longitude: "73.86",
    edge_firmware: { current_version: "1.0.0", previous_version: "" },
  });
  ids.plant = await create("/_config/plants", { plant_name: "Compressors", site_id: ids.site });
  ids.otherPlant = await create("/_config/plants", { plant_name: "Chillers", site_id: ids.site });
  ids.fn = await create("/_config/functions", { function_name: "Compressed air", plant_id: ids.plant });
  ids.asset = await create("/_config/assets", {
    asset_name: "Compressor C-3",
    function_id: ids.fn,
    asset_category: "Rotating",
    attributes: { machine_type: "compressor", rotating_speed: 1200 },
  });
  ids.monitor = await create("/_config/monitors", { monitor_name: "C-3 motor DE", monitor_type: "condition-monitor", asset_id: ids.asset });
  await insertUsers(t.db.url, [
    { username: other.username, password: other.password, user_type: "plant-admin", site_id: ids.site, plant_id: ids.otherPlant },
    { username: same.username, password: same.password, user_type: "plant-admin", site_id: ids.site, plant_id: ids.plant },
  ]);
  for (const c of X_CAPTURES) await capture("x", c.ts, c.f);
  for (const c of Y_CAPTURES) await capture("y", c.ts, c.f);
});

afterAll(async () => {
  await t?.stop();
});

describe("without the new keys: today's answers", () => {
  it("lists every capture time once, ascending", async () => {
    const res = await timestamps();
    expect(res.status).toBe(200);
    expect(res.body).toEqual(ALL_TIMES);
  });

  it("reads a capture at exactly its time, and [] without a header a millisecond off", async () => {
    for (const c of X_CAPTURES) {
      const res = await read<{ freq: number; tag_value: number; peak: boolean }[]>("_spectrum", `axis=x&timestamp=${c.ts}`);
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(N / 2 + 1);
      const top = res.body.reduce((a, b) => (b.tag_value > a.tag_value ? b : a));
      expect(top).toMatchObject({ freq: c.f, peak: true });
    }
    for (const op of ["_spectrum", "_peaks"] as const) {
      const miss = await read(op, `axis=x&timestamp=${T0 + 1}`);
      expect(miss).toMatchObject({ status: 200, body: [] });
      expect(miss.headers.get(HEADER)).toBeNull();
      const missFalse = await read(op, `axis=x&timestamp=${T0 + 1}&nearest=false`);
      expect(missFalse).toMatchObject({ status: 200, body: [] });
      expect(missFalse.headers.get(HEADER)).toBeNull();
    }
  });

  it("names the capture of an exact read in X-Capture-Timestamp, the body as without it", async () => {
    for (const op of ["_spectrum", "_peaks"] as const) {
      const exact = await read(op, `axis=x&timestamp=${T0 + 60_000}`);
      expect(exact.status).toBe(200);
      expect(exact.headers.get(HEADER)).toBe(String(T0 + 60_000));
      expect(exact.body).not.toEqual([]);
      const withFalse = await read(op, `axis=x&timestamp=${T0 + 60_000}&nearest=false`);
      expect(withFalse.body).toEqual(exact.body);
      expect(withFalse.headers.get(HEADER)).toBe(String(T0 + 60_000));
      const withTrue = await read(op, `axis=x&timestamp=${T0 + 60_000}&nearest=true`);
      expect(withTrue.body).toEqual(exact.body);
      expect(withTrue.headers.get(HEADER)).toBe(String(T0 + 60_000));
    }
  });

  it("answers the peaks as before: strongest first, the asset's running speed as fundamental", async () => {
    const res = await read<{ freq: number; tag_value: number; fundamental_freq: number }[]>("_peaks", `axis=x&timestamp=${T0 + 120_000}`);
    expect(res.status).toBe(200);
    expect(res.body[0]!.freq).toBeCloseTo(60, 6);
    expect(res.body.every((p) => p.fundamental_freq === 20)).toBe(true);
  });
});

describe("nearest=true", () => {
  it.each([
    ["after, nearer than the one before", T0 + 50_000, T0 + 60_000],
    ["before, nearer than the one after", T0 + 65_000, T0 + 60_000],
    ["exactly between two: the earlier", T0 + 90_000, T0 + 60_000],
    ["exactly between two, the other pair: the earlier", T0 + 210_000, T0 + 120_000],
    ["one ms past the middle: the later", T0 + 210_001, T0 + 300_000],
    ["before the first capture", T0 - 86_400_000, T0],
    ["at epoch 0", 0, T0],
    ["after the last capture", T0 + 86_400_000, T0 + 300_000],
    // vibration/y has a capture at T0 + 30 s: x's nearest ignores it.
    ["only that axis's captures", T0 + 30_000, T0],
  ])("takes the capture %s", async (_, asked, expected) => {
    for (const op of ["_spectrum", "_peaks"] as const) {
      const near = await read(op, `axis=x&timestamp=${asked}&nearest=true`);
      expect(near.status).toBe(200);
      expect(near.headers.get(HEADER)).toBe(String(expected));
      const exact = await read(op, `axis=x&timestamp=${expected}`);
      expect(near.body).toEqual(exact.body);
      expect(near.body).not.toEqual([]);
    }
  });

  it("reads the other axis's own captures", async () => {
    const near = await read("_spectrum", `axis=y&timestamp=${T0 + 20_000}&nearest=true`);
    expect(near.headers.get(HEADER)).toBe(String(T0 + 30_000));
    expect(near.body).toEqual((await read("_spectrum", `axis=y&timestamp=${T0 + 30_000}`)).body);
  });

  it("answers [] without a header when that tag or axis has no capture at all", async () => {
    for (const op of ["_spectrum", "_peaks"] as const) {
      for (const query of [`tag=vibration&axis=z`, `tag=temperature&axis=x`]) {
        const res = await t.http("GET", `/_cm/fft/${op}?monitor_id=${ids.monitor}&${query}&timestamp=${T0}&nearest=true`);
        expect(res).toMatchObject({ status: 200, body: [] });
        expect(res.headers.get(HEADER)).toBeNull();
      }
    }
  });
});

describe("_timestamps with from, to and limit", () => {
  it.each([
    ["from, inclusive", `&from=${iso(T0 + 60_000)}`, [T0 + 60_000, T0 + 120_000, T0 + 300_000]],
    ["to, inclusive", `&to=${iso(T0 + 60_000)}`, [T0, T0 + 30_000, T0 + 60_000]],
    ["from and to", `&from=${iso(T0 + 1)}&to=${iso(T0 + 120_000)}`, [T0 + 30_000, T0 + 60_000, T0 + 120_000]],
    ["from = to on a capture", `&from=${iso(T0)}&to=${iso(T0)}`, [T0]],
    ["an offset", `&from=2026-01-01T05:32:00%2B05:30`, [T0 + 120_000, T0 + 300_000]],
    ["an offset's + sent unescaped (a space)", `&from=2026-01-01T05:32:00+05:30`, [T0 + 120_000, T0 + 300_000]],
    ["a date alone (UTC midnight)", `&to=2026-01-01`, [T0]],
    ["epoch ms in digits", `&from=${T0 + 60_000}&to=${T0 + 120_000}`, [T0 + 60_000, T0 + 120_000]],
    ["a range without captures", `&from=${iso(T0 + 300_001)}`, []],
    ["limit: the newest, ascending", `&limit=2`, [T0 + 120_000, T0 + 300_000]],
    ["limit 1: the latest", `&limit=1`, [T0 + 300_000]],
    ["limit above the count: all", `&limit=10000`, ALL_TIMES],
    ["limit within to: the newest up to it", `&to=${iso(T0 + 100_000)}&limit=2`, [T0 + 30_000, T0 + 60_000]],
    ["limit within from..to", `&from=${T0}&to=${T0 + 120_000}&limit=3`, [T0 + 30_000, T0 + 60_000, T0 + 120_000]],
  ])("%s", async (_, query, expected) => {
    const res = await timestamps(query);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected);
    expect(res.headers.get("x-total-count")).toBeNull();
  });
});

describe("errors", () => {
  it.each([
    ["from", "&from=yesterday"],
    ["from", "&from="],
    ["from", "&from=2026-02-30T00:00:00Z"],
    ["to", "&to=2026-01-01T25:00:00Z"],
    ["to", "&to=1e12"],
    ["to", "&to=-5"],
    ["to", "&to=99999999999999999"],
  ])("a %s that does not parse: Invalid date format (%s)", async (field, query) => {
    const res = await timestamps(query);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(err(400, "Invalid date format", field));
  });

  it("a from after to: Invalid input: from", async () => {
    const res = await timestamps(`&from=${iso(T0 + 1)}&to=${iso(T0)}`);
    expect(res.body).toEqual(err(400, "Invalid input: from", "from"));
  });

  it.each(["0", "10001", "1.5", "-1", "ten", ""])("limit=%p: Invalid input: limit", async (limit) => {
    const res = await timestamps(`&limit=${limit}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(err(400, "Invalid input: limit", "limit"));
  });

  it.each(["yes", "1", "TRUE", "True", ""])("nearest=%p: Invalid input: nearest", async (nearest) => {
    for (const op of ["_spectrum", "_peaks"] as const) {
      const res = await read(op, `axis=x&timestamp=${T0}&nearest=${nearest}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(err(400, "Invalid input: nearest", "nearest"));
      expect(res.headers.get(HEADER)).toBeNull();
    }
  });

  it("keeps today's answers to keys it does not know and to a missing monitor_id", async () => {
    expect((await timestamps("&offset=1")).body).toEqual(err(400, "Invalid input: offset", "offset"));
    expect((await read("_spectrum", `axis=x&timestamp=${T0}&near=true`)).body).toEqual(err(400, "Invalid input: near", "near"));
    expect((await t.http("GET", `/_cm/fft/_timestamps?limit=1`)).body).toEqual(err(400, "Insufficient inputs"));
    expect((await read("_peaks", `axis=x&nearest=true`)).body).toEqual(err(400, "Insufficient inputs"));
  });
});

describe("scope", () => {
  it("answers another plant's monitor exactly as an unknown one, with the new keys too", async () => {
    const queries = [
      ["_timestamps", `&from=${iso(T0)}&to=${iso(T0 + 300_000)}&limit=2`],
      ["_spectrum", `&tag=vibration&axis=x&timestamp=${T0 + 1}&nearest=true`],
      ["_peaks", `&tag=vibration&axis=x&timestamp=${T0 + 1}&nearest=true`],
      ["_spectrum", `&tag=vibration&axis=x&timestamp=${T0}`],
    ];
    for (const [op, query] of queries) {
      const hidden = await t.http("GET", `/_cm/fft/${op}?monitor_id=${ids.monitor}${query}`, { auth: other });
      const unknown = await t.http("GET", `/_cm/fft/${op}?monitor_id=${randomUUID()}${query}`);
      expect(hidden.status).toBe(400);
      expect(hidden.body).toEqual(unknown.body);
      expect(hidden.body).toEqual(err(400, "Invalid Monitor Id"));
      expect(hidden.headers.get(HEADER)).toBeNull();
      const mine = await t.http("GET", `/_cm/fft/${op}?monitor_id=${ids.monitor}${query}`, { auth: same });
      expect(mine.status).toBe(200);
      expect(mine.body).not.toEqual([]);
    }
  });

  it("checks the dates before the monitor, alike for a hidden and an unknown one", async () => {
    const hidden = await t.http("GET", `/_cm/fft/_timestamps?monitor_id=${ids.monitor}&from=soon`, { auth: other });
    const unknown = await t.http("GET", `/_cm/fft/_timestamps?monitor_id=${randomUUID()}&from=soon`);
    expect(hidden.body).toEqual(err(400, "Invalid date format", "from"));
    expect(unknown.body).toEqual(hidden.body);
  });
});

describe("/openapi.json", () => {
  it("documents the new keys with types, bounds and the header", async () => {
    type Param = { name: string; required: boolean; schema: Record<string, unknown> };
    const doc = await t.http<{ paths: Record<string, { get: { description: string; parameters: Param[] } }> }>("GET", "/openapi.json", { auth: null });
    const params = (path: string) => Object.fromEntries(doc.body.paths[path]!.get.parameters.map((p) => [p.name, p]));
    const ts = params("/_cm/fft/_timestamps");
    expect(ts.limit).toMatchObject({ required: false, schema: { type: "integer", minimum: 1, maximum: 10000 } });
    expect(ts.from).toMatchObject({ required: false, schema: { type: "string", description: expect.stringContaining("ISO 8601") } });
    expect(ts.to).toMatchObject({ required: false, schema: { type: "string", description: expect.stringContaining("epoch ms") } });
    for (const path of ["/_cm/fft/_spectrum", "/_cm/fft/_peaks"]) {
      expect(params(path).nearest).toMatchObject({ required: false, schema: { enum: ["true", "false"], description: expect.stringContaining("X-Capture-Timestamp") } });
      expect(params(path).timestamp!.schema).toMatchObject({ "x-unit": "epoch ms" });
      expect(doc.body.paths[path]!.get.description).toContain("X-Capture-Timestamp");
    }
  });
});
