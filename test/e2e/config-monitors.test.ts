/**
 * Monitors (ops 17-22): tags and thresholds, filters, registration by the pipelines service's
 * events, the events this service emits, and the licence cap under concurrency.
 */
import type { Context } from "moleculer";
import { httpClient, startTestNode, type TestNode } from "../helpers/node";
import { insertUsers } from "../helpers/users";
import { envelope } from "../helpers/envelope";
import { pipelinesEvents } from "../../services/pipelines/contract";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MISSING = "6e2d3c4b-5f60-4b7c-9d8e-0f1a2b3c4d5e";
const PIPELINE = "0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d";
const ELSEWHERE_PIPELINE = "1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d";
const err = envelope;

async function post(t: TestNode, path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.http<{ id: string }>("POST", path, { body });
  if (res.status !== 200) throw new Error(`${path}: ${JSON.stringify(res.body)}`);
  return res.body.id;
}

async function hierarchy(t: TestNode, prefix: string) {
  const site = await post(t, "/_config/sites", {
    site_name: `${prefix} Site`,
    location: "Turin",
    timezone: "Europe/Rome",
    longitude: "7.68",
    edge_firmware: { current_version: "1.0.0" },
  });
  const plant = await post(t, "/_config/plants", { plant_name: `${prefix} Plant`, site_id: site });
  const fn = await post(t, "/_config/functions", { function_name: `${prefix} Fn`, plant_id: plant });
  const asset = await post(t, "/_config/assets", { asset_name: `${prefix} Asset`, function_id: fn, asset_category: "Rotating" });
  return { site, plant, fn, asset };
}

/** Waits for an event handler to have done its work: events are not awaited by their emitter. */
async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 50; i++) {
    const v = await probe();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  return probe();
}

