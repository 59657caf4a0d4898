/** The pipelines service's pure rules: statuses, reading checks, registration, retention plan, SQL connect's selection, array literals. */
import { ignoreTypesOf, selectColumns, dialectOf } from "../../../services/pipelines/sql-connect";
import type { ResolvedMonitor } from "../../../services/config/contract";
import { checkReadings, mappingOf, registrationIsValid, statusAfterAck, statusesFor, statusWhileQueued } from "../../../services/pipelines/rules";
import { partitionDdl } from "../../../services/pipelines/readings.repo";
import { arrayText } from "../../../services/pipelines/sql";
import { daysAround, daysOf, retentionPlan } from "../../../services/pipelines/storage";
import { checkEdgeBody, leafKey } from "../../../services/pipelines/schemas";

const DAY = 86400000;
const M1 = "11111111-1111-4111-8111-111111111111";
const M2 = "22222222-2222-4222-8222-222222222222";

function monitor(id: string, plant: string, fn: string, tags: string[], asset: string | null = null): ResolvedMonitor {
  return {
    monitor_id: id,
    monitor_name: id,
    monitor_type: "process-monitor",
    function_id: fn,
    function_name: fn,
    asset_id: asset,
    asset_name: null,
    plant_id: plant,
    plant_name: plant,
    site_id: "s",
    site_name: "s",
    timezone: "UTC",
    specs: {},
    attributes: {},
    asset_attributes: {},
    tags: tags.map((tag_id) => ({ tag_id, tag_name: tag_id, tag_desc: "", tag_unit: "", thresholds: {} })),
  };
}

describe("statuses", () => {
  it("moves through the contract's statuses", () => {
    expect(statusWhileQueued("start")).toBe("starting");
    expect(statusWhileQueued("stop")).toBe("stopping");
    expect(statusAfterAck("start", "completed")).toBe("running");
    expect(statusAfterAck("stop", "completed")).toBe("stopped");
    expect(statusAfterAck("start", "failed")).toBe("error");
  });

  it("reads the count filter: start, stop, an exact status, nothing else", () => {
    expect(statusesFor("start")).toEqual(["starting", "running"]);
    expect(statusesFor("stop")).toEqual(["stopping", "stopped"]);
    expect(statusesFor("error")).toEqual(["error"]);
    expect(statusesFor("Running")).toBeNull();
  });
});

describe("readings", () => {
  const mapping = mappingOf([{ monitor_id: M2, tag_id: "extra" }], [{ monitor_id: M1 }], [monitor(M1, "p", "f", ["a"]), monitor(M2, "p", "f", ["b"])]);

  it("maps registered monitors' tags and tag items' own ids", () => {
    expect(mapping).toEqual(new Map([[M1, new Set(["a"])], [M2, new Set(["b", "extra"])]]));
  });

  it("keeps good readings (monitor ids lower-cased) and names each refusal", () => {
    const win = { oldest: 1000, newest: 5000 };
    const out = checkReadings(
      [
        { monitor_id: M1.toUpperCase(), tag_id: "a", ts: 2000, value: 1.5 },
        { monitor_id: M1, tag_id: "a", ts: 999, value: 1 },
        { monitor_id: M1, tag_id: "a", ts: 5001, value: 1 },
        { monitor_id: M1, tag_id: "a", ts: 2000.5, value: 1 },
        { monitor_id: M1, tag_id: "a", ts: 2000, value: Number.NaN },
        { monitor_id: M1, tag_id: "a", ts: 2000, value: -1.5e300 },
        { monitor_id: M1, tag_id: "a", ts: 2001, value: 1e300 },
        { monitor_id: M1, tag_id: "", ts: 2000, value: 1 },
        null,
      ],
      mapping,
      win,
    );
    // 1e300 is the largest magnitude taken: sums of the rollups must not overflow float8 (PostgreSQL fails on it).
    expect(out.accepted).toEqual([
      { monitor_id: M1, tag_id: "a", ts: 2000, value: 1.5 },
      { monitor_id: M1, tag_id: "a", ts: 2001, value: 1e300 },
    ]);
    expect(out.rejected.map((r) => r.reason)).toEqual([
      "Reading older than the site's retention period",
      "Reading time is in the future",
      "Invalid input: ts",
      "Invalid input: value",
      "Invalid input: value",
      "Invalid input: tag_id",
      "Invalid input: reading",
    ]);
  });
});

