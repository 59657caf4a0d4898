/**
 * no_data (docs/api-tour.md, "Alarm management") as a pure rule (nodata.ts): a due series opens an
 * alert only while its pipeline runs, started when the silence reached no_data; otherwise its
 * silence counts again from now. The trigger field: compiled, stored, validated like clear_delay.
 */
import { decideSilence, dueAfter, silentConditions, watchedSeries } from "../../../services/alerting/nodata";
import type { TriggerRule } from "../../../services/alerting/evaluator";
import { checkTriggers, compileRule, normalizeTriggers, CREATE_TEXTS, type TriggerBody } from "../../../services/alerting/triggers";

const rule = (over: Partial<TriggerRule> = {}): TriggerRule => ({
  conditions: [
    { monitor_id: "m1", tag_id: "temp", comparison: ">=", threshold: 80 },
    { monitor_id: "m1", tag_id: "temp", comparison: "<", threshold: 90 },
    { monitor_id: "m2", tag_id: "vib", comparison: ">", threshold: 7 },
  ],
  relation: "AND",
  minimumMs: 0,
  noDataMs: 3000,
  ...over,
});

describe("a due series", () => {
  const s = { due_at: 10_000, no_data_ms: 3000 };

  it("opens an alert started when the silence reached no_data while its pipeline runs", () => {
    expect(decideSilence(s, true, 12_500)).toEqual({ kind: "open", start: 10_000 });
  });

  it.each([
    ["stopped (or starting, in error)", false],
    ["unknown to alerting", null],
  ])("is deferred a whole no_data from now when its pipeline is %s", (_what, running) => {
    expect(decideSilence(s, running, 12_500)).toEqual({ kind: "defer", due_at: 15_500 });
  });

  it("is due no_data after it was last heard", () => {
    expect(dueAfter(7000, 3000)).toBe(10_000);
  });
});

describe("the series a trigger watches", () => {
  it("are its conditions' distinct (monitor, tag), only with no_data", () => {
    expect(watchedSeries(rule())).toEqual([
      { monitor_id: "m1", tag_id: "temp" },
      { monitor_id: "m2", tag_id: "vib" },
    ]);
    expect(watchedSeries(rule({ noDataMs: undefined }))).toEqual([]);
    expect(watchedSeries(rule({ conditions: [] }))).toEqual([]);
  });

  it("name, in an alert, the conditions of the silent series", () => {
    expect(silentConditions(rule(), [{ monitor_id: "m2", tag_id: "vib" }])).toEqual([{ monitor_id: "m2", tag_id: "vib", comparison: ">", threshold: 7 }]);
    expect(silentConditions(rule(), [{ monitor_id: "m1", tag_id: "temp" }])).toHaveLength(2);
  });
});

describe("the no_data trigger field", () => {
  const trigger = (over: Partial<TriggerBody> = {}): TriggerBody => ({
    id: "t1",
    name: "Bearing hot",
    minimum_duration: "0s",
    condition: [{ comparison: ">=", monitor_id: "m1", tag_id: "temp", threshold: "80" }],
    notifyTo: { email: true, sms: false, whatsapp: false, users: ["a@example.com"] },
    severity: 1,
    trigger_relation: "AND",
    ...over,
  });

  it("compiles into the rule only when sent (a rule without it is the rule of before)", () => {
    expect(compileRule(trigger())).not.toHaveProperty("noDataMs");
    expect(compileRule(trigger({ no_data: "5m" }))).toMatchObject({ noDataMs: 300_000 });
  });

  it("is stored trimmed, only when sent", () => {
    expect(normalizeTriggers([trigger()])[0]).not.toHaveProperty("no_data");
    expect(normalizeTriggers([trigger({ no_data: " 3s " })])[0]).toMatchObject({ no_data: "3s" });
  });

  it.each(["soon", "-5s", "0s", "5 minutes", ""])("refuses %j", (no_data) => {
    expect(checkTriggers([trigger({ no_data })], CREATE_TEXTS, false)).toBe("Invalid input: triggers[0].no_data");
  });

  it("accepts a duration", () => {
    expect(checkTriggers([trigger({ no_data: "1.5s" })], CREATE_TEXTS, false)).toBeNull();
  });
});
