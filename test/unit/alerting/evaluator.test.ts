import {
  compare,
  initialState,
  step,
  holdingConditions,
  type Comparison,
  type Reading,
  type TriggerRule,
  type TriggerState,
  type Transition,
} from "../../../services/alerting/evaluator";

const M = "m1";
const rule = (over: Partial<TriggerRule> = {}): TriggerRule => ({
  conditions: [{ monitor_id: M, tag_id: "temp", comparison: ">", threshold: 80 }],
  relation: "AND",
  minimumMs: 2000,
  ...over,
});

/** Feeds readings one by one and returns every transition with the final state. */
function run(r: TriggerRule, readings: Reading[], from: TriggerState = initialState(r)) {
  let state = from;
  const transitions: Transition[] = [];
  for (const reading of readings) {
    const s = step(r, state, reading);
    state = s.state;
    if (s.transition) transitions.push(s.transition);
  }
  return { state, transitions };
}

const at = (ts: number, value: number, tag_id = "temp", monitor_id = M): Reading => ({ monitor_id, tag_id, ts, value });

describe("comparisons", () => {
  it.each<[Comparison, number, boolean, boolean, boolean]>([
    // operator, threshold, value below, value equal, value above
    ["<", 10, true, false, false],
    ["<=", 10, true, true, false],
    [">", 10, false, false, true],
    [">=", 10, false, true, true],
    ["==", 10, false, true, false],
    ["!=", 10, true, false, true],
  ])("%s %d", (op, threshold, below, equal, above) => {
    expect(compare(threshold - 0.5, op, threshold)).toBe(below);
    expect(compare(threshold, op, threshold)).toBe(equal);
    expect(compare(threshold + 0.5, op, threshold)).toBe(above);
  });

  it.each<[Comparison, number, number]>([
    ["<", 50, 40],
    ["<=", 50, 50],
    [">", 50, 60],
    [">=", 50, 50],
    ["==", 50, 50],
    ["!=", 50, 49],
  ])("a trigger with %s %d opens on %d held long enough", (comparison, threshold, value) => {
    const r = rule({ conditions: [{ monitor_id: M, tag_id: "temp", comparison, threshold }], minimumMs: 1000 });
    const { transitions } = run(r, [at(0, value), at(1000, value), at(1001, value)]);
    expect(transitions).toEqual([{ kind: "open", start: 0, at: 1001 }]);
  });
});

describe("minimum duration on the readings' own timestamps", () => {
  it("held exactly the minimum: no alert; one millisecond longer: alert", () => {
    const r = rule();
    const exact = run(r, [at(10_000, 90), at(11_000, 91), at(12_000, 92)]);
    expect(exact.transitions).toEqual([]);
    const longer = run(r, [at(10_000, 90), at(11_000, 91), at(12_000, 92), at(12_001, 93)]);
    expect(longer.transitions).toEqual([{ kind: "open", start: 10_000, at: 12_001 }]);
  });

  it("a break in the hold starts the clock again", () => {
    const r = rule();
    const { transitions } = run(r, [at(0, 90), at(1500, 70), at(2500, 90), at(4000, 90), at(4501, 90)]);
    expect(transitions).toEqual([{ kind: "open", start: 2500, at: 4501 }]);
  });

  it("with 0s the first reading past the threshold opens", () => {
    const r = rule({ minimumMs: 0 });
    expect(run(r, [at(5, 70)]).transitions).toEqual([]);
    expect(run(r, [at(5, 70), at(6, 81)]).transitions).toEqual([{ kind: "open", start: 6, at: 6 }]);
  });

  it("wall-clock time does not matter, only the readings' timestamps", () => {
    const r = rule({ minimumMs: 3_600_000 });
    const { transitions } = run(r, [at(0, 90), at(3_600_001, 90)]);
    expect(transitions).toEqual([{ kind: "open", start: 0, at: 3_600_001 }]);
  });
});

describe("closing and one active alert per trigger", () => {
  it("closes on the first reading after which the condition no longer holds", () => {
    const r = rule({ minimumMs: 0 });
    const { transitions, state } = run(r, [at(0, 90), at(1000, 95), at(7000, 20)]);
    expect(transitions).toEqual([
      { kind: "open", start: 0, at: 0 },
      { kind: "close", start: 0, end: 7000 },
    ]);
    expect(state.activeSince).toBeNull();
  });

  it("opens only once while the condition keeps holding", () => {
    const r = rule({ minimumMs: 1000 });
    const readings = Array.from({ length: 50 }, (_, i) => at(i * 500, 90 + i));
    expect(run(r, readings).transitions).toEqual([{ kind: "open", start: 0, at: 1500 }]);
  });

  it("opens again after a close once the condition holds long enough again", () => {
    const r = rule({ minimumMs: 1000 });
    const { transitions } = run(r, [at(0, 90), at(1001, 90), at(2000, 10), at(3000, 90), at(4000, 90), at(4001, 90)]);
    expect(transitions).toEqual([
      { kind: "open", start: 0, at: 1001 },
      { kind: "close", start: 0, end: 2000 },
      { kind: "open", start: 3000, at: 4001 },
    ]);
  });

  it("a state restored with an active alert does not open a second one", () => {
    const r = rule({ minimumMs: 0 });
    const restored: TriggerState = { ...initialState(r, 100), clock: 100 };
    expect(run(r, [at(200, 99), at(300, 99)], restored).transitions).toEqual([]);
    expect(run(r, [at(200, 99), at(300, 1)], restored).transitions).toEqual([{ kind: "close", start: 100, end: 300 }]);
  });
});

