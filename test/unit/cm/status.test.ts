import { colorOf, severityOf, statusOf } from "../../../services/cm/status";

const T = { operational: "2.8", caution: "7.1", warning: "11" };

describe("colours from thresholds", () => {
  it.each([
    [0, "green"],
    [2.79, "green"],
    [2.8, "yellow"],
    [7.09, "yellow"],
    [7.1, "orange"],
    [10.99, "orange"],
    [11, "red"],
    [500, "red"],
  ])("%p is %s", (value, color) => {
    expect(colorOf(value as number, T)).toBe(color);
  });

  it("is grey without usable thresholds or without a value", () => {
    expect(colorOf(5, null)).toBe("grey");
    expect(colorOf(5, {})).toBe("grey");
    expect(colorOf(5, { operational: "", caution: "n/a" })).toBe("grey");
    expect(colorOf(null, T)).toBe("grey");
  });

  it("uses the limits that are there", () => {
    expect(colorOf(5, { warning: "4" })).toBe("red");
    expect(colorOf(3, { warning: "4" })).toBe("green");
    expect(colorOf(3, { caution: 2 })).toBe("orange");
  });
});

describe("asset status", () => {
  it("is normal for green, yellow and grey, warning past caution, critical past warning", () => {
    expect(statusOf([])).toBe("normal");
    expect(statusOf(["green", "yellow", "grey"])).toBe("normal");
    expect(statusOf(["green", "orange"])).toBe("warning");
    expect(statusOf(["orange", "red", "green"])).toBe("critical");
    expect(severityOf("critical")).toBe(1);
    expect(severityOf("warning")).toBe(2);
  });
});
