/**
 * Colours of CM tag values and the status of an asset.
 *
 * Thresholds are ascending limits (ISO 10816-style zones): below `operational` green, below
 * `caution` yellow, below `warning` orange, else red. The spec sends them as strings; a limit
 * that is absent or not a number is skipped, and a tag with no usable limit is grey.
 */
export type Color = "green" | "yellow" | "orange" | "red" | "grey";
export type AssetStatus = "normal" | "warning" | "critical";

export interface Thresholds {
  operational?: unknown;
  caution?: unknown;
  warning?: unknown;
}

function limit(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (typeof v === "string" && v.trim() !== "") {
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

export function colorOf(value: number | null | undefined, thresholds: Thresholds | null | undefined): Color {
  const t = thresholds ?? {};
  const operational = limit(t.operational);
  const caution = limit(t.caution);
  const warning = limit(t.warning);
  if (operational === undefined && caution === undefined && warning === undefined) return "grey";
  if (typeof value !== "number" || !Number.isFinite(value)) return "grey";
  if (warning !== undefined && value >= warning) return "red";
  if (caution !== undefined && value >= caution) return "orange";
  if (operational !== undefined && value >= operational) return "yellow";
  return "green";
}

/** Orange (past caution) is a warning, red (past warning) is critical; green, yellow and grey are normal. */
export function statusOf(colors: Iterable<Color>): AssetStatus {
  let status: AssetStatus = "normal";
  for (const c of colors) {
    if (c === "red") return "critical";
    if (c === "orange") status = "warning";
  }
  return status;
}

/** Event severity as alerting counts it (1 High, 2 Medium). */
export function severityOf(status: AssetStatus): number {
  return status === "critical" ? 1 : 2;
}
