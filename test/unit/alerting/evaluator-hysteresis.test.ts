/**
 * deadband (hysteresis on clear) and clear_delay (off-delay) in the pure evaluator
 * (docs/api-tour.md, "Alarm management"): a chattering signal opens N alerts without them and one
 * with; the state they need is in TriggerState, so a restart mid-signal (state through JSON)
 * changes nothing.
 */
import { initialState, step, type Reading, type TriggerRule, type TriggerState, type Transition } from "../../../services/alerting/evaluator";
import { compileRule, checkTriggers, normalizeTriggers, CREATE_TEXTS, type TriggerBody } from "../../../services/alerting/triggers";

const M = "m1";
const rule = (over: Partial<TriggerRule> = {}): TriggerRule => ({
  conditions: [{ monitor_id: M, tag_id: "temp", comparison: ">=", threshold: 80 }],
  relation: "AND",
  minimumMs: 0,
  ...over,
});
const at = (ts: number, value: number): Reading => ({ monitor_id: M, tag_id: "temp", ts, value });

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

/** 79 + 3·sin(2πt/10 s), one reading a second for two minutes: 76..82 around a threshold of 80. */
const sine = (seconds = 120): Reading[] =>
  Array.from({ length: seconds }, (_, i) => at(1_000_000 + i * 1000, Math.round((79 + 3 * Math.sin((2 * Math.PI * i) / 10)) * 1000) / 1000));

const opens = (t: Transition[]) => t.filter((x) => x.kind === "open").length;

describe("a chattering signal (a sine around the threshold)", () => {
  it("opens an alert every period without deadband or clear_delay", () => {
    const { transitions } = run(rule(), sine());
    expect(opens(transitions)).toBe(12);
    expect(transitions.filter((x) => x.kind === "close")).toHaveLength(12);
  });

  it("opens one alert with a deadband wider than the swing below the threshold", () => {
    const { transitions, state } = run(rule({ deadband: 5 }), sine());
    expect(transitions).toEqual([{ kind: "open", start: 1_001_000, at: 1_001_000 }]);
    expect(state.activeSince).toBe(1_001_000);
  });

  it("still chatters with a deadband narrower than the swing", () => {
    expect(opens(run(rule({ deadband: 1 }), sine()).transitions)).toBe(12);
  });

  it("opens one alert with a clear_delay longer than the signal's stretches below the threshold", () => {
    const { transitions } = run(rule({ clearDelayMs: 8000 }), sine());
    expect(transitions).toEqual([{ kind: "open", start: 1_001_000, at: 1_001_000 }]);
  });

  it("gives the same transitions when evaluation restarts mid-signal from the stored state", () => {
    for (const r of [rule({ deadband: 5 }), rule({ clearDelayMs: 8000 }), rule({ deadband: 1, clearDelayMs: 3000 })]) {
      const readings = [...sine(60), ...Array.from({ length: 20 }, (_, i) => at(1_060_000 + i * 1000, 60))];
      const whole = run(r, readings);
      for (const cut of [7, 23, 61]) {
        const first = run(r, readings.slice(0, cut));
        // What PostgreSQL keeps of it, read back by another replica or after a restart.
        const stored = JSON.parse(JSON.stringify(first.state)) as TriggerState;
        const second = run(r, readings.slice(cut), stored);
        expect([...first.transitions, ...second.transitions]).toEqual(whole.transitions);
        expect(second.state).toEqual(whole.state);
      }
    }
  });
});

describe("deadband", () => {
  it("a > condition still holds exactly at threshold − deadband, and stops just below", () => {
    const r = rule({ conditions: [{ monitor_id: M, tag_id: "temp", comparison: ">", threshold: 80 }], deadband: 2 });
    expect(run(r, [at(1, 81), at(2, 79), at(3, 78)]).transitions).toEqual([{ kind: "open", start: 1, at: 1 }]);
    expect(run(r, [at(1, 81), at(2, 78), at(3, 77.999)]).transitions).toEqual([
      { kind: "open", start: 1, at: 1 },
      { kind: "close", start: 1, end: 3 },
    ]);
  });

  it("a < condition stops holding only above threshold + deadband", () => {
    const r = rule({ conditions: [{ monitor_id: M, tag_id: "temp", comparison: "<", threshold: 10 }], deadband: 1.5 });
    expect(run(r, [at(1, 9), at(2, 11.5)]).transitions).toEqual([{ kind: "open", start: 1, at: 1 }]);
    expect(run(r, [at(1, 9), at(2, 11.6)]).transitions).toEqual([
      { kind: "open", start: 1, at: 1 },
      { kind: "close", start: 1, end: 2 },
    ]);
  });

  it("does not make a condition hold that did not: within the band from below nothing opens", () => {
    expect(run(rule({ deadband: 5 }), [at(1, 76), at(2, 79.9)]).transitions).toEqual([]);
  });

  it("is ignored by == and != (no side to widen)", () => {
    const r = rule({ conditions: [{ monitor_id: M, tag_id: "temp", comparison: "==", threshold: 5 }], deadband: 3 });
    expect(run(r, [at(1, 5), at(2, 6)]).transitions).toEqual([
      { kind: "open", start: 1, at: 1 },
      { kind: "close", start: 1, end: 2 },
    ]);
  });
});

