/**
 * Pipelines over HTTP (ops 46-55): both kinds' create, update, delete and fetch with every rule
 * and message of the spec, list and count, scope and permissions, and the registration events
 * the config service shows on its monitors.
 */
import { Client } from "pg";
import { startTestNode, type TestNode } from "../helpers/node";
import { insertUsers } from "../helpers/users";
import {
  createEdge,
  edgeBody,
  err,
  eventually,
  hierarchy,
  MISSING,
  modbusSettings,
  modbusTag,
  nextMac,
  type Hierarchy,
} from "./pipelines-fixtures";

let t: TestNode;
let h: Hierarchy;
let other: Hierarchy;

const plantAdmin = { username: "pa@example.com", password: "PlantAdmin123" };
const viewer = { username: "gu@example.com", password: "GeneralUser123" };

beforeAll(async () => {
  t = await startTestNode({ services: ["api", "auth", "config", "pipelines"] });
  h = await hierarchy(t, "Crud");
  other = await hierarchy(t, "Other");
  await insertUsers(t.db.url, [
    { ...plantAdmin, user_type: "plant-admin", site_id: h.site, plant_id: h.plant },
    { ...viewer, user_type: "general-user", site_id: h.site, plant_id: h.plant },
  ]);
});
afterAll(async () => {
  await t?.stop();
});

const EDGE = "/_config/pipelines/edge-server";
const THIRD = "/_config/pipelines/thirdparty";

function thirdPartyBody(extra: Record<string, unknown> = {}) {
  return {
    pipeline_name: "Historian link",
    data_type: "Process",
    data_source: "Third-Party-Apps",
    data_source_subtype: "OPC-UA",
    plant_id: h.plant,
    function_id: h.fn,
    settings: { mac_address: nextMac(), sampling_rate: 5, server_url: "opc.tcp://historian:4840", user_name: "opc", user_password: "secret" },
    tags: [{ tag_name: "Pressure", tag_desc: "Discharge", tag_unit: "bar", address: "ns=2;s=P1" }],
    ...extra,
  };
}