describe("monitors", () => {
  let t: TestNode;
  let h: Awaited<ReturnType<typeof hierarchy>>;
  const seen: { event: string; payload: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    t = await startTestNode({ services: ["api", "auth", "config"] });
    // A consumer of the config events, as the later services are.
    await t.node.broker.createService({
      name: "config-listener",
      events: {
        "config.**"(ctx: Context<Record<string, unknown>>) {
          seen.push({ event: ctx.eventName ?? "", payload: ctx.params });
        },
      },
    });
    h = await hierarchy(t, "Mon");
  });
  afterAll(async () => {
    await t?.stop();
  });

  const tags = [
    { tag_name: "Vibration X", tag_desc: "RMS velocity", tag_unit: "mm/s", thresholds: { caution: "4.5", operational: "2.8", warning: "7.1" } },
    { tag_id: "t-temp", tag_name: "Temperature", tag_desc: "Bearing", tag_unit: "C", thresholds: {} },
  ];

  it("creates a monitor on a function (op 17) and fetches it (op 20) with generated tag ids", async () => {
    const res = await t.http<{ id: string }>("POST", "/_config/monitors/", {
      body: { monitor_name: "Fn Monitor", monitor_type: "condition-monitor", function_id: h.fn, tags, specs: { speed_type: "fixed", poles: 4 }, attributes: { mount: "top" } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.stringMatching(UUID) });
    const got = await t.http<Record<string, unknown>>("GET", `/_config/monitors/${res.body.id}`);
    expect(got.body).toEqual({
      function_id: h.fn,
      monitor_name: "Fn Monitor",
      monitor_id: res.body.id,
      monitor_type: "condition-monitor",
      created_at: expect.any(Number),
      gateway: {},
      tags: [
        { ...tags[0], tag_id: expect.stringMatching(UUID) },
        { ...tags[1], tag_id: "t-temp" },
      ],
      specs: { speed_type: "fixed", poles: 4 },
      attributes: { mount: "top" },
    });
    expect(Math.abs((got.body.created_at as number) - Date.now())).toBeLessThan(60_000);
  });

  it("puts a monitor created on an asset on the asset's function", async () => {
    const id = await post(t, "/_config/monitors", { monitor_name: "Asset Monitor", monitor_type: "condition-monitor", asset_id: h.asset });
    expect((await t.http("GET", `/_config/monitors/${id}`)).body).toMatchObject({ function_id: h.fn, tags: [], specs: {}, attributes: {} });
    const both = await post(t, "/_config/monitors", { monitor_name: "Both Ids", monitor_type: "process-monitor", asset_id: h.asset, function_id: h.fn });
    expect(both).toMatch(UUID);
    // null reads as left out (docs/architecture.md, Decisions).
    const nullAsset = await post(t, "/_config/monitors", { monitor_name: "Null Asset", monitor_type: "process-monitor", asset_id: null, function_id: h.fn });
    expect((await t.http("GET", `/_config/monitors/${nullAsset}`)).body).toMatchObject({ function_id: h.fn });
    const nullFn = await post(t, "/_config/monitors", { monitor_name: "Null Fn", monitor_type: "process-monitor", asset_id: h.asset, function_id: null });
    expect((await t.http("GET", `/_config/monitors/${nullFn}`)).body).toMatchObject({ function_id: h.fn });
  });

  it("answers Error creating Monitor for a parent it cannot find, Insufficient inputs without one", async () => {
    const other = await post(t, "/_config/functions", { function_name: "Unrelated Fn", plant_id: h.plant });
    const cases = [
      { function_id: MISSING },
      { asset_id: MISSING },
      { function_id: "nope" },
      { asset_id: h.asset, function_id: other },
    ];
    for (const parent of cases) {
      const res = await t.http("POST", "/_config/monitors", { body: { monitor_name: "Orphan", monitor_type: "energy-monitor", ...parent } });
      expect({ parent, answer: res.body }).toEqual({ parent, answer: err(400, "Error creating Monitor") });
    }
    const none = await t.http("POST", "/_config/monitors", { body: { monitor_name: "Orphan", monitor_type: "energy-monitor" } });
    expect(none.body).toEqual(err(400, "Insufficient inputs"));
    const nulls = await t.http("POST", "/_config/monitors", {
      body: { monitor_name: "Orphan", monitor_type: "energy-monitor", function_id: null, asset_id: null },
    });
    expect(nulls.body).toEqual(err(400, "Insufficient inputs"));
  });

  it("answers Invalid key for an unknown key in the body or in a tag", async () => {
    const top = await t.http("POST", "/_config/monitors", { body: { monitor_name: "K", monitor_type: "x", function_id: h.fn, colour: "red" } });
    expect(top.body).toEqual(err(400, "Invalid key"));
    const inTag = await t.http("POST", "/_config/monitors", {
      body: { monitor_name: "K", monitor_type: "x", function_id: h.fn, tags: [{ tag_name: "a", mystery: 1 }] },
    });
    expect(inTag.body).toEqual(err(400, "Invalid key"));
  });

  it("refuses a taken name in the function, also for two parallel creates", async () => {
    await post(t, "/_config/monitors", { monitor_name: "Unique Mon", monitor_type: "energy-monitor", function_id: h.fn });
    const dup = await t.http("POST", "/_config/monitors", { body: { monitor_name: "unique mon", monitor_type: "energy-monitor", asset_id: h.asset } });
    expect(dup.body).toEqual(err(400, "Monitor with name unique mon already exists"));
    const both = await Promise.all(
      [1, 2].map(() => t.http("POST", "/_config/monitors", { body: { monitor_name: "Twin Mon", monitor_type: "energy-monitor", function_id: h.fn } })),
    );
    expect(both.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(both.find((r) => r.status === 400)?.body).toEqual(err(400, "Monitor with name Twin Mon already exists"));
  });

  it("takes a plant, function or asset sent back as its fetch answered it, with one field changed", async () => {
    type Rec = Record<string, unknown>;
    const roundTrip = async (path: string, change: Rec, extra: Rec = {}) => {
      const read = await t.http<Rec>("GET", path);
      expect(read.status).toBe(200);
      const put = await t.http<string>("PUT", path, { body: { ...read.body, ...extra, ...change } });
      expect({ path, status: put.status }).toEqual({ path, status: 200 });
      const again = await t.http<Rec>("GET", path);
      expect(again.body).toMatchObject(change);
    };
    await roundTrip(`/_config/plants/${h.plant}`, { plant_name: "Round Plant" });
    // A function's and an asset's fetch do not name their parent, which the update requires.
    await roundTrip(`/_config/functions/${h.fn}`, { function_name: "Round Fn" }, { plant_id: h.plant });
    await roundTrip(`/_config/assets/${h.asset}`, { asset_name: "Round Asset" }, { function_id: h.fn, is_critical: "no" });
    // Only what the fetch answered: another unknown key is still refused.
    const plant = await t.http<Rec>("GET", `/_config/plants/${h.plant}`);
    expect((await t.http("PUT", `/_config/plants/${h.plant}`, { body: { ...plant.body, colour: "red" } })).body).toEqual(err(400, "Invalid input: colour"));
  });

  it("updates a monitor (op 19): every field required, thresholds numeric, tag ids kept", async () => {
    const id = await post(t, "/_config/monitors", { monitor_name: "Editable", monitor_type: "process-monitor", function_id: h.fn });
    await post(t, "/_config/monitors", { monitor_name: "Occupied", monitor_type: "process-monitor", function_id: h.fn });
    const body = {
      monitor_name: "Edited",
      monitor_type: "energy-monitor",
      tags: [{ tag_id: "kwh", tag_name: "Energy", tag_desc: "Import", tag_unit: "kWh", thresholds: { warning: "1000" } }],
      specs: { speed_type: "variable" },
      attributes: { panel: "MCC-2" },
    };
    const ok = await t.http("PUT", `/_config/monitors/${id}`, { body });
    expect(ok.status).toBe(200);
    expect(ok.body).toBe("Monitor updated successfully");
    expect((await t.http("GET", `/_config/monitors/${id}`)).body).toMatchObject({
      monitor_name: "Edited",
      monitor_type: "energy-monitor",
      tags: body.tags,
      specs: body.specs,
      attributes: body.attributes,
    });
    const { tags: _t, ...noTags } = body;
    expect((await t.http("PUT", `/_config/monitors/${id}`, { body: noTags })).body).toEqual(err(400, "Insufficient inputs"));
    expect((await t.http("PUT", `/_config/monitors/${id}`, { body: { ...body, function_id: h.fn } })).body).toEqual(err(400, "Invalid key"));
    const badThreshold = { ...body, tags: [{ tag_name: "T", thresholds: { caution: "hot" } }] };
    expect((await t.http("PUT", `/_config/monitors/${id}`, { body: badThreshold })).body).toEqual(
      err(400, "Invalid input: tags[0].thresholds.caution"),
    );
    expect((await t.http("PUT", `/_config/monitors/${id}`, { body: { ...body, monitor_name: "OCCUPIED" } })).body).toEqual(
      err(400, "Monitor with name OCCUPIED already exists"),
    );
    expect((await t.http("PUT", `/_config/monitors/${MISSING}`, { body })).body).toEqual(err(400, `Invalid Monitor ID: ${MISSING}`));
  });

  it("answers Invalid Monitor ID for a fetch or delete of a monitor that does not exist", async () => {
    expect((await t.http("GET", `/_config/monitors/${MISSING}`)).body).toEqual(err(400, `Invalid Monitor ID: ${MISSING}`));
    expect((await t.http("DELETE", "/_config/monitors/m-1")).body).toEqual(err(400, "Invalid Monitor ID: m-1"));
  });

  describe("lists, filters and registration", () => {
    let g: Awaited<ReturnType<typeof hierarchy>>;
    let energy: string;
    let condition: string;
    let process: string;
    const list = async (query: string) => (await t.http("GET", `/_config/monitors/_list?${query}`)).body;
    const names = async (query: string) => ((await list(query)) as { monitor_name: string }[]).map((m) => m.monitor_name);

    beforeAll(async () => {
      g = await hierarchy(t, "Filter");
      energy = await post(t, "/_config/monitors", { monitor_name: "E", monitor_type: "energy-monitor", function_id: g.fn });
      condition = await post(t, "/_config/monitors", { monitor_name: "C", monitor_type: "condition-monitor", asset_id: g.asset });
      process = await post(t, "/_config/monitors", { monitor_name: "P", monitor_type: "process-monitor", function_id: g.fn });
    });

    it("lists monitors with device_registered (op 21) and X-Total-Count", async () => {
      const res = await t.http<Record<string, unknown>[]>("GET", `/_config/monitors/_list?function_id=${g.fn}`);
      expect(res.body).toEqual([
        { monitor_id: energy, monitor_name: "E", monitor_type: "energy-monitor", created_at: expect.any(Number), device_registered: false },
        { monitor_id: condition, monitor_name: "C", monitor_type: "condition-monitor", created_at: expect.any(Number), device_registered: false },
        { monitor_id: process, monitor_name: "P", monitor_type: "process-monitor", created_at: expect.any(Number), device_registered: false },
      ]);
      expect(res.headers.get("x-total-count")).toBe("3");
      expect(await names(`asset_id=${g.asset}`)).toEqual(["C"]);
      expect(await names(`function_id=${g.fn}&limit=2&offset=1`)).toEqual(["C", "P"]);
    });

    it("filters by data_type on monitor_type while unregistered, and refuses bad filter values", async () => {
      expect(await names(`function_id=${g.fn}&data_type=energy`)).toEqual(["E"]);
      expect(await names(`function_id=${g.fn}&data_type=Condition`)).toEqual(["C"]);
      expect(await names(`function_id=${g.fn}&data_type=process`)).toEqual(["P"]);
      expect(await names(`function_id=${g.fn}&data_type=all`)).toEqual(["E", "C", "P"]);
      expect(await names(`function_id=${g.fn}&is_registered=no`)).toEqual(["E", "C", "P"]);
      expect(await names(`function_id=${g.fn}&is_registered=yes`)).toEqual([]);
      expect(await list("is_registered=perhaps")).toEqual(err(400, "Invalid value for is_registered"));
      expect(await list("data_type=vibration")).toEqual(err(400, "Invalid data_type parameter"));
      expect(await list("pipeline_id=gw-1")).toEqual(err(400, "Invalid Pipeline ID: gw-1"));
      expect(await list("colour=red")).toEqual(err(400, "Excess inputs"));
    });

    it("learns a registration from the pipelines service: device_registered, gateway, filters, delete refused", async () => {
      const registration = {
        monitor_id: condition,
        pipeline_id: PIPELINE,
        data_source: "Edge IOT Gateway",
        data_source_subtype: "Modbus RTU",
        slave_id: "3",
        data_type: "Energy",
      };
      // Delivered twice, as an at-least-once bus may: the handler is idempotent.
      await t.node.broker.emit("pipelines.monitor.registered", registration);
      await t.node.broker.emit("pipelines.monitor.registered", registration);
      const got = await eventually(
        async () => (await t.http<{ gateway: Record<string, unknown> }>("GET", `/_config/monitors/${condition}`)).body,
        (b) => Object.keys(b.gateway).length > 0,
      );
      expect(got.gateway).toEqual({ pipeline_id: PIPELINE, data_source: "Edge IOT Gateway", data_source_subtype: "Modbus RTU", slave_id: 3 });
      expect(await list(`function_id=${g.fn}&is_registered=yes`)).toEqual([
        expect.objectContaining({ monitor_id: condition, device_registered: true }),
      ]);
      expect(await names(`pipeline_id=${PIPELINE}`)).toEqual(["C"]);
      // Registered, its data type is the pipeline's, not its monitor_type's.
      expect(await names(`function_id=${g.fn}&data_type=energy`)).toEqual(["E", "C"]);
      expect(await names(`function_id=${g.fn}&data_type=condition`)).toEqual([]);
      expect((await t.http("DELETE", `/_config/monitors/${condition}`)).body).toEqual(
        err(400, "Cannot delete Monitor as it is registered to a Pipeline"),
      );

      // A late unregistration from another pipeline changes nothing; the right one frees it.
      await t.node.broker.emit("pipelines.monitor.unregistered", { monitor_id: condition, pipeline_id: MISSING });
      await t.node.broker.emit("pipelines.monitor.unregistered", { monitor_id: condition, pipeline_id: PIPELINE });
      const freed = await eventually(
        async () => (await t.http<{ gateway: Record<string, unknown> }>("GET", `/_config/monitors/${condition}`)).body,
        (b) => Object.keys(b.gateway).length === 0,
      );
      expect(freed.gateway).toEqual({});
      expect(await names(`function_id=${g.fn}&data_type=condition`)).toEqual(["C"]);
    });

    it("answers Invalid Pipeline ID for a pipeline_id the pipelines service does not know or the caller may not see", async () => {
      const other = await hierarchy(t, "Elsewhere");
      // What the pipelines service tells config of its pipelines' places, as far as this test needs it.
      const fake = await t.node.broker.createService({ name: "pipelines" });
      await t.node.broker.waitForServices("pipelines");
      await pipelinesEvents.emit(t.node.broker, "pipelines.pipeline.created", { pipeline_id: PIPELINE, site_id: g.site, plant_id: g.plant, at: Date.now() });
      await pipelinesEvents.emit(t.node.broker, "pipelines.pipeline.created", {
        pipeline_id: ELSEWHERE_PIPELINE,
        site_id: other.site,
        plant_id: other.plant,
        at: Date.now(),
      });
      try {
        expect(await list(`pipeline_id=${MISSING}`)).toEqual(err(400, `Invalid Pipeline ID: ${MISSING}`));
        expect(await list(`pipeline_id=${PIPELINE}`)).toEqual([]);
        expect(await list(`pipeline_id=${ELSEWHERE_PIPELINE}`)).toEqual([]);
        // A plant-admin of g's plant: the other tenant's pipeline answers as a missing one.
        await insertUsers(t.db.url, [
          { username: "pipeline.scope@example.com", password: "ScopePass123", user_type: "plant-admin", site_id: g.site, plant_id: g.plant },
        ]);
        const plantAdmin = httpClient(t.baseUrl, { username: "pipeline.scope@example.com", password: "ScopePass123" });
        expect((await plantAdmin("GET", `/_config/monitors/_list?pipeline_id=${PIPELINE}`)).body).toEqual([]);
        expect((await plantAdmin("GET", `/_config/monitors/_list?pipeline_id=${ELSEWHERE_PIPELINE}`)).body).toEqual(
          err(400, `Invalid Pipeline ID: ${ELSEWHERE_PIPELINE}`),
        );
      } finally {
        await t.node.broker.destroyService(fake);
      }
    });

    it("counts monitors by asset and function (op 22), refusing other keys", async () => {
      const count = async (query: string) => (await t.http("GET", `/_config/monitors/_count?${query}`)).body;
      expect(await count(`function_id=${g.fn}`)).toBe(3);
      expect(await count(`asset_id=${g.asset}`)).toBe(1);
      expect(await count(`asset_id=${MISSING}`)).toBe(0);
      expect(await count(`function_id=${g.fn}&data_type=energy`)).toEqual(err(400, "Excess inputs"));
      expect(await count(`function_id=${g.fn}&pipeline_id=${PIPELINE}`)).toEqual(err(400, "Excess inputs"));
    });

    it("resolves monitors for other services with their names, time zone and tags (internal action)", async () => {
      const resolved = await t.node.broker.call("config.monitors.resolve", { monitor_ids: [condition, MISSING, "junk"] });
      expect(resolved).toEqual([
        {
          monitor_id: condition,
          monitor_name: "C",
          monitor_type: "condition-monitor",
          function_id: g.fn,
          function_name: "Filter Fn",
          asset_id: g.asset,
          asset_name: "Filter Asset",
          plant_id: g.plant,
          plant_name: "Filter Plant",
          site_id: g.site,
          site_name: "Filter Site",
          timezone: "Europe/Rome",
          specs: {},
          attributes: {},
          asset_attributes: {},
          tags: [],
        },
      ]);
    });

    it("deletes an unregistered monitor (op 18)", async () => {
      const res = await t.http("DELETE", `/_config/monitors/${process}`);
      expect(res.status).toBe(200);
      expect(res.body).toBe("Monitor deleted successfully");
      expect(await names(`function_id=${g.fn}`)).toEqual(["E", "C"]);
    });
  });

  it("emits config.<entity>.created|updated|deleted with the entity and its parents' ids", async () => {
    const f = await post(t, "/_config/functions", { function_name: "Evented Fn", plant_id: h.plant });
    const m = await post(t, "/_config/monitors", { monitor_name: "Evented", monitor_type: "energy-monitor", function_id: f });
    await t.http("PUT", `/_config/functions/${f}`, { body: { function_name: "Evented Fn 2", plant_id: h.plant } });
    await t.http("DELETE", `/_config/monitors/${m}`);
    await eventually(async () => seen.length, () => seen.some((e) => e.event === "config.monitor.deleted" && e.payload.monitor_id === m));
    const mine = seen.filter((e) => e.payload.function_id === f);
    expect(mine.map((e) => e.event)).toEqual([
      "config.function.created",
      "config.monitor.created",
      "config.function.updated",
      "config.monitor.deleted",
    ]);
    expect(mine[0].payload).toEqual({ function_id: f, function_name: "Evented Fn", plant_id: h.plant, site_id: h.site });
    expect(mine[1].payload).toMatchObject({ monitor_id: m, monitor_name: "Evented", function_id: f, plant_id: h.plant, site_id: h.site, asset_id: null });
    expect(mine[2].payload).toMatchObject({ function_name: "Evented Fn 2" });
    expect(seen.some((e) => e.event === "config.site.created" && e.payload.site_id === h.site)).toBe(true);
    expect(seen.some((e) => e.event === "config.asset.created" && e.payload.asset_id === h.asset && e.payload.plant_id === h.plant)).toBe(true);
  });
});

describe("monitor licence cap", () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({ services: ["api", "auth", "config"], env: { MONITOR_LICENSE_LIMIT: "5" } });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("leaves exactly five of twenty parallel creates against a limit of five", async () => {
    const h = await hierarchy(t, "Licence");
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.http("POST", "/_config/monitors", { body: { monitor_name: `L${i}`, monitor_type: "energy-monitor", function_id: h.fn } }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = results.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(15);
    for (const r of refused) expect(r.body).toEqual(err(400, "Monitor creation limit reached. Verify your license status."));
    expect((await t.http("GET", "/_config/monitors/_count")).body).toBe(5);

    // Deleting one frees a seat.
    const [first] = (await t.http<{ monitor_id: string }[]>("GET", "/_config/monitors/_list")).body;
    await t.http("DELETE", `/_config/monitors/${first.monitor_id}`);
    const again = await t.http("POST", "/_config/monitors", { body: { monitor_name: "Seat", monitor_type: "energy-monitor", function_id: h.fn } });
    expect(again.status).toBe(200);
    const over = await t.http("POST", "/_config/monitors", { body: { monitor_name: "Over", monitor_type: "energy-monitor", function_id: h.fn } });
    expect(over.body).toEqual(err(400, "Monitor creation limit reached. Verify your license status."));
  });
});
