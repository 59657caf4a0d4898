/** Trigger `severity` (lower is more important) to the alert's class. */
export type SeverityName = "High" | "Medium" | "Low";
export type SeverityKey = "high" | "medium" | "low";

export function severityName(severity: number): SeverityName {
  if (severity <= 1) return "High";
  if (severity === 2) return "Medium";
  return "Low";
}

/** The lower-case key the count and trend objects use. */
export function severityKey(severity: number): SeverityKey {
  return severityName(severity).toLowerCase() as SeverityKey;
}