describe("registration", () => {
  const monitors = new Map([
    [M1, monitor(M1, "p1", "f1", [], "a1")],
    [M2, monitor(M2, "p1", "f2", [])],
  ]);
  const target = { plant_id: "p1", function_id: "f1", function_enabled_in_registration: false };
  const item = (monitor_id: string, extra: Record<string, unknown> = {}) => ({ monitor_id, slave_id: "1", registered_by_asset: false, ...extra });

  it("takes monitors of the pipeline's function, others only with function_enabled_in_registration", () => {
    expect(registrationIsValid(target, [], [item(M1)], monitors)).toBe(true);
    expect(registrationIsValid(target, [], [item(M2)], monitors)).toBe(false);
    expect(registrationIsValid({ ...target, function_enabled_in_registration: true }, [], [item(M2)], monitors)).toBe(true);
    expect(registrationIsValid({ ...target, plant_id: "p2", function_enabled_in_registration: true }, [], [item(M2)], monitors)).toBe(false);
  });

  it("refuses a duplicate, a wrong function or asset claim, and an unknown tag monitor", () => {
    expect(registrationIsValid(target, [], [item(M1), item(M1)], monitors)).toBe(false);
    expect(registrationIsValid(target, [], [item(M1, { function_id: "f9" })], monitors)).toBe(false);
    expect(registrationIsValid(target, [], [item(M1, { registered_by_asset: true, asset_id: "a2" })], monitors)).toBe(false);
    expect(registrationIsValid(target, [], [item(M1, { registered_by_asset: true, asset_id: "a1" })], monitors)).toBe(true);
    expect(registrationIsValid(target, [{ monitor_id: "33333333-3333-4333-8333-333333333333" }], [], monitors)).toBe(false);
  });
});

describe("edge body rules", () => {
  it("names missing keys by their last segment", () => {
    expect(leafKey("settings.config.database")).toBe("database");
    expect(leafKey("tags[3].scale")).toBe("scale");
  });

  it("checks SQL's data type before its settings", () => {
    expect(checkEdgeBody({ data_type: "Energy", data_source_subtype: "SQL", settings: {}, tags: [] })?.message).toBe("SQL gateway only supports Production data type");
    expect(checkEdgeBody({ data_type: "Production", data_source_subtype: "SQL", settings: {}, tags: [] })?.message).toBe("Insufficient input: mac_address");
  });

  it("names the input at fault", () => {
    expect(checkEdgeBody({ data_type: "Energy", data_source_subtype: "SQL", settings: {}, tags: [] })?.field).toBe("data_type");
    expect(checkEdgeBody({ data_type: "Production", data_source_subtype: "SQL", settings: {}, tags: [] })?.field).toBe("settings.mac_address");
  });
});

describe("partitions and retention", () => {
  it("names day partitions in UTC", () => {
    expect(partitionDdl("20251122")).toBe(
      "CREATE TABLE IF NOT EXISTS readings_20251122 PARTITION OF readings FOR VALUES FROM ('2025-11-22T00:00:00.000Z') TO ('2025-11-23T00:00:00.000Z')",
    );
    const noon = Date.UTC(2025, 10, 22, 12);
    expect(daysAround(noon, 1)).toEqual(["20251121", "20251122", "20251123"]);
    expect(daysOf([{ monitor_id: M1, tag_id: "a", ts: noon, value: 0 }, { monitor_id: M1, tag_id: "a", ts: noon + DAY, value: 0 }])).toEqual(["20251122", "20251123"]);
  });

  it("drops the days every site is done with and deletes the rest per site", () => {
    const now = Date.UTC(2025, 10, 22, 12);
    const days = ["20251110", "20251115", "20251118", "20251119", "20251122"];
    const plan = retentionPlan(now, days, [
      { site_id: "a", retention_days: 3 },
      { site_id: "b", retention_days: 5 },
    ]);
    // b's cutoff is 17 Nov 12:00: days ending by then go.
    expect(plan.drop).toEqual(["20251110", "20251115"]);
    // a's cutoff (19 Nov 12:00) cuts into days that stay; b has nothing left before its own.
    expect(plan.deleteBefore).toEqual([{ site_id: "a", before: now - 3 * DAY }]);
    expect(retentionPlan(now, days, [])).toEqual({ drop: [], deleteBefore: [] });
  });
});

describe("SQL connect", () => {
  const cols = [
    { name: "ts", type: "timestamp" },
    { name: "line", type: "integer" },
    { name: "label", type: "TEXT" },
  ];

  it("selects columns by the query's form", () => {
    expect(selectColumns(cols, { types: false })).toEqual(["ts", "line", "label"]);
    expect(selectColumns(cols, { time_field: "ts", types: false })).toEqual(["line", "label"]);
    expect(selectColumns(cols, { time_field: "ts", types: true })).toEqual(["integer", "TEXT"]);
    expect(selectColumns(cols, { time_field: "ts", ignore: ["text"], types: false })).toEqual(["line"]);
  });

  it("takes ignore_type as a list or a JSON list, nothing else", () => {
    expect(ignoreTypesOf(["Int"])).toEqual(["int"]);
    expect(ignoreTypesOf('["text"]')).toEqual(["text"]);
    expect(() => ignoreTypesOf("text")).toThrow("ignore_type must be a list");
    expect(() => ignoreTypesOf("{}")).toThrow("ignore_type must be a list");
    expect(ignoreTypesOf(undefined)).toBeUndefined();
  });

  it("chooses the dialect by the body, else the port", () => {
    expect(dialectOf({ port: 3306 })).toBe("mysql");
    expect(dialectOf({ port: 1433 })).toBe("mssql");
    expect(dialectOf({ port: 6432 })).toBe("postgres");
    expect(dialectOf({ port: 3306, dialect: "postgres" })).toBe("postgres");
  });
});

describe("array literals", () => {
  it("quotes text elements and escapes quotes and backslashes", () => {
    expect(arrayText("vib")).toBe('"vib"');
    expect(arrayText('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(arrayText("a,b {c}")).toBe('"a,b {c}"');
  });
});
