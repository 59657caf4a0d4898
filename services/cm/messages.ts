/** The spec's texts for the cm service, word for word (interface-spec.md, Errors: CM). */
export const MSG = {
  invalidMonitorId: "Invalid Monitor Id",
  invalidAssetId: "Invalid Asset Id",
  invalidFunctionId: "Invalid Function Id",
  excessInputs: "Excess Inputs",
  invalidInput: (field: string) => `Invalid input: ${field}`,
  eventStatus: "Under Investigation",
} as const;
