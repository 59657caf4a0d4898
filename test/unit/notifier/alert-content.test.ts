/** An alert's message: times in the site's zone with their offset, and the console's link to acknowledge. */
import type { AlertOpened } from "../../../services/alerting/contract";
import { alertLink, alertShortText, alertText } from "../../../services/notifier/alert-notifications";
import { localIso } from "../../../services/notifier/local-time";

const T = Date.UTC(2026, 0, 31, 8, 15, 2, 345);

describe("localIso", () => {
  it.each([
    ["Asia/Kolkata", T, "2026-01-31T13:45:02+05:30"],
    ["Asia/Kathmandu", T, "2026-01-31T14:00:02+05:45"],
    ["America/New_York", T, "2026-01-31T03:15:02-05:00"],
    ["Europe/Berlin", Date.UTC(2026, 6, 1, 0, 0, 0), "2026-07-01T02:00:00+02:00"],
    ["Europe/Berlin", Date.UTC(2026, 0, 1, 0, 0, 0), "2026-01-01T01:00:00+01:00"],
    [undefined, T, "2026-01-31T08:15:02+00:00"],
    ["Not/AZone", T, "2026-01-31T08:15:02+00:00"],
  ])("%s", (zone, ms, expected) => {
    expect(localIso(ms, zone)).toBe(expected);
  });
});

const alert: AlertOpened = {
  alert_id: "0d9e8f7a-6b5c-4d3e-8f1a-2b3c4d5e6f70",
  watcher_id: "w",
  watcher_name: "Pump bearings",
  trigger_id: "t1",
  trigger_name: "Bearing hot",
  severity: "High",
  start_time: "2026-01-31T08:15:02+00:00",
  start_ts: T,
  site: "Pune Works",
  plant: "Plant 1",
  site_id: "s",
  plant_id: "p",
  timezone: "Asia/Kolkata",
  function: "Cooling",
  asset: "Pump P-101",
  monitor: "Bearing DE",
  tag: "Temperature",
  value: 93.5,
  threshold: 80,
  comparison: ">=",
  unit: "C",
  conditions: [],
  notifyTo: { email: true, sms: false, whatsapp: false, users: [] },
};

describe("alert messages", () => {
  const content = { timeZone: "Asia/Kolkata", publicUrl: "https://ims.example.com" };

  it("the email shows the start in the site's zone and says what to do, with the link", () => {
    const text = alertText(alert, content);
    expect(text).toContain("Started: 2026-01-31T13:45:02+05:30 (Asia/Kolkata)");
    expect(text).toContain("What to do: check the asset now, then acknowledge the alert");
    expect(text.split("\n").at(-1)).toBe("Acknowledge: https://ims.example.com/#/alerts/0d9e8f7a-6b5c-4d3e-8f1a-2b3c4d5e6f70");
  });

  it("the phone text too", () => {
    expect(alertShortText(alert, content)).toBe(
      "High alert: Bearing hot. Pune Works / Plant 1 / Pump P-101 / Bearing DE: Temperature 93.5 C (threshold >= 80 C) since 2026-01-31T13:45:02+05:30. " +
        "Acknowledge: https://ims.example.com/#/alerts/0d9e8f7a-6b5c-4d3e-8f1a-2b3c4d5e6f70",
    );
  });

  it("a site without a known zone reads UTC, named as no zone", () => {
    expect(alertText(alert, { timeZone: undefined, publicUrl: "http://localhost:3000" })).toContain("Started: 2026-01-31T08:15:02+00:00\n");
    expect(alertLink("http://localhost:3000", "abc")).toBe("http://localhost:3000/#/alerts/abc");
  });
});
