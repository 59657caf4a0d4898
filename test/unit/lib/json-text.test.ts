/** A cached list's JSON text: made once, equal to the encoding, lost by any copy, and the value frozen so the two cannot part. */
import { jsonTextOf, withJsonText } from "../../../lib/json-text";

describe("withJsonText", () => {
  it("gives the value its JSON text and freezes it deeply", () => {
    const list = withJsonText([{ asset_id: "a", attributes: { kw: 7.5 } }, { asset_id: "b", attributes: {} }]);
    expect(jsonTextOf(list)).toBe(JSON.stringify(list));
    expect(jsonTextOf(list)).toBe(jsonTextOf(list));
    expect(Object.isFrozen(list) && Object.isFrozen(list[0]) && Object.isFrozen(list[0]!.attributes)).toBe(true);
    expect(() => (list[0]!.attributes as { kw?: number }).kw = 1).toThrow(TypeError);
  });

  it("is not carried by a copy, a slice or a JSON round trip", () => {
    const list = withJsonText([{ n: 1 }, { n: 2 }]);
    expect(jsonTextOf(list.slice(1))).toBeUndefined();
    expect(jsonTextOf([...list])).toBeUndefined();
    expect(jsonTextOf(JSON.parse(JSON.stringify(list)))).toBeUndefined();
    expect(jsonTextOf({ ...list })).toBeUndefined();
  });

  it("has no text for anything else", () => {
    expect(jsonTextOf([1, 2])).toBeUndefined();
    expect(jsonTextOf(null)).toBeUndefined();
    expect(jsonTextOf("text")).toBeUndefined();
  });
});
