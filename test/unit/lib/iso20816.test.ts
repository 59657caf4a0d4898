import { machineClassOf, worstZone, zoneBoundaries, zoneOf, zoneThreshold, type Foundation, type MachineGroup } from "../../../lib/iso20816";

/** ISO 20816-3 Table A.1 (docs/api-tour.md, "Severity"), written out here rather than read from the module. */
const TABLE: [MachineGroup, Foundation, number, number, number][] = [
  [2, "rigid", 1.4, 2.8, 4.5],
  [2, "flexible", 2.3, 4.5, 7.1],
  [1, "rigid", 2.3, 4.5, 7.1],
  [1, "flexible", 3.5, 7.1, 11.0],
];

describe("ISO 20816-3 zones", () => {
  it.each(TABLE)("group %i %s: boundaries %p, %p, %p, each boundary in the upper zone", (machine_group, foundation, ab, bc, cd) => {
    const b = zoneBoundaries({ machine_group, foundation });
    expect(b).toEqual({ ab, bc, cd });
    expect(zoneOf(0, b)).toBe("A");
    expect(zoneOf(ab - 0.001, b)).toBe("A");
    expect(zoneOf(ab, b)).toBe("B");
    expect(zoneOf(bc - 0.001, b)).toBe("B");
    expect(zoneOf(bc, b)).toBe("C");
    expect(zoneOf(cd - 0.001, b)).toBe("C");
    expect(zoneOf(cd, b)).toBe("D");
    expect(zoneOf(100, b)).toBe("D");
  });

  it("takes the group and foundation from the attributes, else group from kw (300 kW up: 1) and rigid", () => {
    expect(machineClassOf({ machine_group: 1, foundation: "flexible", kw: 20 })).toEqual({ machine_group: 1, foundation: "flexible" });
    expect(machineClassOf({ kw: 300 })).toEqual({ machine_group: 1, foundation: "rigid" });
    expect(machineClassOf({ kw: 299.9 })).toEqual({ machine_group: 2, foundation: "rigid" });
    expect(machineClassOf({ kw: 5 })).toEqual({ machine_group: 2, foundation: "rigid" });
    expect(machineClassOf({})).toEqual({ machine_group: 2, foundation: "rigid" });
    expect(machineClassOf(null)).toEqual({ machine_group: 2, foundation: "rigid" });
  });

  it("names the worst zone, null for none", () => {
    expect(worstZone(["B", null, "D", "A"])).toBe("D");
    expect(worstZone([null])).toBeNull();
    expect(worstZone([])).toBeNull();
  });

  it("reads zone:A to zone:D as a threshold and nothing else", () => {
    expect(zoneThreshold("zone:C")).toBe("C");
    expect(zoneThreshold(" zone:D ")).toBe("D");
    expect(zoneThreshold("zone:E")).toBeUndefined();
    expect(zoneThreshold("zone:c")).toBeUndefined();
    expect(zoneThreshold("4.5")).toBeUndefined();
  });
});