describe("clear_delay", () => {
  it("closes once the condition has not held for the delay, at the reading that completes it", () => {
    const r = rule({ clearDelayMs: 5000 });
    const { transitions, state } = run(r, [at(0, 85), at(1000, 70), at(3000, 70), at(5999, 70), at(6000, 70), at(7000, 70)]);
    expect(transitions).toEqual([
      { kind: "open", start: 0, at: 0 },
      { kind: "close", start: 0, end: 6000 },
    ]);
    expect(state).toMatchObject({ activeSince: null, holdingSince: null, clearingSince: null });
  });

  it("keeps the same alert when the condition holds again within the delay, and times the delay afresh", () => {
    const r = rule({ clearDelayMs: 5000 });
    const { transitions } = run(r, [at(0, 85), at(1000, 70), at(4000, 85), at(5000, 70), at(9000, 70), at(10_000, 70)]);
    expect(transitions).toEqual([
      { kind: "open", start: 0, at: 0 },
      { kind: "close", start: 0, end: 10_000 },
    ]);
  });

  it("delays nothing while no alert is active, and leaves a rule without it as it was", () => {
    const r = rule({ clearDelayMs: 5000, minimumMs: 2000 });
    expect(run(r, [at(0, 85), at(1000, 70), at(2000, 85), at(4001, 85)]).transitions).toEqual([{ kind: "open", start: 2000, at: 4001 }]);
    expect("clearingSince" in run(rule(), [at(0, 85), at(1, 70)]).state).toBe(false);
  });
});

describe("trigger fields in the watcher body", () => {
  const trigger = (over: Partial<TriggerBody> = {}): TriggerBody => ({
    id: "t1",
    name: "hot",
    minimum_duration: "0s",
    condition: [{ comparison: ">=", monitor_id: M, tag_id: "temp", threshold: "80" }],
    notifyTo: { email: true, sms: false, whatsapp: false, users: ["u"] },
    severity: 1,
    trigger_relation: "AND",
    ...over,
  });

  it("compiles absent fields to the rule of before (its state kept) and present ones into the rule", () => {
    expect(compileRule(trigger())).toEqual({ conditions: [{ monitor_id: M, tag_id: "temp", comparison: ">=", threshold: 80 }], relation: "AND", minimumMs: 0 });
    expect(compileRule(trigger({ deadband: "2.5", clear_delay: "1m" }))).toMatchObject({ deadband: 2.5, clearDelayMs: 60_000 });
  });

  it("stores them as sent (trimmed text) and only when sent", () => {
    expect(normalizeTriggers([trigger()])[0]).not.toHaveProperty("deadband");
    expect(normalizeTriggers([trigger({ deadband: 3 as unknown as string, clear_delay: " 30s " })])[0]).toMatchObject({ deadband: "3", clear_delay: "30s" });
  });

  it.each([
    [{ deadband: "-1" }, "Invalid input: triggers[0].deadband"],
    [{ deadband: "abc" }, "Invalid input: triggers[0].deadband"],
    [{ deadband: "" }, "Invalid input: triggers[0].deadband"],
    [{ clear_delay: "5 minutes" }, "Invalid input: triggers[0].clear_delay"],
    [{ clear_delay: "-5s" }, "Invalid input: triggers[0].clear_delay"],
  ])("refuses %j", (over, message) => {
    expect(checkTriggers([trigger(over as Partial<TriggerBody>)], CREATE_TEXTS, false)).toBe(message);
  });

  it("accepts a deadband of 0 and a clear_delay of 0s", () => {
    expect(checkTriggers([trigger({ deadband: "0", clear_delay: "0s" })], CREATE_TEXTS, false)).toBeNull();
  });
});