describe("out-of-order and repeated readings", () => {
  it("ignores a reading older than the last one of the same series", () => {
    const r = rule({ minimumMs: 1000 });
    // The late reading at 500 says "below", but the series has already moved past it.
    const { transitions } = run(r, [at(0, 90), at(1000, 90), at(500, 10), at(1001, 90)]);
    expect(transitions).toEqual([{ kind: "open", start: 0, at: 1001 }]);
  });

  it("a redelivered batch changes nothing", () => {
    const r = rule({ minimumMs: 0 });
    const batch = [at(0, 90), at(1000, 10)];
    const first = run(r, batch);
    const again = run(r, batch, first.state);
    expect(first.transitions).toHaveLength(2);
    expect(again.transitions).toEqual([]);
    expect(again.state).toEqual(first.state);
  });

  it("another series may be behind without being ignored", () => {
    const r = rule({
      conditions: [
        { monitor_id: M, tag_id: "a", comparison: ">", threshold: 1 },
        { monitor_id: M, tag_id: "b", comparison: ">", threshold: 1 },
      ],
      minimumMs: 0,
    });
    const { transitions } = run(r, [at(1000, 5, "a"), at(900, 5, "b")]);
    expect(transitions).toEqual([{ kind: "open", start: 1000, at: 1000 }]);
  });

  it("a reading for another monitor or tag is not the trigger's", () => {
    const r = rule({ minimumMs: 0 });
    const s = step(r, initialState(r), at(0, 99, "temp", "other"));
    expect(s.changed).toBe(false);
    expect(step(r, initialState(r), at(0, 99, "pressure")).changed).toBe(false);
  });
});

describe("AND and OR", () => {
  const two = (relation: "AND" | "OR"): TriggerRule => ({
    relation,
    minimumMs: 1000,
    conditions: [
      { monitor_id: M, tag_id: "temp", comparison: ">=", threshold: 80 },
      { monitor_id: "m2", tag_id: "vib", comparison: ">", threshold: 7 },
    ],
  });

  it("AND needs every condition; the hold starts when the last one joins", () => {
    const { transitions } = run(two("AND"), [
      at(0, 85),
      at(1500, 85),
      at(1600, 8, "vib", "m2"),
      at(2600, 9, "vib", "m2"),
      at(2700, 86),
    ]);
    expect(transitions).toEqual([{ kind: "open", start: 1600, at: 2700 }]);
  });

  it("AND closes as soon as one condition stops holding", () => {
    const { transitions } = run(two("AND"), [at(0, 85), at(0, 8, "vib", "m2"), at(2000, 85), at(2500, 1, "vib", "m2")]);
    expect(transitions).toEqual([
      { kind: "open", start: 0, at: 2000 },
      { kind: "close", start: 0, end: 2500 },
    ]);
  });

  it("AND with one condition never seen does not hold", () => {
    expect(run(two("AND"), [at(0, 85), at(5000, 85)]).transitions).toEqual([]);
  });

  it("OR holds while any condition holds and keeps its start across a hand-over", () => {
    const { transitions, state } = run(two("OR"), [
      at(0, 85),
      at(600, 8, "vib", "m2"),
      at(800, 10), // temp stops, vibration still holds
      at(1200, 9, "vib", "m2"),
    ]);
    expect(transitions).toEqual([{ kind: "open", start: 0, at: 1200 }]);
    expect(holdingConditions(two("OR"), state).map((c) => c.rule.tag_id)).toEqual(["vib"]);
  });

  it("OR closes when none holds", () => {
    const { transitions } = run(two("OR"), [at(0, 85), at(2000, 85), at(2100, 1, "vib", "m2"), at(2200, 10)]);
    expect(transitions).toEqual([
      { kind: "open", start: 0, at: 2000 },
      { kind: "close", start: 0, end: 2200 },
    ]);
  });

  it("a trigger without conditions never fires", () => {
    const r = rule({ conditions: [], minimumMs: 0 });
    expect(run(r, [at(0, 1000)]).transitions).toEqual([]);
  });
});
