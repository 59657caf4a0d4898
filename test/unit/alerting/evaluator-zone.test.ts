/**
 * Zone conditions (`zone:C`, docs/api-tour.md "Severity"): checked, compiled with the asset's
 * ISO 20816-3 boundaries, evaluated without deadband.
 */
import { initialState, step, type Reading, type TriggerRule, type Transition } from "../../../services/alerting/evaluator";
import { checkTriggers, compileRule, CREATE_TEXTS, type ConditionBody, type TriggerBody } from "../../../services/alerting/triggers";

const M = "m1";
const trigger = (condition: Partial<ConditionBody>, over: Partial<TriggerBody> = {}): TriggerBody => ({
  id: "t1",
  name: "Vibration zone",
  minimum_duration: "0s",
  condition: [{ comparison: ">=", monitor_id: M, tag_id: "vib", threshold: "zone:C", ...condition }],
  notifyTo: { email: true, sms: false, whatsapp: false, users: ["ops@example.com"] },
  severity: 1,
  trigger_relation: "AND",
  ...over,
});
/** Group 1 rigid (kw ≥ 300): A < 2.3 ≤ B < 4.5 ≤ C < 7.1 ≤ D. */
const GROUP_1_RIGID = new Map([[M, { ab: 2.3, bc: 4.5, cd: 7.1 }]]);
const at = (i: number, value: number): Reading => ({ monitor_id: M, tag_id: "vib", ts: 1_000_000 + i * 1000, value });

function run(r: TriggerRule, values: number[]) {
  let state = initialState(r);
  const transitions: Transition["kind"][] = [];
  values.forEach((v, i) => {
    const s = step(r, state, at(i, v));
    state = s.state;
    if (s.transition) transitions.push(s.transition.kind);
  });
  return transitions;
}

describe("zone conditions", () => {
  it("accepts zone:A-D with >= and ==, and refuses other comparisons and zones", () => {
    expect(checkTriggers([trigger({})], CREATE_TEXTS, false)).toBeNull();
    expect(checkTriggers([trigger({ comparison: "==", threshold: "zone:D" })], CREATE_TEXTS, false)).toBeNull();
    for (const comparison of [">", "<", "<=", "!="] as const) {
      expect(checkTriggers([trigger({ comparison })], CREATE_TEXTS, false)).toBe("Invalid input: triggers[0].condition[0].threshold");
    }
    expect(checkTriggers([trigger({ threshold: "zone:E" })], CREATE_TEXTS, false)).toBe("Invalid input: triggers[0].condition[0].threshold");
  });

  it("compiles the zone's lowest value as threshold, from the monitor's boundaries (else group 2 rigid)", () => {
    expect(compileRule(trigger({}), GROUP_1_RIGID).conditions[0]).toEqual({
      monitor_id: M,
      tag_id: "vib",
      comparison: ">=",
      threshold: 4.5,
      zone: { level: "C", bounds: { ab: 2.3, bc: 4.5, cd: 7.1 } },
    });
    expect(compileRule(trigger({})).conditions[0].threshold).toBe(2.8);
    // A numeric threshold compiles as before.
    expect(compileRule(trigger({ threshold: "4.5" })).conditions[0]).toEqual({ monitor_id: M, tag_id: "vib", comparison: ">=", threshold: 4.5 });
  });

  it(">= zone:C opens on the boundary into C, stays in D, and closes back in B, deadband or not", () => {
    for (const deadband of [undefined, "3"]) {
      const r = compileRule(trigger({}, deadband ? { deadband } : {}), GROUP_1_RIGID);
      expect(run(r, [2.0, 4.49, 4.5, 8.0, 4.49])).toEqual(["open", "close"]);
    }
  });

  it("== zone:C holds in C only: D closes it", () => {
    const r = compileRule(trigger({ comparison: "==" }), GROUP_1_RIGID);
    expect(run(r, [4.5, 7.0, 7.1, 6.0])).toEqual(["open", "close", "open"]);
  });
});
