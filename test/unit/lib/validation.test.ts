import { nulPath } from "../../../lib/validation";

describe("nulPath: where params hold U+0000, which PostgreSQL cannot store", () => {
  it("names the first string or key that holds it, by the path of the params", () => {
    expect(nulPath({ watcher_name: "Bearing\u0000watch" })).toBe("watcher_name");
    expect(nulPath({ triggers: [{ name: "ok" }, { name: "hot\u0000" }] })).toBe("triggers[1].name");
    expect(nulPath({ tags: [{ thresholds: { "warn\u0000ing": "1" } }] })).toBe("tags[0].thresholds.warn\u0000ing");
    expect(nulPath({ readings: [{ tag_id: "t", value: 1 }, { tag_id: "t\u0000", value: 2 }] })).toBe("readings[1].tag_id");
  });

  it("finds none in clean params, numbers and nulls included", () => {
    expect(nulPath({ a: "ok", b: [1, 2, null, { c: true }], d: null })).toBeUndefined();
    expect(nulPath({ samples: Array.from({ length: 65536 }, (_, i) => i / 7) })).toBeUndefined();
  });
});
