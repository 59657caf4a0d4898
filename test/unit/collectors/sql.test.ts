/** The SQL collector's pure pieces (docs/collectors.md): settings, the page query, positions across pages, times. */
import { fingerprintOf, pageKey, pageOf, readingsOf, type SourceRow } from "../../../services/collectors/pages";
import { columnsOf, pageQuery, quoteIdent, quoteTable, SettingsError, sqlSourceOf } from "../../../services/collectors/sql-source";
import { epochMsOf } from "../../../services/collectors/time-value";

const settings = (config: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  server_address: "db.plant.example",
  port: 5432,
  username: "reader",
  password: 1234,
  config: { database: "plant", table: "line", time_field: "ts", last_collected: "none", ...config },
  ...extra,
});

const row = (time: string, ...values: unknown[]): SourceRow => ({ time, values, fingerprint: fingerprintOf(time, values) });

describe("a SQL source's settings", () => {
  it("reads op 50's settings: dialect by port, frequency in its unit, the password as text", () => {
    const s = sqlSourceOf(settings({ frequency: 5, frequency_unit: "minutes", ignore_columns: ["b"] }));
    expect(s.target).toEqual({ dialect: "postgres", host: "db.plant.example", port: 5432, user: "reader", password: "1234" });
    expect(s.everyMs).toBe(300_000);
    expect(s.operator).toBe("AND");
    expect(sqlSourceOf(settings({}, { port: 3306 })).target.dialect).toBe("mysql");
    expect(sqlSourceOf(settings({}, { port: 1433 })).target.dialect).toBe("mssql");
    expect(sqlSourceOf(settings({ frequency: 2, frequency_unit: "hours" })).everyMs).toBe(7_200_000);
  });

  it("names the setting that is wrong", () => {
    const wrong = (s: Record<string, unknown>) => {
      try {
        sqlSourceOf(s);
        return null;
      } catch (err) {
        return err instanceof SettingsError ? err.message : String(err);
      }
    };
    expect(wrong(settings({ table: "" }))).toBe("config.table");
    expect(wrong(settings({ frequency_unit: "fortnights" }))).toBe("config.frequency_unit");
    expect(wrong(settings({ conditions: [{ column_name: "a", comparison: "; DROP TABLE x", threshold: 1 }] }))).toBe("config.conditions[0]");
    expect(wrong(settings({ time_field_format: "%Q" }))).toBe("config.time_field_format");
    expect(wrong(settings({}, { port: 0 }))).toBe("port");
  });
});

describe("the page query", () => {
  it("quotes every name a user gave and passes every value as a parameter", () => {
    expect(quoteIdent("postgres", 'a"b')).toBe('"a""b"');
    expect(quoteIdent("mysql", "a`b")).toBe("`a``b`");
    expect(quoteIdent("mssql", "a]b")).toBe("[a]]b]");
    expect(quoteTable("postgres", "plant.line")).toBe('"plant"."line"');
    const s = sqlSourceOf(
      settings({
        time_field: 'ts"; --',
        conditions: [
          { column_name: "status", comparison: "==", threshold: "ok'; DROP TABLE line; --" },
          { column_name: "temp", comparison: ">", threshold: 20 },
        ],
        operator: "OR",
      }),
    );
    const q = pageQuery(s, ["temp"], { last: "2026-01-01 10:00:00", seen: { abc: 1 } }, 5);
    expect(q.sql).toBe(
      `SELECT "ts""; --" AS c0, "temp" AS c1 FROM "public"."line" WHERE "ts""; --" IS NOT NULL AND "ts""; --" >= $1 AND ("status" = $2 OR "temp" > $3) ORDER BY "ts""; --" LIMIT 5`,
    );
    expect(q.params).toEqual(["2026-01-01 10:00:00", "ok'; DROP TABLE line; --", 20]);
  });

  it("reads strictly newer rows from a position a user set, and MySQL and SQL Server in their own words", () => {
    const my = sqlSourceOf(settings({}, { port: 3306 }));
    expect(pageQuery(my, ["a"], { last: "5", seen: {} }, 3)).toEqual({
      sql: "SELECT `ts` AS c0, `a` AS c1 FROM `line` WHERE `ts` IS NOT NULL AND `ts` > ? ORDER BY `ts` LIMIT 3",
      params: ["5"],
    });
    const ms = sqlSourceOf(settings({}, { port: 1433 }));
    expect(pageQuery(ms, ["a"], { last: null, seen: {} }, 3).sql).toBe("SELECT TOP (3) [ts] AS c0, [a] AS c1 FROM [dbo].[line] WHERE [ts] IS NOT NULL ORDER BY [ts]");
  });

  it("reads no ignored column and not the time field as a reading", () => {
    const s = sqlSourceOf(settings({ ignore_columns: ["flow"] }));
    const tag = (column_name: string, tag_id: string) => ({ column_name, address: "", monitor_id: "m", tag_id });
    expect([...columnsOf(s, [tag("temp", "t"), tag("flow", "f"), tag("ts", "x"), tag("temp", "t2")])]).toEqual([["temp", [tag("temp", "t"), tag("temp", "t2")]]]);
  });
});