describe("third-party pipelines (ops 46-49)", () => {
  let id: string;

  it("creates one (op 46) and fetches it (op 49) in the spec's shape", async () => {
    const res = await t.http<{ id: string; ingest_key: string }>("POST", THIRD, { body: thirdPartyBody() });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["id", "ingest_key"]);
    id = res.body.id;
    const got = await t.http<Record<string, unknown>>("GET", `${THIRD}/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      function_id: h.fn,
      plant_id: h.plant,
      site_id: h.site,
      pipeline_id: id,
      data_type: "Process",
      data_source: "Third-Party-Apps",
      data_source_subtype: "OPC-UA",
      pipeline_name: "Historian link",
      status: "stopped",
      total_event_count: 0,
      firmware_update: 0,
      data_directory: "",
      tags: [{ tag_name: "Pressure", tag_desc: "Discharge", tag_unit: "bar", address: "ns=2;s=P1" }],
    });
    expect(typeof got.body.created_at).toBe("number");
    expect((got.body.settings as Record<string, unknown>).server_url).toBe("opc.tcp://historian:4840");
  });

  it("applies the subtype's settings rules and the plant check", async () => {
    const { settings } = thirdPartyBody();
    const noUrl = { ...settings, server_url: undefined };
    expect((await t.http("POST", THIRD, { body: thirdPartyBody({ settings: noUrl }) })).body).toEqual(err(400, "Insufficient inputs"));
    const noMac = { ...settings, mac_address: undefined };
    expect((await t.http("POST", THIRD, { body: thirdPartyBody({ settings: noMac }) })).body).toEqual(err(400, "Insufficient inputs"));
    const file = thirdPartyBody({ data_source_subtype: "File", settings: { mac_address: nextMac(), file_name: "a.csv" } });
    expect((await t.http("POST", THIRD, { body: file })).body).toEqual(err(400, "Insufficient inputs"));
    const fileOk = thirdPartyBody({ data_source_subtype: "File", settings: { mac_address: nextMac(), file_name: "a.csv", file_path: "/data", time_field: "ts" } });
    expect((await t.http("POST", THIRD, { body: fileOk })).status).toBe(200);
    const rate = thirdPartyBody({ settings: { ...settings, sampling_rate: "fast" } });
    expect((await t.http("POST", THIRD, { body: rate })).body).toEqual(err(400, "Invalid input: settings.sampling_rate"));
    const tag = thirdPartyBody({ tags: [{ tag_name: "P", tag_unit: "bar" }] });
    expect((await t.http("POST", THIRD, { body: tag })).body).toEqual(err(400, "Insufficient inputs"));
    const plant = thirdPartyBody({ plant_id: MISSING, function_id: undefined });
    expect((await t.http("POST", THIRD, { body: plant })).body).toEqual(err(400, `Invalid Plant ID: ${MISSING}`));
    const noPlace = thirdPartyBody({ plant_id: undefined, function_id: undefined });
    expect((await t.http("POST", THIRD, { body: noPlace })).body).toEqual(err(400, "Insufficient inputs"));
    const type = thirdPartyBody({ data_type: "Telemetry" });
    expect((await t.http("POST", THIRD, { body: type })).body).toEqual(err(400, "Invalid input: data_type"));
  });

  it("updates one (op 48): tags required, the rest kept", async () => {
    const res = await t.http("PUT", `${THIRD}/${id}`, { body: { pipeline_name: "Historian 2", tags: [{ tag_name: "Flow", tag_desc: "", tag_unit: "m3/h" }] } });
    expect(res.body).toBe("Pipeline updated successfully");
    const got = await t.http<Record<string, unknown>>("GET", `${THIRD}/${id}`);
    expect(got.body).toMatchObject({ pipeline_name: "Historian 2", data_source_subtype: "OPC-UA", tags: [{ tag_name: "Flow", tag_desc: "", tag_unit: "m3/h" }] });
    expect((await t.http("PUT", `${THIRD}/${id}`, { body: { pipeline_name: "x" } })).body).toEqual(err(400, "Insufficient inputs"));
    expect((await t.http("PUT", `${THIRD}/${MISSING}`, { body: { tags: [] } })).body).toEqual(err(400, `Invalid Pipeline ID: ${MISSING}`));
  });

  it("filters the fetch by mac_ids", async () => {
    const got = await t.http<{ settings: { mac_address: string } }>("GET", `${THIRD}/${id}`);
    const mac = got.body.settings.mac_address;
    expect((await t.http("GET", `${THIRD}/${id}?mac_ids=${mac}`)).status).toBe(200);
    expect((await t.http("GET", `${THIRD}/${id}?mac_ids=aa:bb`)).body).toEqual(err(400, `Invalid Pipeline ID: ${id}`));
    // The list forms a query can carry: repeated, comma-separated, JSON text; empty names none.
    const q = encodeURIComponent;
    for (const query of [`mac_ids=aa:bb&mac_ids=${mac}`, `mac_ids=aa:bb,${mac}`, `mac_ids=${q(JSON.stringify(["aa:bb", mac]))}`, "mac_ids="]) {
      expect({ query, status: (await t.http("GET", `${THIRD}/${id}?${query}`)).status }).toEqual({ query, status: 200 });
    }
    expect((await t.http("GET", `${THIRD}/${id}?mac_ids=${q('["aa:bb"]')}`)).body).toEqual(err(400, `Invalid Pipeline ID: ${id}`));
  });

  it("an edge route does not reach a third-party pipeline, nor the reverse", async () => {
    expect((await t.http("GET", `${EDGE}/${id}`)).body).toEqual(err(400, `Invalid Gateway ID: ${id}`));
  });

  it("deletes one (op 47), then answers Invalid Pipeline ID", async () => {
    // config's monitor filter asks pipelines.resolve (cached): known before the delete, unknown at once after it.
    expect((await t.http("GET", `/_config/monitors/_list?pipeline_id=${id}`)).status).toBe(200);
    expect((await t.http("DELETE", `${THIRD}/${id}`)).body).toBe("Pipeline deleted successfully");
    expect((await t.http("GET", `/_config/monitors/_list?pipeline_id=${id}`)).body).toEqual(err(400, `Invalid Pipeline ID: ${id}`));
    expect((await t.http("DELETE", `${THIRD}/${id}`)).body).toEqual(err(400, `Invalid Pipeline ID: ${id}`));
    expect((await t.http("GET", `${THIRD}/${id}`)).body).toEqual(err(400, `Invalid Pipeline ID: ${id}`));
    expect((await t.http("GET", `${THIRD}/not-an-id`)).body).toEqual(err(400, "Invalid Pipeline ID: not-an-id"));
  });
});

describe("edge-server pipelines (ops 50-53)", () => {
  const base = () => edgeBody(h, []);

  it("names the missing key and refuses unknown keys (Insufficient input: <key>, Invalid input key)", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base(), pipeline_name: undefined }, "Insufficient input: pipeline_name"],
      [{ ...base(), settings: { ...modbusSettings(), baudrate: undefined } }, "Insufficient input: baudrate"],
      [{ ...base(), settings: { ...modbusSettings(), mac_address: undefined } }, "Insufficient input: mac_address"],
      [{ ...base(), tags: [{ ...modbusTag, scale: undefined }] }, "Insufficient input: scale"],
      [{ ...base(), registration: [{ monitor_id: h.pump.id, registered_by_asset: false }] }, "Insufficient input: slave_id"],
      [{ ...base(), gateway_firmware: undefined }, "Insufficient input: gateway_firmware"],
      [{ ...base(), function_id: undefined }, "Insufficient input: plant_id"],
      [{ ...base(), colour: "red" }, "Invalid input key"],
      [{ ...base(), settings: { ...modbusSettings(), speed: 1 } }, "Invalid input key"],
      [{ ...base(), tags: [{ ...modbusTag, monitor: "x" }] }, "Invalid input key"],
      [{ ...base(), tags: [{ ...modbusTag, decode_bits: "12" }] }, "Invalid input: tags[0].decode_bits"],
      [{ ...base(), data_source_subtype: "CAN" }, "Invalid input: data_source_subtype"],
    ];
    for (const [body, message] of cases) {
      const res = await t.http("POST", EDGE, { body });
      expect({ body, answer: res.body }).toEqual({ body, answer: err(400, message) });
    }
  });

  it("accepts each subtype with its own settings and tags", async () => {
    const opc = {
      ...base(),
      data_source_subtype: "OPC-UA",
      settings: { mac_address: nextMac(), server_url: "opc.tcp://plc:4840", user_name: "u", user_password: "p" },
      tags: [{ tag_name: "Pressure", tag_desc: "", tag_unit: "bar", monitor_id: h.pump.id, address: "ns=2;s=P", tag_id: "pressure" }],
    };
    const file = {
      ...base(),
      data_source_subtype: "File",
      data_type: "Production",
      settings: {
        mac_address: nextMac(),
        separator: ",",
        rows_skipped: "1",
        time_format: "%Y-%m-%d %H:%M:%S",
        input_file: "line.csv",
        file_name: "line.csv",
        file_path: "/srv/in",
        time_field: "time",
        ignore_fields: ["comment"],
      },
      tags: [{ tag_name: "Count", tag_desc: "", tag_unit: "pcs", field_name: "count", tag_id: "flow", moniter_id: h.fan.id, is_production: true }],
    };
    const sql = {
      ...base(),
      data_source_subtype: "SQL",
      data_type: "Production",
      settings: {
        mac_address: nextMac(),
        server_address: "10.0.0.5",
        port: 5432,
        username: "reader",
        password: 1234,
        config: { database: "mes", table: "output", time_field: "ts", last_collected: "none", ignore_type: [], conditions: [{ column_name: "line", comparison: "=", threshold: "2" }], operator: "AND" },
      },
      tags: [{ tag_name: "Output", tag_desc: "", tag_unit: "pcs", column_name: "qty", monitor_id: h.meter.id }],
      function_enabled_in_registration: true,
    };
    for (const body of [opc, file, sql]) {
      const res = await t.http<{ id: string }>("POST", EDGE, { body });
      expect({ subtype: body.data_source_subtype, status: res.status, body: res.body }).toMatchObject({ subtype: body.data_source_subtype, status: 200 });
      await t.http("DELETE", `${EDGE}/${res.body.id}`);
    }
    expect((await t.http("POST", EDGE, { body: { ...sql, data_type: "Process" } })).body).toEqual(err(400, "SQL gateway only supports Production data type"));
    expect((await t.http("POST", EDGE, { body: { ...file, data_type: "Process" } })).body).toEqual(err(400, "Invalid input: is_production"));
  });

  it("answers 404 Invalid input registration for a monitor that is missing, elsewhere, or in another function", async () => {
    const reg = (monitor_id: string, extra: Record<string, unknown> = {}) => ({ ...base(), registration: [{ monitor_id, slave_id: "1", registered_by_asset: false }], ...extra });
    for (const body of [reg(MISSING), reg("not-an-id"), reg(other.pump.id), reg(h.meter.id)]) {
      const res = await t.http("POST", EDGE, { body });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(err(404, "Invalid input registration"));
    }
    // function_enabled_in_registration lets a slave go to another function of the plant.
    const ok = await t.http<{ id: string }>("POST", EDGE, { body: reg(h.meter.id, { function_enabled_in_registration: true }) });
    expect(ok.status).toBe(200);
    await t.http("DELETE", `${EDGE}/${ok.body.id}`);
  });

  it("refuses a MAC address another gateway has, naming it", async () => {
    const first = edgeBody(h, []);
    const created = await createEdge(t, first);
    const again = await t.http("POST", EDGE, { body: { ...edgeBody(h, []), settings: { ...modbusSettings(), mac_address: first.settings.mac_address.toUpperCase() } } });
    expect(again.body).toEqual(err(400, `This MAC address is already registered with another gateway (ID: ${created.id})`));
    await t.http("DELETE", `${EDGE}/${created.id}`);
  });

  it("refuses a MAC address equal to another gateway's once separators are removed, at create and at update", async () => {
    const first = edgeBody(h, []);
    const created = await createEdge(t, first);
    const taken = err(400, `This MAC address is already registered with another gateway (ID: ${created.id})`);
    const bare = first.settings.mac_address.replace(/:/g, "");
    for (const mac of [bare, bare.toUpperCase(), first.settings.mac_address.replace(/:/g, "-")]) {
      expect((await t.http("POST", EDGE, { body: { ...edgeBody(h, []), settings: { ...modbusSettings(), mac_address: mac } } })).body).toEqual(taken);
    }
    const second = edgeBody(h, []);
    const other = await createEdge(t, second);
    expect((await t.http("PUT", `${EDGE}/${other.id}`, { body: { pipeline_name: second.pipeline_name, settings: { ...second.settings, mac_address: bare }, tags: second.tags } })).body).toEqual(taken);
    await t.http("DELETE", `${EDGE}/${other.id}`);
    await t.http("DELETE", `${EDGE}/${created.id}`);
  });

  it("refuses MAC addresses equal once separators are removed when they are created at the same moment (the unique index)", async () => {
    const mac = nextMac();
    const bare = mac.replace(/:/g, "");
    const forms = [mac, bare, mac.replace(/:/g, "-").toUpperCase(), bare.toUpperCase(), mac.replace(/:/g, "."), `${bare.slice(0, 6)}-${bare.slice(6)}`];
    const answers = await Promise.all(forms.map((m) => t.http<{ id: string }>("POST", EDGE, { body: { ...edgeBody(h, []), settings: { ...modbusSettings(), mac_address: m } } })));
    const created = answers.filter((a) => a.status === 200);
    expect(created).toHaveLength(1);
    const taken = err(400, `This MAC address is already registered with another gateway (ID: ${created[0]!.body.id})`);
    for (const refused of answers.filter((a) => a.status !== 200)) expect(refused.body).toEqual(taken);
    // The index itself refuses such a row, whatever the code checked before.
    const db = new Client({ connectionString: t.db.url });
    await db.connect();
    try {
      await db.query(`CREATE TEMP TABLE twin AS SELECT * FROM pipelines.pipelines WHERE pipeline_id = $1`, [created[0]!.body.id]);
      await db.query(`UPDATE twin SET pipeline_id = gen_random_uuid(), ingest_key_hash = gen_random_uuid()::text::bytea, mac_address = $1`, [mac.replace(/:/g, "-")]);
      await expect(db.query(`INSERT INTO pipelines.pipelines SELECT * FROM twin`)).rejects.toMatchObject({ code: "23505", constraint: "pipelines_edge_mac" });
    } finally {
      await db.end();
    }
    await t.http("DELETE", `${EDGE}/${created[0]!.body.id}`);
  });

  it("registers monitors (config shows the gateway), refuses a monitor of another gateway, frees them on delete", async () => {
    const gw = await createEdge(t, edgeBody(h, [h.pump.id]));
    const monitor = await eventually(
      () => t.http<{ gateway: Record<string, unknown> }>("GET", `/_config/monitors/${h.pump.id}`),
      (r) => r.body.gateway?.pipeline_id === gw.id,
    );
    expect(monitor.body.gateway).toEqual({ pipeline_id: gw.id, data_source: "Edge IOT Gateway", data_source_subtype: "Modbus RTU", slave_id: 1 });
    expect((await t.http("DELETE", `/_config/monitors/${h.pump.id}`)).body).toEqual(err(400, "Cannot delete Monitor as it is registered to a Pipeline"));
    // The monitor list by pipeline, its id in either case (upper case answered []).
    const byPipeline = async (id: string) => (await t.http<{ monitor_id: string }[]>("GET", `/_config/monitors/_list?pipeline_id=${id}`)).body;
    expect((await byPipeline(gw.id)).map((m) => m.monitor_id)).toEqual([h.pump.id]);
    expect(await byPipeline(gw.id.toUpperCase())).toEqual(await byPipeline(gw.id));

    const clash = await t.http("POST", EDGE, { body: edgeBody(h, [h.fan.id, h.pump.id]) });
    expect(clash.body).toEqual(err(400, "Monitor already registered in another gateway"));
    // Nothing of the refused gateway stays behind: the fan is still free.
    const fan = await createEdge(t, edgeBody(h, [h.fan.id]));
    await t.http("DELETE", `${EDGE}/${fan.id}`);

    expect((await t.http("DELETE", `${EDGE}/${gw.id}`)).body).toBe("Gateway deleted successfully");
    const freed = await eventually(
      () => t.http<{ gateway: Record<string, unknown> }>("GET", `/_config/monitors/${h.pump.id}`),
      (r) => Object.keys(r.body.gateway ?? {}).length === 0,
    );
    expect(freed.body.gateway).toEqual({});
    expect((await t.http("DELETE", `${EDGE}/${gw.id}`)).body).toEqual(err(400, `Invalid Gateway ID: ${gw.id}`));
  });

  it("updates one (op 52), moving its registrations, and fetches it (op 53)", async () => {
    const gw = await createEdge(t, edgeBody(h, [h.pump.id]));
    const body = edgeBody(h, [h.fan.id]);
    const res = await t.http("PUT", `${EDGE}/${gw.id}`, {
      body: { pipeline_name: "Line 2 gateway", settings: body.settings, tags: body.tags, registration: body.registration },
    });
    expect(res.body).toBe("Gateway updated successfully");
    const got = await t.http<Record<string, unknown>>("GET", `${EDGE}/${gw.id}`);
    expect(got.body).toMatchObject({
      pipeline_id: gw.id,
      pipeline_name: "Line 2 gateway",
      data_source_subtype: "Modbus RTU",
      status: "stopped",
      total_event_count: 0,
      registration: [{ monitor_id: h.fan.id, slave_id: "1", registered_by_asset: false }],
      gateway_firmware: { current_version: "2.1.0", previous_version: "2.0.0", latest_version: "1.0.0" },
    });
    await eventually(
      () => t.http<{ gateway: Record<string, unknown> }>("GET", `/_config/monitors/${h.pump.id}`),
      (r) => Object.keys(r.body.gateway ?? {}).length === 0,
    );
    // Its registration is another event, which config may take a moment later.
    const fan = await eventually(
      () => t.http<{ gateway: Record<string, unknown> }>("GET", `/_config/monitors/${h.fan.id}`),
      (r) => r.body.gateway?.pipeline_id === gw.id,
    );
    expect(fan.body.gateway?.pipeline_id).toBe(gw.id);
    expect((await t.http("PUT", `${EDGE}/${gw.id}`, { body: { settings: body.settings, tags: body.tags } })).body).toEqual(
      err(400, "Insufficient input: pipeline_name"),
    );
    expect((await t.http("PUT", `${EDGE}/${MISSING}`, { body: { pipeline_name: "x", settings: body.settings, tags: [] } })).body).toEqual(
      err(400, `Invalid Gateway ID: ${MISSING}`),
    );
    await t.http("DELETE", `${EDGE}/${gw.id}`);
  });
});

describe("list and count (ops 54, 55)", () => {
  let ids: string[];

  beforeAll(async () => {
    const a = await createEdge(t, { ...edgeBody(h, []), pipeline_name: "A" });
    const b = await createEdge(t, { ...edgeBody(h, []), pipeline_name: "B", function_id: h.fn2 });
    const c = await createEdge(t, { ...edgeBody(h, []), pipeline_name: "C", function_id: undefined, plant_id: h.plant });
    ids = [a.id, b.id, c.id];
    await t.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [a.id], action: "start" } });
  });

  it("lists a plant's pipelines with plant and function names and the list fields", async () => {
    const res = await t.http<Record<string, unknown>[]>("GET", `/_config/pipelines/_list?plant_id=${h.plant}`);
    expect(res.status).toBe(200);
    const mine = res.body.filter((p) => ids.includes(p.pipeline_id as string));
    expect(mine.map((p) => [p.pipeline_name, p.plant_name, p.function_name])).toEqual([
      ["A", "Crud Plant", "Crud Fn"],
      ["B", "Crud Plant", "Crud Fn2"],
      ["C", "Crud Plant", null],
    ]);
    expect(Object.keys(mine[0]).sort()).toEqual(
      [
        "pipeline_id",
        "pipeline_name",
        "data_type",
        "data_source",
        "data_source_subtype",
        "created_at",
        "status",
        "gateway_firmware",
        "total_events",
        "latest_event",
        "heart_beats",
        "last_actions",
        "expired_license_caution",
        "plant_id",
        "plant_name",
        "function_id",
        "function_name",
      ].sort(),
    );
    expect(mine[0]).toMatchObject({ status: "starting", total_events: 0, latest_event: [], expired_license_caution: false });
    expect(mine[0].heart_beats).toEqual({ log_parser: null, producer: null, gateway: null, stasher: null });
    expect(res.headers.get("x-total-count")).toBe(String(res.body.length));
  });

  it("filters by function, pages with limit/offset, and refuses unknown or missing inputs", async () => {
    const fn = await t.http<{ pipeline_id: string }[]>("GET", `/_config/pipelines/_list?function_id=${h.fn2}`);
    expect(fn.body.map((p) => p.pipeline_id)).toContain(ids[1]);
    expect(fn.body.map((p) => p.pipeline_id)).not.toContain(ids[0]);
    const page = await t.http<unknown[]>("GET", `/_config/pipelines/_list?plant_id=${h.plant}&limit=1&offset=1`);
    expect(page.body).toHaveLength(1);
    expect(Number(page.headers.get("x-total-count"))).toBeGreaterThanOrEqual(3);
    expect((await t.http("GET", "/_config/pipelines/_list")).body).toEqual(err(400, "Insufficient inputs"));
    expect((await t.http("GET", `/_config/pipelines/_list?plant_id=${h.plant}&colour=red`)).body).toEqual(err(400, "Excess inputs"));
    expect((await t.http("GET", `/_config/pipelines/_list?plant_id=${MISSING}`)).body).toEqual([]);
    // An empty filter beside a given one is not given (it reached SQL as "" and answered 500).
    const byPlant = await t.http<unknown[]>("GET", `/_config/pipelines/_list?plant_id=${h.plant}`);
    expect((await t.http("GET", `/_config/pipelines/_list?function_id=&plant_id=${h.plant}`)).body).toEqual(byPlant.body);
    expect((await t.http("GET", `/_config/pipelines/_count?plant_id=&function_id=${h.fn2}&status=stop`)).status).toBe(200);
    expect((await t.http("GET", "/_config/pipelines/_list?function_id=&plant_id=")).body).toEqual(err(400, "Insufficient inputs"));
  });

  it("counts with the status filter: start, stop or one exact status", async () => {
    const count = async (q: string) => (await t.http("GET", `/_config/pipelines/_count?plant_id=${h.plant}${q}`)).body;
    const all = (await count("")) as number;
    expect(all).toBeGreaterThanOrEqual(3);
    expect(await count("&status=start")).toBe(1);
    expect(await count("&status=starting")).toBe(1);
    expect(await count("&status=running")).toBe(0);
    expect(await count("&status=stop")).toBe(all - 1);
    expect(await count("&status=paused")).toEqual(err(400, "Invalid input: status"));
    expect(await count("&extra=1")).toEqual(err(400, "Excess inputs"));
    expect((await t.http("GET", "/_config/pipelines/_count")).body).toEqual(err(400, "Insufficient inputs"));
  });

  it("makes the plant undeletable while it has pipelines (config asks countForPlant)", async () => {
    const res = await t.http("DELETE", `/_config/plants/${h.plant}`);
    expect(res.body).toEqual(err(400, "Cannot delete Plant as Pipelines exist on it"));
  });
});

describe("scope and permissions", () => {
  it("a plant-admin manages pipelines of its plant and sees another plant's as missing", async () => {
    const own = await t.http<{ id: string }>("POST", EDGE, { body: edgeBody(h, []), auth: plantAdmin });
    expect(own.status).toBe(200);
    const foreign = await createEdge(t, edgeBody(other, []));
    expect((await t.http("GET", `${EDGE}/${foreign.id}`, { auth: plantAdmin })).body).toEqual(err(400, `Invalid Gateway ID: ${foreign.id}`));
    expect((await t.http("DELETE", `${EDGE}/${foreign.id}`, { auth: plantAdmin })).body).toEqual(err(400, `Invalid Gateway ID: ${foreign.id}`));
    expect((await t.http("POST", EDGE, { body: edgeBody(other, []), auth: plantAdmin })).body).toEqual(err(400, `Invalid Function ID: ${other.fn}`));
    expect((await t.http("POST", EDGE, { body: { ...edgeBody(other, []), function_id: undefined, plant_id: other.plant }, auth: plantAdmin })).body).toEqual(
      err(400, `Invalid Plant ID: ${other.plant}`),
    );
    expect((await t.http("GET", `/_config/pipelines/_list?plant_id=${other.plant}`, { auth: plantAdmin })).body).toEqual([]);
    expect((await t.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [foreign.id], action: "start" }, auth: plantAdmin })).body).toEqual(
      err(400, `Invalid Gateway ID: ${foreign.id}`),
    );
    expect((await t.http("DELETE", `${EDGE}/${own.body.id}`, { auth: plantAdmin })).body).toBe("Gateway deleted successfully");
  });

  it("a general-user may read but not write pipelines; without the module it is refused", async () => {
    const gw = await createEdge(t, edgeBody(h, []));
    expect((await t.http("GET", `${EDGE}/${gw.id}`, { auth: viewer })).status).toBe(200);
    expect((await t.http("POST", EDGE, { body: edgeBody(h, []), auth: viewer })).body).toEqual(err(403, "Unauthorized operation"));
    expect((await t.http("DELETE", `${EDGE}/${gw.id}`, { auth: viewer })).body).toEqual(err(403, "Unauthorized operation"));
    expect((await t.http("POST", "/_config/pipelines/_action", { body: { pipeline_id: [gw.id], action: "start" }, auth: viewer })).body).toEqual(
      err(403, "Unauthorized operation"),
    );
    const noModule = { username: "gu3@example.com", password: "GeneralUser123" };
    await insertUsers(t.db.url, [{ ...noModule, user_type: "general-user", site_id: h.site, plant_id: h.plant, modules: ["Alerting"] }]);
    expect((await t.http("GET", `${EDGE}/${gw.id}`, { auth: noModule })).body).toEqual(err(401, "You do not have access to this module"));
  });
});
