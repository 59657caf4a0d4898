/** The spec's texts for the cm service, word for word (interface-spec.md, Errors: CM). */
export const MSG = {
  invalidMonitorId: "Invalid Monitor Id",
  invalidAssetId: "Invalid Asset Id",
  invalidFunctionId: "Invalid Function Id",
  excessInputs: "Excess Inputs",
  invalidInput: (field: string) => `Invalid input: ${field}`,
  /** EXTENSIONS.md conventions: a `from`/`to` that does not parse (the spec's EMS text). */
  invalidDateFormat: "Invalid date format",
  eventStatus: "Under Investigation",
} as const;
