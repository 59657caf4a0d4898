import { energyMetrics, kwhToMwh, percentOfTotal, roleOfUnit } from "../../../services/ems/energy";
import { increasesByBucket, meansByBucket, mergeRollups, quarterOf, rollupReadings, type Rollup } from "../../../services/ems/rollup";

const Q = 15 * 60_000;
const names = (id: string) => ({
  monitor_id: id, monitor_name: id, function_id: "f", function_name: "F", plant_id: "p", plant_name: "P", site_id: "s", site_name: "S",
});

/** A counter read every minute from `start`, rising by `perMinute` kWh. */
function counter(start: number, minutes: number, perMinute: number, from = 0) {
  return Array.from({ length: minutes + 1 }, (_, i) => ({ monitor_id: "m", tag_id: "kwh", ts: start + i * 60_000, value: from + i * perMinute }));
}

describe("rollups", () => {
  it("folds readings into quarter hours with first, last, min, max, sum and count", () => {
    const t0 = Date.UTC(2025, 0, 1);
    const rows = rollupReadings([
      { monitor_id: "m", tag_id: "v", ts: t0 + 60_000, value: 230 },
      { monitor_id: "m", tag_id: "v", ts: t0, value: 220 },
      { monitor_id: "m", tag_id: "v", ts: t0 + 14 * 60_000, value: 240 },
      { monitor_id: "m", tag_id: "v", ts: t0 + 15 * 60_000, value: 100 },
    ]);
    expect(rows).toEqual([
      { monitor_id: "m", tag_id: "v", bucket: t0, n: 3, sum: 690, min: 220, max: 240, first_ts: t0, first_value: 220, last_ts: t0 + 14 * 60_000, last_value: 240 },
      { monitor_id: "m", tag_id: "v", bucket: t0 + Q, n: 1, sum: 100, min: 100, max: 100, first_ts: t0 + Q, first_value: 100, last_ts: t0 + Q, last_value: 100 },
    ]);
    expect(quarterOf(t0 + Q - 1)).toBe(t0);
  });

  it("merges in any order to the same row", () => {
    const t0 = Date.UTC(2025, 0, 1);
    const [a] = rollupReadings(counter(t0, 6, 1).slice(0, 4));
    const [b] = rollupReadings(counter(t0, 6, 1).slice(4));
    expect(mergeRollups(a, b)).toEqual(mergeRollups(b, a));
    expect(mergeRollups(a, b)).toEqual(rollupReadings(counter(t0, 6, 1))[0]);
  });
});

describe("consumption from a kWh counter", () => {
  const t0 = Date.UTC(2025, 0, 1);
  const rows = (readings: ReturnType<typeof counter>): Rollup[] => rollupReadings(readings).sort((a, b) => a.bucket - b.bucket);

  it("a counter rising 1,000 kWh is 1 MWh, split by bucket without losing the steps between them", () => {
    const r = rows(counter(t0, 1000, 1, 5_000));
    const [total] = increasesByBucket(r, [t0]);
    expect(total).toBe(1000);
    expect(kwhToMwh(total)).toBe(1);
    const hourly = increasesByBucket(r, Array.from({ length: 17 }, (_, i) => t0 + i * 3_600_000));
    expect(hourly[0]).toBe(59);
    expect(hourly[1]).toBe(60);
    expect(hourly.reduce((a, b) => a + b, 0)).toBe(1000);
  });

  it("counts through a meter reset", () => {
    const readings = [...counter(t0, 10, 1, 990), ...counter(t0 + 11 * 60_000, 20, 1, 0)];
    const [total] = increasesByBucket(rows(readings), [t0]);
    expect(total).toBe(10 + 0 + 20);
  });

  it("means are taken over readings, not buckets", () => {
    const r = rollupReadings([
      { monitor_id: "m", tag_id: "kw", ts: t0, value: 10 },
      { monitor_id: "m", tag_id: "kw", ts: t0 + 60_000, value: 20 },
      { monitor_id: "m", tag_id: "kw", ts: t0 + Q, value: 60 },
    ]);
    expect(meansByBucket(r, [t0])).toEqual([30]);
    expect(meansByBucket(r, [t0, t0 + Q, t0 + 2 * Q])).toEqual([15, 60, null]);
  });
});

describe("energy metrics object", () => {
  it("recognises tags by unit", () => {
    expect(roleOfUnit("kWh")).toEqual({ role: "energy", factor: 1 });
    expect(roleOfUnit("KW")).toEqual({ role: "power", factor: 1 });
    expect(roleOfUnit("V")?.role).toBe("voltage");
    expect(roleOfUnit("A")?.role).toBe("current");
    expect(roleOfUnit("mm/s")).toBeUndefined();
  });

  it("percent_of_total sums to 100, and is 0 with nothing consumed", () => {
    const p = percentOfTotal([1, 2, 3.5, 0.25]);
    expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(100, 10);
    expect(percentOfTotal([0, 0])).toEqual([0, 0]);
  });

  it("builds the spec's object with MWh, KW, V and A", () => {
    const [a, b] = energyMetrics([
      { names: names("a"), figures: { consumptionKwh: 1000, powerKw: 41.5, voltageV: 400, currentA: 60 } },
      { names: names("b"), figures: { consumptionKwh: 3000, powerKw: 125, voltageV: 398, currentA: 181 } },
    ]);
    expect(a).toEqual({
      ...names("a"),
      total_consumption: 1,
      percent_of_total: 25,
      total_energy: 4,
      energy_unit: "MWh",
      current_unit: "A",
      power_unit: "KW",
      Voltage: 400,
      voltage_unit: "V",
      Current: 60,
      Power: 41.5,
    });
    expect(b.percent_of_total).toBe(75);
  });

  it("reports a counter's increase as the meter read it, without float noise", () => {
    const [a, b] = energyMetrics([
      { names: names("a"), figures: { consumptionKwh: 100.797 - 100, powerKw: (0.1 + 0.2) / 1, voltageV: 415.1, currentA: 0 } },
      { names: names("b"), figures: { consumptionKwh: 2 * (100.797 - 100), powerKw: 0, voltageV: 0, currentA: 0 } },
    ]);
    expect(100.797 - 100).not.toBe(0.797); // the noise this is about
    expect(a).toMatchObject({ total_consumption: 0.000797, total_energy: 0.002391, Power: 0.3, percent_of_total: 33.333333333 });
    expect(b!.total_consumption).toBe(0.001594);
  });
});
