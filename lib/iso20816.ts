/**
 * Vibration severity zones of ISO 20816-3:2022 (industrial machines above 15 kW, 120 to
 * 30,000 RPM), broadband velocity in mm/s RMS over 10-1000 Hz: zone A (newly commissioned), B
 * (unrestricted long-term operation), C (restricted operation), D (damage may occur).
 * The zone boundaries are the standard's Table A.1 (docs/api-tour.md, "Severity"). Pure:
 * used by cm's severity read and by alerting's `zone:` conditions.
 */

export const ISO_20816_3 = "ISO 20816-3";

export type Zone = "A" | "B" | "C" | "D";
export const ZONES: readonly Zone[] = ["A", "B", "C", "D"];

/** 1: large machines, 300 kW to 50 MW; 2: medium machines, 15 kW to 300 kW. */
export type MachineGroup = 1 | 2;
export type Foundation = "rigid" | "flexible";
export const MACHINE_GROUPS: readonly MachineGroup[] = [1, 2];
export const FOUNDATIONS: readonly Foundation[] = ["rigid", "flexible"];

/** The upper limits (mm/s RMS) of zones A, B and C. */
export interface ZoneBoundaries {
  ab: number;
  bc: number;
  cd: number;
}

const TABLE: Record<MachineGroup, Record<Foundation, ZoneBoundaries>> = {
  1: { rigid: { ab: 2.3, bc: 4.5, cd: 7.1 }, flexible: { ab: 3.5, bc: 7.1, cd: 11.0 } },
  2: { rigid: { ab: 1.4, bc: 2.8, cd: 4.5 }, flexible: { ab: 2.3, bc: 4.5, cd: 7.1 } },
};

/** The unit of a velocity tag, the one the zones are read from. */
export const VELOCITY_UNIT = "mm/s";

/** The rated power (kW) from which a machine is of group 1. */
const GROUP_1_FROM_KW = 300;

export interface MachineClass {
  machine_group: MachineGroup;
  foundation: Foundation;
}

function numeric(v: unknown): number | undefined {
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
  return typeof n === "number" && Number.isFinite(n) ? n : undefined;
}

/**
 * The machine's group and foundation from its asset's attributes: `machine_group` and
 * `foundation` when set, else from `kw` (≥ 300 group 1, else group 2, below 15 kW too, which the
 * standard leaves out) and rigid.
 */
export function machineClassOf(attributes: Record<string, unknown> | null | undefined): MachineClass {
  const a = attributes ?? {};
  const group = numeric(a.machine_group);
  const kw = numeric(a.kw);
  const machine_group: MachineGroup = group === 1 || group === 2 ? group : kw !== undefined && kw >= GROUP_1_FROM_KW ? 1 : 2;
  const foundation: Foundation = a.foundation === "flexible" ? "flexible" : "rigid";
  return { machine_group, foundation };
}

export function zoneBoundaries({ machine_group, foundation }: MachineClass): ZoneBoundaries {
  return TABLE[machine_group][foundation];
}

/** The zone of a velocity (mm/s RMS); a value on a boundary is in the upper zone. */
export function zoneOf(velocity: number, b: ZoneBoundaries): Zone {
  if (velocity >= b.cd) return "D";
  if (velocity >= b.bc) return "C";
  if (velocity >= b.ab) return "B";
  return "A";
}

/** The worse of zones; null for none. */
export function worstZone(zones: Iterable<Zone | null>): Zone | null {
  let worst: Zone | null = null;
  for (const z of zones) if (z !== null && (worst === null || ZONES.indexOf(z) > ZONES.indexOf(worst))) worst = z;
  return worst;
}

/** A velocity tag: a condition monitor's tag in mm/s (RMS, 10-1000 Hz), the one a zone is read from. */
export const isVelocityTag = (monitor_type: string, tag_unit: string | null | undefined): boolean =>
  monitor_type === "condition-monitor" && (tag_unit ?? "").trim() === VELOCITY_UNIT;

/** The lowest velocity (mm/s) of a zone. */
export function zoneFloor(zone: Zone, b: ZoneBoundaries): number {
  return zone === "A" ? 0 : zone === "B" ? b.ab : zone === "C" ? b.bc : b.cd;
}

/** `zone:C` (a watcher's threshold) read as its zone; undefined for any other text. */
export function zoneThreshold(threshold: string): Zone | undefined {
  const m = /^zone:([ABCD])$/.exec(threshold.trim());
  return m ? (m[1] as Zone) : undefined;
}
