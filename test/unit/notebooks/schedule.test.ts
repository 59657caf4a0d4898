import { cronPattern, dueSlot, parsePeriod, parseTime, parseUntil } from "../../../services/notebooks/schedule";

const at = (iso: string) => Date.parse(iso);

describe("schedule parsing", () => {
  it("reads until as UTC and refuses what is not a real date", () => {
    expect(parseUntil("2030-01-31 23:59")).toBe(at("2030-01-31T23:59:00Z"));
    expect(parseUntil("2030-02-30 10:00")).toBeUndefined();
    expect(parseUntil("2030-01-31T10:00")).toBeUndefined();
    expect(parseUntil("2030-01-31 24:00")).toBeUndefined();
  });

  it("reads time HH:MM and period as a day of the week, none meaning every day", () => {
    expect(parseTime("07:05")).toEqual([7, 5]);
    expect(parseTime("7:05")).toBeUndefined();
    expect(parsePeriod(undefined)).toBeNull();
    expect(parsePeriod("")).toBeNull();
    expect(parsePeriod("monday")).toBe("Monday");
    expect(parsePeriod("Fri")).toBe("Friday");
    expect(parsePeriod("someday")).toBeUndefined();
  });

  it("makes cron patterns in UTC", () => {
    expect(cronPattern({ period: null, time: "07:05" })).toBe("5 7 * * *");
    expect(cronPattern({ period: "Monday", time: "23:30" })).toBe("30 23 * * 1");
  });
});

describe("dueSlot", () => {
  const daily = { period: null, time: "10:30", until: "2030-01-10 10:30" } as const;
  const since = at("2030-01-01T00:00:00Z");

  it("is the latest slot at or before now", () => {
    expect(dueSlot(daily, since, at("2030-01-05T10:30:00Z"))).toBe(at("2030-01-05T10:30:00Z"));
    expect(dueSlot(daily, since, at("2030-01-05T12:00:00Z"))).toBe(at("2030-01-05T10:30:00Z"));
    expect(dueSlot(daily, since, at("2030-01-05T10:29:59Z"))).toBe(at("2030-01-04T10:30:00Z"));
  });

  it("ignores slots from before the schedule was set", () => {
    expect(dueSlot(daily, at("2030-01-05T10:31:00Z"), at("2030-01-05T12:00:00Z"))).toBeNull();
  });

  it("counts a slot exactly at until, and none after it", () => {
    expect(dueSlot(daily, since, at("2030-01-20T00:00:00Z"))).toBe(at("2030-01-10T10:30:00Z"));
  });

  it("runs only on the period's weekday", () => {
    // 2030-01-07 is a Monday.
    const weekly = { period: "Monday", time: "08:00", until: "2030-12-31 00:00" } as const;
    expect(dueSlot(weekly, since, at("2030-01-09T09:00:00Z"))).toBe(at("2030-01-07T08:00:00Z"));
  });
});
