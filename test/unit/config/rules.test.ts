/** The config service's pure rules, without a broker or a database. */
import { MSG } from "../../../services/config/messages";
import {
  compact,
  functionDeleteRefusal,
  isCoordinate,
  isTimeZone,
  normalizeTags,
  NUMERIC_TEXT,
  parseDataType,
  parseYesNo,
  plantDeleteRefusal,
  scopeKey,
  scopeParams,
  scopeSql,
} from "../../../services/config/rules";

const SITE = "11111111-1111-4111-8111-111111111111";
const PLANT = "22222222-2222-4222-8222-222222222222";
const NOTHING = "00000000-0000-0000-0000-000000000000";

describe("scope as SQL parameters", () => {
  it("is unrestricted for the SaaS roles, site-wide for a site-admin, plant-wide below", () => {
    expect(scopeParams({ kind: "all" })).toEqual([null, null]);
    expect(scopeParams({ kind: "site", site_id: SITE })).toEqual([SITE, null]);
    expect(scopeParams({ kind: "plant", site_id: SITE, plant_id: PLANT })).toEqual([SITE, PLANT]);
  });

  it("restricts to nothing when the caller's ids are not ids (a user without a site sees nothing)", () => {
    expect(scopeParams({ kind: "site", site_id: "" })).toEqual([NOTHING, null]);
    expect(scopeParams({ kind: "plant", site_id: SITE, plant_id: "*" })).toEqual([SITE, NOTHING]);
  });

  it("keys caches by scope and numbers its SQL parameters", () => {
    expect(scopeKey({ kind: "all" })).toBe("*/*");
    expect(scopeKey({ kind: "plant", site_id: SITE, plant_id: PLANT })).toBe(`${SITE}/${PLANT}`);
    expect(scopeSql(3, "q")).toBe("($3::uuid IS NULL OR q.site_id = $3::uuid) AND ($4::uuid IS NULL OR q.plant_id = $4::uuid)");
  });
});

describe("delete refusals", () => {
  it("names monitors, assets or both for a function", () => {
    expect(functionDeleteRefusal(0, 0)).toBeNull();
    expect(functionDeleteRefusal(2, 0)).toBe(MSG.functionHasMonitors);
    expect(functionDeleteRefusal(0, 1)).toBe(MSG.functionHasAssets);
    expect(functionDeleteRefusal(1, 1)).toBe(MSG.functionHasBoth);
  });

  it("checks a plant's events, pipelines, assets and functions in the spec's order", () => {
    const none = { events: 0, pipelines: 0, assets: 0, functions: 0 };
    expect(plantDeleteRefusal(none)).toBeNull();
    expect(plantDeleteRefusal({ events: 1, pipelines: 1, assets: 1, functions: 1 })).toBe("Cannot delete Plant as Events exist on it");
    expect(plantDeleteRefusal({ ...none, pipelines: 1, assets: 1, functions: 1 })).toBe("Cannot delete Plant as Pipelines exist on it");
    expect(plantDeleteRefusal({ ...none, assets: 3, functions: 1 })).toBe("Cannot delete Plant as Assets exist on it");
    expect(plantDeleteRefusal({ ...none, functions: 1 })).toBe("Cannot delete Plant as Functions exist on it");
  });
});

describe("input values", () => {
  it("reads yes/no in any case and nothing else", () => {
    expect(parseYesNo("Yes")).toBe(true);
    expect(parseYesNo(" no ")).toBe(false);
    expect(parseYesNo("true")).toBeUndefined();
  });

  it("knows the data_type filter values", () => {
    expect(parseDataType("Energy")).toBe("energy");
    expect(parseDataType("all")).toBe("all");
    expect(parseDataType("production")).toBeUndefined();
  });

  it("accepts IANA time zones only", () => {
    expect(isTimeZone("Asia/Kolkata")).toBe(true);
    expect(isTimeZone("UTC")).toBe(true);
    expect(isTimeZone("Mars/Olympus")).toBe(false);
  });

  it("accepts coordinates as decimal text within range", () => {
    expect(isCoordinate("18.52", 90)).toBe(true);
    expect(isCoordinate("-179.9", 180)).toBe(true);
    expect(isCoordinate("", 90)).toBe(true);
    expect(isCoordinate("91", 90)).toBe(false);
    expect(isCoordinate("north", 90)).toBe(false);
  });

  it("takes thresholds as numeric text, empty meaning unset", () => {
    for (const ok of ["4.5", "-2", "0", "1e3", ".5", ""]) expect(NUMERIC_TEXT.test(ok)).toBe(true);
    for (const bad of ["hot", "4,5", "1.2.3", " "]) expect(NUMERIC_TEXT.test(bad)).toBe(false);
  });

  it("drops null and undefined attributes", () => {
    expect(compact({ kw: 5, volts: null, amp: undefined, phases: "3" })).toEqual({ kw: 5, phases: "3" });
  });
});

describe("monitor tags", () => {
  it("gives a tag without an id a fresh one and fills missing texts", () => {
    const tags = normalizeTags([{ tag_name: "Temp" }, { tag_id: "keep", tag_name: "Speed", tag_unit: "rpm", thresholds: { warning: "10" } }]);
    expect(tags).toEqual([
      { tag_id: expect.stringMatching(/^[0-9a-f-]{36}$/), tag_name: "Temp", tag_desc: "", tag_unit: "", thresholds: {} },
      { tag_id: "keep", tag_name: "Speed", tag_desc: "", tag_unit: "rpm", thresholds: { warning: "10" } },
    ]);
  });

  it("refuses two tags with one id", () => {
    expect(normalizeTags([{ tag_id: "a", tag_name: "x" }, { tag_id: "a", tag_name: "y" }])).toEqual({ invalid: "tags[1].tag_id" });
  });
});
