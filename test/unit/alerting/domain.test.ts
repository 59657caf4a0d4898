import { parseDuration } from "../../../services/alerting/duration";
import { severityKey, severityName } from "../../../services/alerting/severity";
import { isoWithOffset, parseIso, rangeOf } from "../../../services/alerting/time";
import { bucketSize, trendOf } from "../../../services/alerting/trend";

describe("durations", () => {
  it.each([
    ["0s", 0],
    ["2s", 2000],
    ["500ms", 500],
    ["5m", 300_000],
    ["1h", 3_600_000],
    ["1.5s", 1500],
    [" 10s ", 10_000],
  ])("%p is %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "5", "s", "-1s", "2 d", "2d", "1e3s", "abc", "31d", "1000h"])("%p is not a duration", (text) => {
    expect(parseDuration(text)).toBeNull();
  });

  it("is not a duration when not a string", () => {
    expect(parseDuration(5)).toBeNull();
    expect(parseDuration(null)).toBeNull();
  });
});

describe("severity", () => {
  it("maps 1 to High, 2 to Medium, 3 and above to Low", () => {
    expect([1, 2, 3, 4, 10].map(severityName)).toEqual(["High", "Medium", "Low", "Low", "Low"]);
    expect([1, 2, 3].map(severityKey)).toEqual(["high", "medium", "low"]);
  });
});

describe("times", () => {
  it("writes alert times in ISO 8601 with a numeric offset", () => {
    expect(isoWithOffset(Date.UTC(2025, 0, 31, 8, 15, 2, 345))).toBe("2025-01-31T08:15:02+00:00");
  });

  it("reads ISO 8601 dates and date-times, offset-less as UTC", () => {
    expect(parseIso("2025-01-31T08:00:00Z")).toBe(Date.UTC(2025, 0, 31, 8));
    expect(parseIso("2025-01-31T08:00:00")).toBe(Date.UTC(2025, 0, 31, 8));
    expect(parseIso("2025-01-31T10:00:00+02:00")).toBe(Date.UTC(2025, 0, 31, 8));
    // An unescaped `+` in a query string arrives as a space.
    expect(parseIso("2025-01-31T10:00:00 02:00")).toBe(Date.UTC(2025, 0, 31, 8));
    expect(parseIso("2025-01-31T08:00:00.000 00:00")).toBe(Date.UTC(2025, 0, 31, 8));
    expect(parseIso("2025-01-31 08:00")).toBe(Date.UTC(2025, 0, 31, 8));
    expect(parseIso("2025-01-31")).toBe(Date.UTC(2025, 0, 31));
    expect(parseIso("yesterday")).toBeNull();
    expect(parseIso("1738310400000")).toBeNull();
    expect(parseIso("2025-13-45")).toBeNull();
  });

  it("defaults the range to the last 7 days and refuses what does not parse", () => {
    const now = Date.UTC(2025, 5, 10);
    expect(rangeOf(undefined, undefined, now)).toEqual({ from: now - 7 * 86_400_000, to: now });
    expect(rangeOf("2025-06-01T00:00:00Z", undefined, now)).toEqual({ from: Date.UTC(2025, 5, 1), to: now });
    expect(rangeOf("nope", undefined, now)).toEqual({ invalid: "from" });
    expect(rangeOf(undefined, "nope", now)).toEqual({ invalid: "to" });
    expect(rangeOf("2025-06-09T00:00:00Z", "2025-06-01T00:00:00Z", now)).toEqual({ invalid: "from" });
  });
});

describe("trend buckets", () => {
  const H = 3_600_000;
  const D = 24 * H;
  const from = Date.UTC(2025, 0, 1);

  it("is hourly up to 2 days and daily beyond", () => {
    expect(bucketSize({ from, to: from + 2 * D })).toBe(H);
    expect(bucketSize({ from, to: from + 2 * D + 1 })).toBe(D);
  });

  it("counts alerts per class in hourly buckets that start on the hour, zeros included", () => {
    const t = trendOf(
      [
        { start: from + 10 * 60_000, severity: 1 },
        { start: from + 50 * 60_000, severity: 1 },
        { start: from + H + 1, severity: 2 },
        { start: from + 2 * H, severity: 7 },
        { start: from - 1, severity: 1 }, // outside the range
      ],
      { from: from + 5 * 60_000, to: from + 2 * H + 30 * 60_000 },
    );
    expect(t.high).toEqual([
      { time: from, total: 2 },
      { time: from + H, total: 0 },
      { time: from + 2 * H, total: 0 },
    ]);
    expect(t.medium.map((p) => p.total)).toEqual([0, 1, 0]);
    expect(t.low.map((p) => p.total)).toEqual([0, 0, 1]);
  });

  it("uses days starting at UTC midnight for a week", () => {
    const t = trendOf([{ start: from + 3 * D + 5 * H, severity: 3 }], { from: from + 12 * H, to: from + 7 * D });
    expect(t.low).toHaveLength(8);
    expect(t.low[0].time).toBe(from);
    expect(t.low[3]).toEqual({ time: from + 3 * D, total: 1 });
  });
});
