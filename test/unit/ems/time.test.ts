import { bucketStart, bucketStarts, formatLocal, instantOf, isTimeZone, nextBucket, offsetAt, parseIsoDate } from "../../../services/ems/time";

const BERLIN = "Europe/Berlin";
const iso = (s: string) => Date.parse(s);

describe("parseIsoDate", () => {
  it("reads dates and date-times, UTC unless an offset is given", () => {
    expect(parseIsoDate("2025-03-30")).toBe(iso("2025-03-30T00:00:00Z"));
    expect(parseIsoDate("2025-03-30T10:15:00Z")).toBe(iso("2025-03-30T10:15:00Z"));
    expect(parseIsoDate("2025-03-30T10:15:00")).toBe(iso("2025-03-30T10:15:00Z"));
    expect(parseIsoDate("2025-03-30T10:15:00.250Z")).toBe(iso("2025-03-30T10:15:00.250Z"));
    expect(parseIsoDate("2025-03-30T10:15:00+02:00")).toBe(iso("2025-03-30T08:15:00Z"));
    expect(parseIsoDate("2025-03-30T10:15-0530")).toBe(iso("2025-03-30T15:45:00Z"));
    expect(parseIsoDate("2025-03-30 10:15:00")).toBe(iso("2025-03-30T10:15:00Z"));
    // An unescaped + in a query string arrives as a space.
    expect(parseIsoDate("2025-03-30T10:15:00 02:00")).toBe(iso("2025-03-30T08:15:00Z"));
  });

  it.each(["", "yesterday", "2025-02-30", "2025-13-01", "2025-03-30T25:00:00Z", "1711756800000", "2025-3-30", "2025-03-30T10:15:00+25:00"])(
    "refuses %p",
    (text) => {
      expect(parseIsoDate(text)).toBeUndefined();
    },
  );
});

describe("local buckets across daylight saving (Europe/Berlin)", () => {
  it("knows zones", () => {
    expect(isTimeZone(BERLIN)).toBe(true);
    expect(isTimeZone("Mars/Olympus")).toBe(false);
  });

  it("has a 23-hour day in spring and a 25-hour day in autumn", () => {
    const spring = bucketStarts(iso("2025-03-29T23:00:00Z"), iso("2025-03-31T22:00:00Z"), "daily", BERLIN);
    expect(spring).toEqual([iso("2025-03-29T23:00:00Z"), iso("2025-03-30T22:00:00Z")]);
    expect(spring[1] - spring[0]).toBe(23 * 3_600_000);
    const autumn = bucketStarts(iso("2025-10-25T22:00:00Z"), iso("2025-10-27T23:00:00Z"), "daily", BERLIN);
    expect(autumn).toEqual([iso("2025-10-25T22:00:00Z"), iso("2025-10-26T23:00:00Z")]);
    expect(autumn[1] - autumn[0]).toBe(25 * 3_600_000);
  });

  it("has 23 hourly buckets on the spring day and 25 on the autumn day, labelled in local time", () => {
    const spring = bucketStarts(iso("2025-03-29T23:00:00Z"), iso("2025-03-30T22:00:00Z"), "hourly", BERLIN);
    expect(spring).toHaveLength(23);
    expect(spring.slice(0, 4).map((t) => formatLocal(t, BERLIN))).toEqual([
      "2025-03-30T00:00:00+01:00",
      "2025-03-30T01:00:00+01:00",
      "2025-03-30T03:00:00+02:00",
      "2025-03-30T04:00:00+02:00",
    ]);
    const autumn = bucketStarts(iso("2025-10-25T22:00:00Z"), iso("2025-10-26T23:00:00Z"), "hourly", BERLIN);
    expect(autumn).toHaveLength(25);
    expect(autumn.slice(1, 5).map((t) => formatLocal(t, BERLIN))).toEqual([
      "2025-10-26T01:00:00+02:00",
      "2025-10-26T02:00:00+02:00",
      "2025-10-26T02:00:00+01:00",
      "2025-10-26T03:00:00+01:00",
    ]);
  });

  it("starts weeks on Monday local midnight and months on the 1st, whatever the offset", () => {
    // Sunday 30 March 2025, 12:00 local: its week began Monday 24 March (CET, +01:00).
    expect(formatLocal(bucketStart(iso("2025-03-30T10:00:00Z"), "weekly", BERLIN), BERLIN)).toBe("2025-03-24T00:00:00+01:00");
    expect(formatLocal(nextBucket(iso("2025-03-23T23:00:00Z"), "weekly", BERLIN), BERLIN)).toBe("2025-03-31T00:00:00+02:00");
    const months = bucketStarts(iso("2025-01-15T00:00:00Z"), iso("2025-12-31T00:00:00Z"), "monthly", BERLIN);
    expect(months).toHaveLength(12);
    expect(months.map((t) => formatLocal(t, BERLIN))[0]).toBe("2025-01-01T00:00:00+01:00");
    expect(months.map((t) => formatLocal(t, BERLIN))[3]).toBe("2025-04-01T00:00:00+02:00");
    expect(months.map((t) => formatLocal(t, BERLIN))[10]).toBe("2025-11-01T00:00:00+01:00");
  });

  it("follows zones with half-hour offsets and the southern hemisphere", () => {
    expect(formatLocal(bucketStart(iso("2025-06-01T20:00:00Z"), "daily", "Asia/Kolkata"), "Asia/Kolkata")).toBe("2025-06-02T00:00:00+05:30");
    expect(bucketStart(iso("2025-06-01T20:10:00Z"), "hourly", "Asia/Kolkata")).toBe(iso("2025-06-01T19:30:00Z"));
    // Sydney leaves daylight saving on 6 April 2025: a 25-hour day.
    const d = bucketStarts(iso("2025-04-05T13:00:00Z"), iso("2025-04-07T00:00:00Z"), "daily", "Australia/Sydney");
    expect(d[1] - d[0]).toBe(25 * 3_600_000);
  });

  it("starts a day that begins in a gap when the gap ends", () => {
    // Santiago: clocks went from 00:00 to 01:00 on 7 September 2025; the day began at 01:00 -03:00.
    const start = instantOf(Date.UTC(2025, 8, 7), "America/Santiago");
    expect(formatLocal(start, "America/Santiago")).toBe("2025-09-07T01:00:00-03:00");
    expect(bucketStart(iso("2025-09-07T12:00:00Z"), "daily", "America/Santiago")).toBe(start);
  });
});

describe("offsets", () => {
  it.each(["Europe/Berlin", "America/Santiago", "Australia/Lord_Howe", "Asia/Kolkata", "America/New_York", "Africa/Casablanca", "UTC"])(
    "agree with ICU every 20 minutes of 2024-2026 in %s",
    (tz) => {
      const f = new Intl.DateTimeFormat("en-US", { timeZone: tz, timeZoneName: "longOffset" });
      const icu = (ts: number) => {
        const name = f.formatToParts(new Date(ts)).find((p) => p.type === "timeZoneName")?.value ?? "GMT";
        const m = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
        return m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * 60_000 : 0;
      };
      for (let ts = Date.UTC(2024, 0, 1); ts < Date.UTC(2027, 0, 1); ts += 20 * 60_000) {
        if (offsetAt(ts, tz) !== icu(ts)) throw new Error(`${tz} at ${new Date(ts).toISOString()}: ${offsetAt(ts, tz)} vs ${icu(ts)}`);
      }
    },
  );
});