describe("positions across pages", () => {
  it("stores rows sharing a time at a page's edge once each, identical ones as many times as they are", () => {
    const all = [row("1", 1), row("2", 2), row("2", 3), row("2", 3), row("2", 4), row("3", 5)];
    const first = pageOf(all.slice(0, 3), { last: null, seen: {} });
    expect(first.fresh).toHaveLength(3);
    expect(first.to.last).toBe("2");
    // The next page reads from "2" on again (>=): the two stored there are left out, the rest kept.
    const second = pageOf(all.slice(1), first.to);
    expect(second.fresh.map((r) => r.values[0])).toEqual([3, 4, 5]);
    expect(second.to).toEqual({ last: "3", seen: { [all[5]!.fingerprint]: 1 } });
    // Nothing newer: the position stays.
    expect(pageOf([all[5]!], second.to)).toEqual({ fresh: [], to: second.to });
    // A row inserted later at the last time is still read.
    expect(pageOf([all[5]!, row("3", 6)], second.to).fresh.map((r) => r.values[0])).toEqual([6]);
  });

  it("keys a page by its pipeline, epoch and positions, whatever order its fingerprints are in", () => {
    const a = pageKey("p", 0, { last: "1", seen: { x: 1, y: 2 } }, { last: "2", seen: {} });
    expect(a).toBe(pageKey("p", 0, { last: "1", seen: { y: 2, x: 1 } }, { last: "2", seen: {} }));
    expect(a).not.toBe(pageKey("q", 0, { last: "1", seen: { x: 1, y: 2 } }, { last: "2", seen: {} }));
    // Collected again from an earlier point (a new epoch): the same page is a new one.
    expect(a).not.toBe(pageKey("p", 1, { last: "1", seen: { x: 1, y: 2 } }, { last: "2", seen: {} }));
    expect(a.length).toBeLessThanOrEqual(255);
  });

  it("turns columns into readings: NULL none, text that is no number unreadable, Booleans 1 and 0", () => {
    const tags = [[{ column_name: "a", address: "", monitor_id: "m", tag_id: "a" }], [{ column_name: "b", address: "", monitor_id: "m", tag_id: "b" }]];
    const out = readingsOf([row("1700000000", 1.5, null), row("1700000001", "2.5", "high"), row("1700000002", true, false)], tags, { timeZone: "UTC", utc: false });
    expect(out.readings).toEqual([
      { monitor_id: "m", tag_id: "a", ts: 1700000000000, value: 1.5 },
      { monitor_id: "m", tag_id: "a", ts: 1700000001000, value: 2.5 },
      { monitor_id: "m", tag_id: "a", ts: 1700000002000, value: 1 },
      { monitor_id: "m", tag_id: "b", ts: 1700000002000, value: 0 },
    ]);
    expect(out.unreadable).toBe(1);
  });
});

describe("time values", () => {
  it("reads a time without a zone in the site's zone, one with a zone as it says", () => {
    expect(epochMsOf("2026-01-15 10:00:00", { timeZone: "Europe/Paris" })).toBe(Date.UTC(2026, 0, 15, 9));
    expect(epochMsOf("2026-07-15 10:00:00.250", { timeZone: "Europe/Paris" })).toBe(Date.UTC(2026, 6, 15, 8, 0, 0, 250));
    expect(epochMsOf("2026-01-15 10:00:00+00", { timeZone: "Europe/Paris" })).toBe(Date.UTC(2026, 0, 15, 10));
    expect(epochMsOf("2026-01-15T10:00:00-05:30", { timeZone: "UTC" })).toBe(Date.UTC(2026, 0, 15, 15, 30));
    expect(epochMsOf("2026-01-15 10:00:00", { timeZone: "Europe/Paris", utc: true })).toBe(Date.UTC(2026, 0, 15, 10));
  });

  it("reads epochs and the formats time_field_format names", () => {
    expect(epochMsOf(1700000000, { timeZone: "UTC" })).toBe(1700000000000);
    expect(epochMsOf("1700000000123", { timeZone: "UTC" })).toBe(1700000000123);
    expect(epochMsOf("1700000000", { timeZone: "UTC", format: "epoch_ms" })).toBe(1700000000);
    expect(epochMsOf("15/01/2026 10:00", { timeZone: "UTC", format: "%d/%m/%Y %H:%M" })).toBe(Date.UTC(2026, 0, 15, 10));
    expect(epochMsOf("15-Jan-26 10:00:00 +0100", { timeZone: "UTC", format: "%d-%b-%y %H:%M:%S %z" })).toBe(Date.UTC(2026, 0, 15, 9));
    expect(epochMsOf("yesterday", { timeZone: "UTC" })).toBeNull();
    expect(epochMsOf("2026-13-01 00:00:00", { timeZone: "UTC" })).toBeNull();
  });
});
