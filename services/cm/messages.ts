/** The spec's texts for the cm service, word for word (its CM errors). */
export const MSG = {
  invalidMonitorId: "Invalid Monitor Id",
  invalidAssetId: "Invalid Asset Id",
  invalidFunctionId: "Invalid Function Id",
  excessInputs: "Excess Inputs",
  invalidInput: (field: string) => `Invalid input: ${field}`,
  /** A `from`/`to` that does not parse (the spectrum timestamps read), in the words the spec gives EMS. */
  invalidDateFormat: "Invalid date format",
  eventStatus: "Under Investigation",
  /** An HTTP operation reached without a caller (the gateway always sends one). */
  invalidCredentials: "Invalid credentials",
} as const;
